"""The public Python API: each capability's package exports its entry points (lazily, PEP 562), every
exported name resolves, and `tempanon --help` stays light (no pandas)."""

import importlib
import subprocess
import sys

import pytest

PACKAGES = {
    "tempanon.kanon": ["kanonymize", "KAnonResult"],
    "tempanon.temporal": ["anonymize_timestamped", "anonymize_timestamped_file", "read_audit", "TimestampedResult"],
    "tempanon.stream": ["anonymize_stream", "StreamResult", "StreamPublisher"],
    "tempanon.timeseries": ["kp_anonymize", "KPResult"],
}


@pytest.mark.parametrize("package", PACKAGES)
def test_every_export_resolves(package):
    mod = importlib.import_module(package)
    assert set(PACKAGES[package]) <= set(mod.__all__), package  # the documented entry points are exported
    for name in mod.__all__:
        obj = getattr(mod, name)
        assert getattr(obj, "__name__", name) == name or not callable(obj), (package, name)
    assert callable(mod.__dict__[PACKAGES[package][0]])
    with pytest.raises(AttributeError):
        getattr(mod, "no_such_name")


def test_cli_help_does_not_import_pandas():
    code = "import sys; from tempanon.cli import app; print('pandas' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"

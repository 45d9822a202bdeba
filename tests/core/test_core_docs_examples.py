"""The Python examples of docs/stream.md, docs/timeseries.md and docs/temporal.md run as written (each
file's blocks in order, in one namespace, as a reader would paste them), on the bundled samples: the
docs name them by file name or source path; the test maps those to the installed package's samples."""

import re
from importlib import resources
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
SAMPLES = str(resources.files("tempanon") / "samples")
PATHS = {
    '"src/tempanon/samples/': f'"{SAMPLES}/',
    '"use_of_force_sample.csv"': repr(f"{SAMPLES}/stream/use_of_force_sample.csv"),
}


@pytest.mark.parametrize("doc", ["stream.md", "timeseries.md", "temporal.md"])
def test_python_examples_of_the_docs_run(doc, tmp_path, monkeypatch):
    blocks = re.findall(r"```python\n(.*?)```", (DOCS / doc).read_text(), re.S)
    assert blocks, f"docs/{doc} has no Python example any more"
    monkeypatch.chdir(tmp_path)
    ns: dict = {}
    for i, block in enumerate(blocks):
        code = block
        for old, new in PATHS.items():
            code = code.replace(old, new)
        exec(compile(code, f"docs/{doc} block {i + 1}", "exec"), ns)
    assert not list(tmp_path.iterdir())  # the examples write nothing

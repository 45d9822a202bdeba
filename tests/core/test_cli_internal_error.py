"""An unexpected error (a bug) ends the command with exit status 5 and its traceback, not Python's status 1,
which is tempanon's 'no anonymization satisfies the request' (found in the uatb acceptance pass: a column
named 'note[/b]' made kanon's status line raise after the release was written, and the run exited 1)."""

import sys

import pytest


def test_an_unexpected_error_exits_5(monkeypatch, capsys, tmp_path):
    import tempanon.kanon.command as command
    from tempanon import cli

    def boom(*args, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(command, "run_api", boom)  # the kanon command's first call into the API
    monkeypatch.setattr(sys, "argv", ["tempanon", "kanon", "in.csv", "--qi", "a", "--hierarchies", str(tmp_path),
                                      "--k", "2", "--out", str(tmp_path / "o.csv")])  # fmt: skip
    with pytest.raises(SystemExit) as e:
        cli.main()
    assert e.value.code == 5
    err = capsys.readouterr().err
    assert "RuntimeError: a bug" in err and "tempanon failed unexpectedly" in err

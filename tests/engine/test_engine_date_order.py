"""Day-first numeric dates on every engine of ``timestamped``: DuckDB and Spark read the file in place
but parse the time column's distinct values on the driver with the same order
(:func:`tempanon.temporal.parse.parse_timestamps` with ``date_order``), so they release the same
instants as numpy: ``05/03/2023`` is 2023-03-05 everywhere, an undecided column gives the same note
(its line in file order), and a contradicted ``--date-order`` is refused (exit 2) before anything is
written."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from .test_engine_temporal import _cli


def _input(tmp_path, ambiguous=False):
    """60 rows, 20 respondents, each day held by 3 of them; day first (some first part > 12, dots,
    times of day), or every value with both parts <= 12 (``ambiguous``)."""
    rows, expected = [], []
    for i in range(60):
        k = i // 3
        d = dt.date(2023, 1 + k % 12, 1 + (k * 5) % (12 if ambiguous else 28))
        if ambiguous:
            text = d.strftime("%d/%m/%Y")
        else:
            text = d.strftime("%d.%m.%Y") if i % 5 == 0 else d.strftime("%d/%m/%Y") + (" 10:30" if i % 7 == 0 else "")
        rows.append(f"p{i % 20},{'FM'[i % 2]},{text}")
        expected.append(d.isoformat())
    path = tmp_path / ("amb.csv" if ambiguous else "uk.csv")
    path.write_text("pid,sex,visit\n" + "\n".join(rows) + "\n")
    return path, sorted(expected)


def _release(out) -> list[str]:
    """The released visit column, sorted (a Spark release's part files joined)."""
    if out.is_dir():
        lines = [line for p in sorted(out.glob("part-*")) for line in p.read_text().splitlines()[1:]]
    else:
        lines = out.read_text().splitlines()[1:]
    return sorted(lines)


def _run(tmp_path, backend, path, *extra):
    out, summ = tmp_path / f"{backend}-out.csv", tmp_path / f"{backend}-summary.json"
    r = _cli(["timestamped", str(path), "--uid", "pid", "--time", "visit", "--k", "3", "--granularities", "day,month",
              "--engine", backend, "--out", str(out), "--summary", str(summ), *extra])  # fmt: skip
    return r, out, summ


def test_day_first_released_with_the_same_instants(tmp_path, backend):
    path, expected = _input(tmp_path)
    r, out, summ = _run(tmp_path, backend, path)
    assert r.exit_code == 0, r.output
    assert _release(out) == expected  # e.g. 05/03/2023 -> 2023-03-05, 02.03.2023 -> 2023-03-02
    s = json.loads(summ.read_text())
    assert s["granularity"] == "day" and s["date_order"] == "day first"


def test_explicit_day_order_and_the_undecided_note(tmp_path, backend):
    path, expected = _input(tmp_path, ambiguous=True)
    r, out, _ = _run(tmp_path, backend, path, "--date-order", "day")
    assert r.exit_code == 0, r.output
    assert _release(out) == expected
    r, out, summ = _run(tmp_path, backend, path)
    assert r.exit_code == 0, r.output
    note = ("column 'visit': every numeric date could be day or month first: read month first, line 5 ('06/02/2023') "
            "as 2 June; pass --date-order day if it is 6 February")
    assert [m for m in json.loads(summ.read_text())["messages"] if "day or month first" in m] == [note]
    assert note in " ".join(r.output.split())
    month_first = sorted(f"{e[:4]}-{e[8:]}-{e[5:7]}" for e in expected)  # dd/mm/yyyy read as mm/dd/yyyy
    assert _release(out) == month_first != expected


def test_contradicted_order_refused_before_anything_is_written(tmp_path, backend):
    path, _ = _input(tmp_path)
    r, out, summ = _run(tmp_path, backend, path, "--date-order", "month")
    assert r.exit_code == 2, r.output
    # (dots on line 2 are a convention, not a contradiction: the first value that cannot be month first)
    assert "column 'visit', line 11: date '16/04/2023' cannot be month first" in " ".join(r.output.split())
    assert not out.exists() and not summ.exists()

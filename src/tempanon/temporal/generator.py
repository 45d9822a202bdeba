"""Synthetic hospital-exam relations like the paper's Table 1 (patient, address, exam time, exam).

:func:`hospital_exams` draws patients (respondents) with an address, zip code, gender and age, and
gives each a controllable number of exams (tuples) at minute resolution, mostly in weekday
working hours, spread around a per-patient episode. Fully vectorized (no loop per tuple).
:func:`example_exams` is the small relation used to illustrate Example 3 (see docs/temporal.md).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tempanon.errors import InputError

EXAMS = np.array(["blood test", "x-ray", "MRI", "CT scan", "ECG", "ultrasound", "biopsy", "endoscopy"], dtype=object)


def hospital_exams(
    n_patients: int = 1000,
    tuples_per_patient: float | tuple[int, int] = 5,
    *,
    start: str = "2005-01-01",
    end: str = "2007-01-01",
    n_addresses: int | None = None,
    n_zips: int = 50,
    seed: int = 0,
    episode_days: float = 30.0,
) -> pd.DataFrame:
    """A hospital-exam table with columns PATIENT, ADDRESS, ZIP, GENDER, AGE, TIME, EXAM.

    ``tuples_per_patient``: a mean (each patient gets ``1 + Poisson(mean - 1)`` exams) or an
    inclusive range ``(lo, hi)`` drawn uniformly. Exam times are minute-resolution ISO strings:
    each patient has an episode start, exams follow within about ``episode_days`` (exponential
    gaps), on weekdays 08:00-18:00 for 90% of them.
    """
    if n_patients < 1:
        raise InputError("n_patients must be at least 1")
    rng = np.random.default_rng(seed)
    if isinstance(tuples_per_patient, tuple):
        lo, hi = tuples_per_patient
        if not 1 <= lo <= hi:
            raise InputError("tuples_per_patient range must satisfy 1 <= lo <= hi")
        counts = rng.integers(lo, hi + 1, n_patients)
    else:
        if tuples_per_patient < 1:
            raise InputError("tuples_per_patient must be at least 1")
        counts = 1 + rng.poisson(tuples_per_patient - 1, n_patients)
    n_addresses = n_addresses or max(1, n_patients // 2)
    t0, t1 = pd.Timestamp(start).value // 10**9, pd.Timestamp(end).value // 10**9
    if t1 <= t0:
        raise InputError("end must be after start")
    addr = rng.integers(0, n_addresses, n_patients)
    zips = (10000 + (addr * 7919) % n_zips * 37).astype(str)
    gender = np.where(rng.random(n_patients) < 0.5, "F", "M").astype(object)
    age = np.clip(rng.normal(50, 18, n_patients).round(), 0, 99).astype(int)
    episode = rng.integers(t0, max(t0 + 1, t1 - int(episode_days * 86400)), n_patients)
    pid = np.repeat(np.arange(n_patients), counts)
    n = len(pid)
    offs = rng.exponential(episode_days * 86400 / np.maximum(counts, 1)[pid] , n)
    # cumulative offsets within each patient: exams in time order
    csum = np.cumsum(offs)
    first = np.r_[0, np.cumsum(counts)[:-1]]
    csum -= np.repeat(csum[first] - offs[first], counts)
    t = episode[pid] + csum.astype(np.int64)
    day, _ = np.divmod(t, 86400)
    wd = (day + 3) % 7
    office = rng.random(n) < 0.9
    day = np.where(office & (wd >= 5), day + (7 - wd), day)  # weekend -> next Monday
    minute = np.where(office, rng.integers(8 * 60, 18 * 60, n), rng.integers(0, 24 * 60, n))
    t = np.minimum(day * 86400 + minute * 60, t1 - 60)
    return pd.DataFrame({
        "PATIENT": np.char.add("P", pid.astype(str)).astype(object),
        "ADDRESS": np.char.add("Addr", addr[pid].astype(str)).astype(object),
        "ZIP": zips[pid].astype(object),
        "GENDER": gender[pid],
        "AGE": age[pid],
        "TIME": pd.to_datetime(t, unit="s").strftime("%Y-%m-%dT%H:%M"),
        "EXAM": EXAMS[rng.integers(0, len(EXAMS), n)],
    })  # fmt: skip


def paper_table3() -> pd.DataFrame:
    """Table 3 of Mascetti et al. (TIME 2006), verbatim: a relation that is not 2-anonymous
    (Example 1). Its generalizations by week and month are Tables 4 and 5 (Examples 2-3)."""
    rows = [("u1", "q1", "2006-01-03", "d0"), ("u2", "q1", "2006-01-03", "d1"), ("u1", "q1", "2006-01-11", "d2"),
            ("u4", "q1", "2006-01-12", "d3"), ("u5", "q2", "2006-02-07", "d4"), ("u6", "q2", "2006-02-10", "d5")]
    return pd.DataFrame(rows, columns=["UID", "Q", "T", "data"])


def example_exams() -> pd.DataFrame:
    """A small exam relation (patient, address, day, exam) in the style of the paper's Table 3,
    showing the remark after Example 3: the order of week and month under ``<=_c`` depends on R,
    and month wins when most timestamps are in the same week but different months.

    Addr1's two patients are examined on both sides of five month ends (a week merges the two
    days, a month does not); Addr2's patients on five December days in five different weeks (a
    month merges them, a week does not); Addr3's two patients on consecutive days (so the days
    are not 2-anonymous). With k=2 every class has 2 respondents (gen_m 2) and week gives gen_s
    5*2 + 5*2 + 2 = 22, month 10*2 + 2 + 2 = 24: month is the least generalization; quarter gives
    gen_s 12, so among week and quarter, week is.
    """
    rows = []
    for d in ["2005-01-31", "2005-02-01", "2005-03-31", "2005-04-01", "2005-06-30", "2005-07-01",
              "2005-08-31", "2005-09-01", "2005-11-30", "2005-12-01"]:  # fmt: skip
        rows += [("p1", "Addr1", d, "Ex1"), ("p2", "Addr1", d, "Ex2")]
    for d in ["2005-12-01", "2005-12-05", "2005-12-12", "2005-12-19", "2005-12-26"]:
        rows += [("p3", "Addr2", d, "Ex3"), ("p4", "Addr2", d, "Ex1")]
    rows += [("p5", "Addr3", "2005-12-06", "Ex2"), ("p6", "Addr3", "2005-12-07", "Ex5")]
    return pd.DataFrame(rows, columns=["Patient", "Address", "Date", "Exam"])

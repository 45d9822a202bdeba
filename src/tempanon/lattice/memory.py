"""``memory_limit`` (``--memory-limit``): what it means for each engine, checked before anything is read.

* **duckdb**: DuckDB's ``memory_limit`` setting; beyond it DuckDB spills to a private temporary
  directory (:func:`tempanon.lattice.source_duckdb.open_duckdb`).
* **spark**: the heap of the *local* Spark driver tempanon starts (``spark.driver.memory``); refused
  with a cluster master (a cluster's memory is its own configuration) and when this process already
  runs a Spark session with another driver memory (the JVM's heap is fixed when it starts).
* **numpy**: refused. The table is held in memory by pandas and nothing bounds it; a limit that is
  accepted and ignored would be a promise not kept.
* **auto**: a memory limit asks for bounded memory, so ``auto`` means DuckDB when one is given.

The text is DuckDB's format: a number and a unit, ``KB``/``MB``/``GB``/``TB`` (powers of 1000, also
``K``, ``M``, ``G``, ``T`` and the words) or ``KiB``/``MiB``/``GiB``/``TiB`` (powers of 1024), or a
percentage of the machine's memory (``80%``).
"""

from __future__ import annotations

import os
import re

from tempanon.errors import InputError

_UNITS = {
    "b": 1, "byte": 1, "bytes": 1,
    "k": 1000, "kb": 1000, "kilobyte": 1000, "kilobytes": 1000, "kib": 1024,
    "m": 1000**2, "mb": 1000**2, "megabyte": 1000**2, "megabytes": 1000**2, "mib": 1024**2,
    "g": 1000**3, "gb": 1000**3, "gigabyte": 1000**3, "gigabytes": 1000**3, "gib": 1024**3,
    "t": 1000**4, "tb": 1000**4, "terabyte": 1000**4, "terabytes": 1000**4, "tib": 1024**4,
}  # fmt: skip
_PATTERN = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]+|%)\s*$")
SPARK_MIN_DRIVER_BYTES = 512 * 1024**2
"""The smallest driver heap tempanon starts Spark with (Spark refuses to start below ~450 MiB)."""


def machine_memory() -> int | None:
    """Physical memory of this machine in bytes (``None`` where the platform does not say)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        return None


def parse_memory_limit(text: str) -> int:
    """Bytes of a memory limit such as ``"4GB"``, ``"512 MiB"``, ``"1.5GB"`` or ``"80%"``; a clear
    :class:`InputError` for anything else (no unit, an unknown unit, zero)."""
    m = _PATTERN.match(str(text))
    if m is None:
        raise InputError(f"--memory-limit {text!r}: expected a number and a unit, e.g. 4GB, 512MiB or 80%")
    value, unit = float(m.group(1)), m.group(2).lower()
    if unit == "%":
        total = machine_memory()
        if total is None:
            raise InputError(f"--memory-limit {text!r}: this platform does not report its memory; give a size, e.g. 4GB")
        if not 0 < value <= 100:
            raise InputError(f"--memory-limit {text!r}: a percentage must be in (0, 100]")
        size = int(total * value / 100)
    elif unit in _UNITS:
        size = int(value * _UNITS[unit])
    else:
        raise InputError(f"--memory-limit {text!r}: unknown unit {m.group(2)!r}; use KB, MB, GB, TB, KiB, MiB, GiB, TiB or %")
    if size <= 0:
        raise InputError(f"--memory-limit {text!r} is zero")
    return size


def spark_driver_memory(text: str) -> str:
    """``spark.driver.memory`` (whole MiB, JVM format ``"<n>m"``) for the memory limit ``text``."""
    size = parse_memory_limit(text)
    if size < SPARK_MIN_DRIVER_BYTES:
        raise InputError(f"--memory-limit {text!r} is below the 512 MiB a Spark driver needs to start")
    return f"{size // 1024**2}m"


def is_local_master(master: str | None) -> bool:
    """Whether ``master`` (``None``: tempanon's default ``local[2]``) runs the driver's work in this machine's JVM."""
    return master is None or str(master).strip().lower().startswith("local")


def check_memory_limit(engine: str, memory_limit: str | None, *, spark_master: str | None = None) -> None:
    """Refuse a ``memory_limit`` the resolved ``engine`` cannot keep (module doc), before anything is read."""
    if memory_limit is None:
        return
    if engine == "numpy":
        raise InputError("--memory-limit bounds the duckdb engine (or the local Spark driver); the numpy engine holds the "
                         "table in memory and cannot keep a limit: use --engine duckdb (auto picks it when a limit is "
                         "given) or leave --memory-limit out")  # fmt: skip
    if engine == "spark":
        if not is_local_master(spark_master):
            raise InputError(f"--memory-limit sets the local Spark driver's heap; a cluster ({spark_master}) takes its "
                             "memory from its own configuration (spark.driver.memory, spark.executor.memory): leave "
                             "--memory-limit out")  # fmt: skip
        spark_driver_memory(memory_limit)
    else:
        parse_memory_limit(memory_limit)


__all__ = ["check_memory_limit", "is_local_master", "machine_memory", "parse_memory_limit", "spark_driver_memory"]

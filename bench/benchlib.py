"""Small helpers shared by the benchmark scripts."""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable


# A user's Python writes bytecode caches; a sandbox that sets PYTHONDONTWRITEBYTECODE would make every
# start-up figure include compiling dream from source (0.2 s and more), which no user pays twice.
USER_ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


def load_average() -> str:
    return ", ".join(f"{x:.1f}" for x in os.getloadavg())


def drop_page_cache() -> bool:
    """Empty the kernel's page cache (root only), so the next read comes from disk; False if not allowed."""
    os.sync()
    try:
        with open("/proc/sys/vm/drop_caches", "w") as fh:
            fh.write("3\n")
    except OSError:
        return False
    return True


def median_pair(first: Callable[[], object], second: Callable[[], object], runs: int) -> tuple[float, float]:
    """Median seconds of two functions run alternately `runs` times each, so both see the same load."""
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(runs):
        for fn, out in ((first, times[0]), (second, times[1])):
            start = time.perf_counter()
            fn()
            out.append(time.perf_counter() - start)
    return statistics.median(times[0]), statistics.median(times[1])

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
    one, two = medians([first, second], runs)
    return one, two


def medians(fns: list[Callable[[], object]], runs: int) -> list[float]:
    """Median seconds of each function, all run in turn `runs` times, so each sees the same load."""
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(runs):
        for fn, out in zip(fns, times):
            start = time.perf_counter()
            fn()
            out.append(time.perf_counter() - start)
    return [statistics.median(t) for t in times]

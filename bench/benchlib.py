"""Small helpers shared by the benchmark scripts."""

from __future__ import annotations

import os
import statistics
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path


# A user's Python writes bytecode caches; a sandbox that sets PYTHONDONTWRITEBYTECODE would make every
# start-up figure include compiling dream from source (0.2 s and more), which no user pays twice.
USER_ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


def checkout_dream(checkout: Path) -> str:
    """The `dream` console script of another checkout's own venv (`DIR/.venv/bin/dream`), for a before/after.

    Its own venv, not its package on this venv's PYTHONPATH: an editable install maps the data packages
    (phrases, prompts, eval cases) to its own checkout, so PYTHONPATH would run the other code on this
    checkout's data."""
    script = checkout.resolve() / ".venv" / "bin" / "dream"
    if not script.is_file():
        raise SystemExit(f"--against {checkout}: no {script}; make its venv first "
                         f"(cd {checkout} && python3 -m venv .venv && .venv/bin/pip install -e .)")
    return str(script)


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


@dataclass(frozen=True)
class ProcessRun:
    """One finished process as the kernel accounted it (wait4's rusage), not as Python inside it saw it."""

    user: float
    system: float
    wall: float
    peak_mb: float
    stdout: str

    @property
    def cpu(self) -> float:
        return self.user + self.system


def run_process(argv: list[str], allowed_exit: tuple[int, ...] = (0,), cwd: Path | None = None) -> ProcessRun:
    """Run one command as a new process, as a user or a scheduler starts it, and read its CPU, wall and peak RSS."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                            env=USER_ENV, cwd=cwd)
    out = proc.stdout.read() if proc.stdout else b""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped by wait4: keep Popen from waiting again
    if proc.stdout:
        proc.stdout.close()
    assert proc.returncode in allowed_exit, f"{' '.join(argv)}: exit {proc.returncode}"
    # ru_maxrss is in KiB on Linux.
    return ProcessRun(usage.ru_utime, usage.ru_stime, wall, usage.ru_maxrss / 1024, out.decode(errors="replace"))


@dataclass
class Case:
    """A command to time; `prepare` (not timed) gives it a fresh input each run and returns its argv."""

    name: str
    prepare: Callable[[], list[str]]
    allowed_exit: tuple[int, ...] = (0,)
    runs: list[ProcessRun] = field(default_factory=list)


def alternate(cases: list[Case], runs: int, warmup: int = 1) -> list[Case]:
    """Run the cases in turn, A B C A B C ..., so each sees the same load; the warm-up runs are not kept."""
    for _ in range(warmup):
        for case in cases:
            run_process(case.prepare(), case.allowed_exit)
    for _ in range(runs):
        for case in cases:
            case.runs.append(run_process(case.prepare(), case.allowed_exit))
    return cases


def spread(values: list[float], unit: str = "s") -> str:
    """median (min-max): the median to quote, the range to show how noisy the machine was."""
    return f"{statistics.median(values):.3f} {unit} ({min(values):.3f}-{max(values):.3f})"


def print_cases(cases: list[Case], title: str) -> None:
    """One row per case: CPU (user+system) and wall, median with min-max, and the largest peak RSS."""
    runs = len(cases[0].runs)
    print(f"{title}; median (min-max) of {runs} alternating runs, whole processes (load average {load_average()})")
    print(f"  {'command':46} {'CPU':>24} {'wall':>24} {'sys':>8} {'peak RSS':>9}")
    for case in cases:
        cpu = spread([r.cpu for r in case.runs])
        wall = spread([r.wall for r in case.runs])
        system = statistics.median(r.system for r in case.runs)
        peak = max(r.peak_mb for r in case.runs)
        print(f"  {case.name:46} {cpu:>24} {wall:>24} {system:7.3f}s {peak:7.0f}MB")


def median_cpu(case: Case) -> float:
    return statistics.median(r.cpu for r in case.runs)


def median_wall(case: Case) -> float:
    return statistics.median(r.wall for r in case.runs)

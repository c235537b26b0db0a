"""Working under an address-space cap (`ulimit -v`, RLIMIT_AS): read what fits, refuse by name what does not.

Under such a cap an allocation polars cannot make aborts the whole process
with a Rust backtrace (it cannot be caught), so dream must not try one that
will not fit. Two things keep it inside the cap:

* glibc gives each thread that allocates its own arena of 64 MB of address
  space. Gathering starts about ten threads (polars' pool, the gather
  workers), which reserve some 640 MB of a 1 GB cap before a log is read.
  Under a cap, dream asks glibc for two arenas (`fit_allocator_to_cap`,
  once at start-up, before any thread): measured, a small store then runs
  under 400 MB, where it aborted under 1 GB before.
* A log is read only when what gathering it needs fits in what the cap
  leaves (`check_log_fits`); otherwise the run stops, naming the log, and
  reads nothing, so the log stays unread for a run with more room.

Without a cap (the usual case) nothing here changes anything.
"""

from __future__ import annotations

import resource
import sys

from dream.errors import BadInput

# glibc's mallopt() parameter for the number of arenas (malloc.h).
_M_ARENA_MAX = -8
_ARENAS_UNDER_A_CAP = 2

# Address space gathering needs beyond the table (`dream.pipeline.gather`
# passes it in: the batches in flight), per byte of log and per entry.
# Measured with the CLI under caps (bench/README.md, "Under an address-space
# cap"): a 48 MB log of 1 M entries needs about 0.5 GB beyond what dream
# holds when it starts reading, one of 143 MB and 3 M entries about 0.9 GB.
# The per-entry part is the table's row (three 16-byte string views, a date,
# a number); each is counted three times for the copies made on the way (the
# split pieces, the redacted column, the engine's selections). Rounded up: a
# refusal can be fixed, an abort cannot.
_BYTES_PER_ENTRY = 48
_COPIES = 3


class TooLargeForMemory(BadInput):
    """A log that gathering cannot hold under the process's address-space cap."""


def address_space_cap() -> int | None:
    """The soft RLIMIT_AS in bytes, or None when there is none."""
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    return None if soft == resource.RLIM_INFINITY else soft


def fit_allocator_to_cap() -> None:
    """Under a cap, keep glibc to a few malloc arenas; elsewhere (no cap, no glibc) do nothing."""
    if address_space_cap() is None or not sys.platform.startswith("linux"):
        return
    import ctypes  # start-up: only a capped process needs it

    try:
        libc = ctypes.CDLL(None)
        libc.mallopt(_M_ARENA_MAX, _ARENAS_UNDER_A_CAP)
    except (OSError, AttributeError):  # not glibc (musl has no mallopt): its arenas are not the 64 MB kind
        pass


def headroom() -> int | None:
    """Bytes of address space the cap still leaves this process, or None when there is no cap to keep to."""
    cap = address_space_cap()
    if cap is None:
        return None
    used = _address_space_used()
    return None if used is None else cap - used


def _address_space_used() -> int | None:
    try:
        with open("/proc/self/status", "rb") as status:
            for line in status:
                if line.startswith(b"VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None  # not Linux: no figure to keep to, and such caps are rare there


def gathering_needs(size: int, entries: int, in_flight: int) -> int:
    """Address space that gathering a log of `size` bytes and `entries` entries needs, about."""
    return in_flight + _COPIES * (size + _BYTES_PER_ENTRY * entries)


def check_log_fits(rel: str, size: int, entries: int, in_flight: int) -> None:
    """Raise `TooLargeForMemory` naming log `rel` when gathering it would not fit under the cap.

    `in_flight`: what the reader's work in progress may take besides (its batches being split).
    """
    cap, room = address_space_cap(), headroom()
    need = gathering_needs(size, entries, in_flight)
    if cap is None or room is None or need <= room:
        return
    raise TooLargeForMemory(
        f"{rel}: this log ({_mb(size)}, {entries:,} entries) needs about {_mb(need)} of memory to read, "
        f"and the address-space limit (ulimit -v {cap // 1024}) leaves {_mb(max(room, 0))}; "
        "raise the limit or split the log, then run again (nothing was read; the log waits)")


def out_of_memory() -> str:
    """The line for a command that ran out of memory: what the cap is, and what to do."""
    cap = address_space_cap()
    limit = f"the address-space limit (ulimit -v {cap // 1024})" if cap is not None else "the machine's memory"
    return f"out of memory: the command needed more than {limit} allows; raise it or free memory, then run again"


def _mb(n: int) -> str:
    return f"{n / (1 << 20):,.0f} MB"

"""Small helpers shared by the benchmark scripts."""

from __future__ import annotations

import os


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

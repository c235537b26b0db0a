"""Shannon entropy: how random a candidate secret looks (the detectors' and gitleaks' rules' floor)."""

from __future__ import annotations

import math
from collections import Counter


def entropy(text: str) -> float:
    """Shannon entropy in bits per character."""
    counts, n = Counter(text), len(text)
    return -sum(c / n * math.log2(c / n) for c in counts.values()) if n else 0.0

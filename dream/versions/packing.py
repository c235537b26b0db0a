"""How one object's bytes are stored under ``.dream/objects``: compressed, often as a delta.

Most versions change a line or two of a file (an index line added, a note
appended), so a new object is deflated with the previous version of the same
file (or tree node) as zlib's preset dictionary: the unchanged text costs a
few bytes of back-references. That makes it a delta against its *base*,
which must be read first; chains are cut at `MAX_CHAIN` so reading any
object stays cheap. A delta that saves too little is stored on its own.

Stored form::

    MAGIC  depth (1 byte)  [base sha256, 32 bytes, when depth > 0]  [spans, 8 bytes]  raw deflate stream

(raw deflate: zlib's header and checksum would only repeat what the sha256
naming the object checks anyway.) A delta whose depth byte has `SPANS` set
also names how many leading and trailing bytes it shares with its base
(4 bytes each, big-endian): only the bytes between them are deflated, with
the base's bytes they replace (and up to 32 KB before them) as dictionary.
So a file that only grows at its end, like `archive.md`, costs its new
lines whatever its size: zlib's window (32 KB) would otherwise let a
dictionary help only files smaller than that. A delta without `SPANS`
(written before them) shares nothing and uses the whole base as dictionary.

Objects written before this format are the raw bytes. A raw object could in
principle start with `MAGIC` too, so the reader trusts a decoding only when
it hashes back to the object's name (`dream.versions.manifests.Blobs.get`).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

MAGIC = b"\x00dz1"
SPANS = 0x80  # flag in the depth byte: shared leading and trailing lengths follow the base
WINDOW = 32 << 10  # zlib's window: the most of a dictionary a deflate stream can refer to
MAX_CHAIN = 16  # longest run of deltas before an object is stored whole again
LEVEL = 6
_RAW = -15  # wbits: a raw deflate stream
DELTA_WORTH = 0.75  # a delta is kept only when it is this much smaller than the object stored whole


@dataclass(frozen=True)
class Packed:
    depth: int  # 0: whole; n: a delta whose base has depth n - 1
    base: str | None  # the base object's sha256 (hex), for a delta
    payload: bytes  # the deflate stream
    shared_head: int = 0  # leading bytes taken from the base as they are
    shared_tail: int = 0  # trailing bytes taken from the base as they are


def is_packed(stored: bytes) -> bool:
    return stored.startswith(MAGIC)


def parse(stored: bytes) -> Packed:
    """The header of a packed object; ValueError when it is not one."""
    if not is_packed(stored) or len(stored) < len(MAGIC) + 1:
        raise ValueError("not a packed object")
    depth = stored[len(MAGIC)]
    start = len(MAGIC) + 1
    if depth == 0:
        return Packed(0, None, stored[start:])
    spans, depth = bool(depth & SPANS), depth & ~SPANS
    end = start + 32 + 8 * spans
    if not 0 < depth <= MAX_CHAIN or len(stored) < end:
        raise ValueError("packed object with a bad header")
    head, tail = (int.from_bytes(stored[end - 8:end - 4], "big"), int.from_bytes(stored[end - 4:end], "big")) \
        if spans else (0, 0)
    return Packed(depth, stored[start:start + 32].hex(), stored[end:], head, tail)


def header_bytes() -> int:
    """How many leading bytes of a stored object hold its header, whatever its form."""
    return len(MAGIC) + 1 + 32 + 8


def inflate(packed: Packed, base: bytes | None) -> bytes:
    """The object's bytes; `base` is the base object's bytes for a delta. Raises zlib.error (ValueError: bad spans)."""
    if not packed.depth:
        return zlib.decompress(packed.payload, _RAW)  # raises on a truncated stream
    base = base or b""
    head, tail = packed.shared_head, len(base) - packed.shared_tail
    if head > tail:
        raise ValueError("delta shares more bytes than its base has")
    inflater = zlib.decompressobj(_RAW, zdict=_dictionary(base, head, tail))
    middle = inflater.decompress(packed.payload) + inflater.flush()
    if not inflater.eof or inflater.unused_data:
        raise zlib.error("truncated or trailing data")
    return base[:head] + middle + base[tail:]


def _dictionary(base: bytes, head: int, tail: int) -> bytes:
    """The base bytes a delta's new middle is most like: those it replaces, and what comes just before."""
    return base[max(0, head - WINDOW):tail]


def _shared_head(a: bytes, b: bytes) -> int:
    """Length of the longest common prefix (binary search over slice comparisons: memcmp, not a Python loop)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return low


def _deflate(data: bytes, zdict: bytes | None = None) -> bytes:
    deflater = zlib.compressobj(LEVEL, zlib.DEFLATED, _RAW, zdict=zdict) if zdict else \
        zlib.compressobj(LEVEL, zlib.DEFLATED, _RAW)
    return deflater.compress(data) + deflater.flush()


def whole(data: bytes) -> bytes:
    return MAGIC + b"\x00" + _deflate(data)


def pack(data: bytes, base: tuple[str, bytes, int] | None = None) -> bytes:
    """`data` stored whole, or as a delta against `base` = (sha256, bytes, depth) when that pays.

    A base already at `MAX_CHAIN` is not used, so no chain grows longer.
    """
    alone = whole(data)
    if base is None or base[2] >= MAX_CHAIN or not base[1]:
        return alone
    digest, base_data, depth = base
    head = _shared_head(data, base_data)
    tail = _shared_head(data[head:][::-1], base_data[head:][::-1])
    spans = head.to_bytes(4, "big") + tail.to_bytes(4, "big")
    zdict = _dictionary(base_data, head, len(base_data) - tail)
    middle = data[head:len(data) - tail]
    delta = MAGIC + bytes([(depth + 1) | SPANS]) + bytes.fromhex(digest) + spans + _deflate(middle, zdict or None)
    return delta if len(delta) <= len(alone) * DELTA_WORTH else alone

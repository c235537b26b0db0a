"""How one object's bytes are stored under ``.dream/objects``: compressed, often as a delta.

Most versions change a line or two of a file (an index line added, a note
appended), so a new object is deflated with the previous version of the same
file (or tree node) as zlib's preset dictionary: the unchanged text costs a
few bytes of back-references. That makes it a delta against its *base*,
which must be read first; chains are cut at `MAX_CHAIN` so reading any
object stays cheap. A delta that saves too little is stored on its own.

Stored form::

    MAGIC  depth (1 byte)  [base sha256, 32 bytes, when depth > 0]  raw deflate stream

(raw deflate: zlib's header and checksum would only repeat what the sha256
naming the object checks anyway.)

Objects written before this format are the raw bytes. A raw object could in
principle start with `MAGIC` too, so the reader trusts a decoding only when
it hashes back to the object's name (`dream.versions.manifests.Blobs.get`).
Only the last 32 KB of a base serve as dictionary: a file larger than that
gains less (zlib's window), and is then stored on its own.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

MAGIC = b"\x00dz1"
MAX_CHAIN = 16  # longest run of deltas before an object is stored whole again
LEVEL = 6
_RAW = -15  # wbits: a raw deflate stream
DELTA_WORTH = 0.75  # a delta is kept only when it is this much smaller than the object stored whole


@dataclass(frozen=True)
class Packed:
    depth: int  # 0: whole; n: a delta whose base has depth n - 1
    base: str | None  # the base object's sha256 (hex), for a delta
    payload: bytes  # the deflate stream


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
    if depth > MAX_CHAIN or len(stored) < start + 32:
        raise ValueError("packed object with a bad header")
    return Packed(depth, stored[start:start + 32].hex(), stored[start + 32:])


def inflate(packed: Packed, base: bytes | None) -> bytes:
    """The object's bytes; `base` is the base object's bytes for a delta. Raises zlib.error."""
    if not packed.depth:
        return zlib.decompress(packed.payload, _RAW)  # raises on a truncated stream
    inflater = zlib.decompressobj(_RAW, zdict=base or b"")
    data = inflater.decompress(packed.payload) + inflater.flush()
    if not inflater.eof or inflater.unused_data:
        raise zlib.error("truncated or trailing data")
    return data


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
    delta = MAGIC + bytes([depth + 1]) + bytes.fromhex(digest) + _deflate(data, base_data)
    return delta if len(delta) <= len(alone) * DELTA_WORTH else alone

"""A file list (path -> blob sha256) as content-addressed nodes that versions share, like git trees.

Written as one object, the list would be rewritten whole for every version
however small the change (the first manifests listed every file: 28 KB a
version on a store of 136 KB). So it is split by the hash of each path: a
node lists its files while there are at most `LEAF_MAX` of them, else it
points to up to 16 child nodes, one per next hex digit of the path hashes.
The split depends only on the set of paths, so a part of the list that did
not change is the same node, with the same digest, in every version that
has it: changing one file writes one leaf and the nodes above it. Splitting
by path hash rather than by folder (as git does) keeps nodes small in a flat
folder of 5,000 memories too.

A node is stored in the blob store under the sha256 of its bytes::

    leaf:    b"F", then per file (by path):   blob sha256 (32 bytes), path (UTF-8), NUL
    buckets: b"B", then per non-empty bucket: hex digit (1 byte), node sha256 (32 bytes)

Binary rather than JSON: nobody reads nodes by hand, and a hex digest costs
twice its bytes in a delta. Its *position* is the hash prefix it covers (""
for the root); the node at the same position in the previous version is the
natural base of a delta (`dream.versions.packing`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import groupby

LEAF_MAX = 32  # files in one node before it splits into buckets
_HEX = frozenset("0123456789abcdef")


def _path_bytes(path: str) -> bytes:
    # surrogateescape: a file name that is not valid UTF-8 is kept byte for byte
    return path.encode("utf-8", "surrogateescape")


def path_key(path: str) -> str:
    return hashlib.sha256(_path_bytes(path)).hexdigest()


def encode_leaf(files: list[tuple[str, str]]) -> bytes:
    return b"F" + b"".join(bytes.fromhex(digest) + _path_bytes(path) + b"\0" for path, digest in files)


def encode_buckets(children: list[tuple[str, str]]) -> bytes:
    return b"B" + b"".join(digit.encode() + bytes.fromhex(digest) for digit, digest in children)


@dataclass
class Node:
    position: str  # the path-hash prefix every file under this node shares
    digest: str
    data: bytes


def build(files: dict[str, str]) -> tuple[str, list[Node]]:
    """The root digest and every node (children before parents) of the tree listing `files`."""
    bad = next((path for path, digest in files.items() if not _is_digest(digest)), None)
    if bad is not None:
        raise ValueError(f"{bad!r} is listed with {files[bad]!r}, which is not a sha256")
    nodes: list[Node] = []
    entries = sorted((path_key(path), path, digest) for path, digest in files.items())
    return _build(entries, "", nodes), nodes


def _build(entries: list[tuple[str, str, str]], position: str, nodes: list[Node]) -> str:
    depth = len(position)
    if len(entries) <= LEAF_MAX or depth == 64:
        data = encode_leaf(sorted((path, digest) for _, path, digest in entries))
    else:
        data = encode_buckets([(digit, _build(list(group), position + digit, nodes))
                               for digit, group in groupby(entries, key=lambda e: e[0][depth])])
    digest = hashlib.sha256(data).hexdigest()
    nodes.append(Node(position, digest, data))
    return digest


@dataclass
class Listing:
    files: dict[str, str] = field(default_factory=dict)  # path -> blob sha256
    nodes: dict[str, str] = field(default_factory=dict)  # position -> node sha256


def read(root: str, load: Callable[[str], bytes]) -> Listing:
    """Every file of the tree at `root`; ValueError when a node is not one this module wrote."""
    listing = Listing()
    _read(root, "", load, listing)
    return listing


def _read(digest: str, position: str, load: Callable[[str], bytes], listing: Listing) -> None:
    if len(position) > 64:
        raise ValueError("tree nodes nested deeper than a sha256 has digits")
    data = load(digest)
    listing.nodes[position] = digest
    if data[:1] == b"F":
        listing.files.update(_leaf_files(data))
    elif data[:1] == b"B":
        for digit, child in _buckets(data):
            _read(child, position + digit, load, listing)
    else:
        raise ValueError("object is not a tree node")


def reachable(roots: list[str], load: Callable[[str], bytes]) -> set[str]:
    """Every node and file object the trees at `roots` name. A node met before is not read again: versions
    share most of their nodes, so this costs about the nodes that differ, not versions x files."""
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        digest = todo.pop()
        if digest in seen:
            continue
        seen.add(digest)
        data = load(digest)
        if data[:1] == b"F":
            seen.update(_leaf_files(data).values())
        elif data[:1] == b"B":
            todo.extend(child for _, child in _buckets(data))
        else:
            raise ValueError("object is not a tree node")
    return seen


def _leaf_files(data: bytes) -> dict[str, str]:
    files, at = {}, 1
    while at < len(data):
        end = data.find(b"\0", at + 32)
        if end < 0 or end == at + 32:
            raise ValueError("tree node with a truncated or empty file entry")
        files[data[at + 32:end].decode("utf-8", "surrogateescape")] = data[at:at + 32].hex()
        at = end + 1
    return files


def _buckets(data: bytes) -> list[tuple[str, str]]:
    if (len(data) - 1) % 33:
        raise ValueError("tree node with a truncated bucket")
    children = [(chr(data[at]), data[at + 1:at + 33].hex()) for at in range(1, len(data), 33)]
    if any(digit not in _HEX for digit, _ in children):
        raise ValueError("tree node has a bucket that is not a hex digit")
    return children


def _is_digest(value: object) -> bool:
    return isinstance(value, str) and len(value) == 64 and set(value) <= _HEX

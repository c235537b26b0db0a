"""One bad file does not stop the night: a topic file with frontmatter dream will not load, one in Latin-1,
one of random bytes and a FIFO are left byte for byte and named, with why, in the run's output and report;
the rest of the store is dreamed, and the proposal can be accepted."""

from __future__ import annotations

import os
import stat

from dream.store.layout import Layout
from dream.versions.proposals import Proposals

LATIN1 = ("---\nname: café\ndescription: le café du matin\ntype: user\n---\n"
          "J'aime le café crème à 8h.\n").encode("latin-1")
ALIAS = b'---\nrefs: &r ["a", "b"]\nmore: [*r, *r]\nname: refs\n---\nbody\n'
NOISE = bytes(range(256)) * 8
BAD = {
    "cafe.md": (LATIN1, "not valid UTF-8 (byte 13)"),  # the é of café
    "refs.md": (ALIAS, "frontmatter uses a YAML alias (*name), which dream does not expand"),
    "noise.md": (NOISE, "holds NUL bytes (binary, not text)"),
    "pipe.md": (None, "a FIFO, not a regular file"),
}


def _plant(store) -> None:
    for rel, (data, _) in BAD.items():
        if data is None:
            os.mkfifo(store / rel)
        else:
            (store / rel).write_bytes(data)
    with open(store / "MEMORY.md", "a") as index:
        index.writelines(f"- [{rel[:-3]}]({rel}) — planted\n" for rel in BAD)
    log = store / "logs" / "2026" / "12" / "06" / "build.md"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("> remember that the build cache lives in /var/cache/dream-build\n< noted\n")


def _as_found(store) -> dict[str, bytes | str]:
    return {rel: "FIFO" if stat.S_ISFIFO(os.lstat(store / rel).st_mode) else (store / rel).read_bytes()
            for rel in BAD}


def test_bad_files_are_left_and_named_and_the_rest_is_dreamed(demo_store, cli):
    assert cli("run", "--store", str(demo_store)).code == 0
    assert cli("accept", "--store", str(demo_store)).code == 0
    _plant(demo_store)
    found, index = _as_found(demo_store), (demo_store / "MEMORY.md").read_bytes()

    res = cli("run", "--force", "--store", str(demo_store))
    assert res.code == 0, res.stderr
    for rel, (_, why) in BAD.items():
        assert f"{rel}: left as it is, not dreamed: {why}" in res.stdout, res.stdout

    layout = Layout.open(demo_store)
    proposals = Proposals(layout)
    proposal = proposals.latest_pending()
    assert proposal is not None and "project_build_cache_lives_var.md" in proposal.changed  # the rest: dreamed
    assert not set(BAD) & set(proposal.changed)
    warnings = proposals.report(proposal)["warnings"]
    assert all(any(f"{rel}: left as it is" in w for w in warnings) for rel in BAD), warnings
    proposed_index = proposals.tree(proposal)["MEMORY.md"]
    assert all(f"({rel})".encode() in proposed_index for rel in BAD)  # no index line of theirs archived

    accepted = cli("accept", "--store", str(demo_store))
    assert accepted.code == 0, accepted.stderr
    assert _as_found(demo_store) == found
    assert (demo_store / "MEMORY.md").read_bytes().startswith(index[:200])

"""An agent writing memory files in another process while a dream command runs: numbered lines, each logged.

It writes in three ways, as agents and editors do:

- append: open for appending, write one line;
- rename: read the file, write it with one more line to a file beside it, rename that over it (an editor's
  save; it checks the file did not change since it read it, as editors do);
- truncate: open for writing in place, read, truncate, write it back with one more line.

Each line it wrote is logged (path, way, line) only once written, so a test can look for every one.
Given `carries` bytes, a rewrite (rename or truncate) whose bytes read back held them is logged as
"<way>:carried": the agent itself wrote them back, from what it read before another writer took them out.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

AGENT_LINE = re.compile(rb"^- agent line \d+-\d+$")
WAYS = ("append", "rename", "truncate")

_SCRIPT = r"""
import os, random, sys, time
files, stop, log, seed = sys.argv[1].split("|"), sys.argv[2], sys.argv[3], int(sys.argv[4])
low, high, ways = float(sys.argv[5]), float(sys.argv[6]), sys.argv[7].split(",")
carries = bytes.fromhex(sys.argv[8]) if sys.argv[8] else None
rnd = random.Random(seed)
carried = False  # whether the last rewrite wrote back `carries`

def identity(path):
    info = os.stat(path)
    return info.st_ino, info.st_size, info.st_mtime_ns

def append(path, line):
    with open(path, "ab") as fh:
        fh.write(line)
    return True

def rename(path, line):
    before = identity(path)
    with open(path, "rb") as fh:
        data = fh.read()
    tmp = f"{path}.agent-{seed}.swp"
    with open(tmp, "wb") as fh:
        fh.write(data + line)
    global carried
    carried = carries is not None and carries in data
    if identity(path) != before:  # changed since read: an editor asks; this one tries again later
        os.unlink(tmp)
        return False
    os.rename(tmp, path)
    return True

def truncate(path, line):
    with open(path, "r+b") as fh:
        data = fh.read()
        fh.seek(0)
        fh.truncate()
        fh.write(data + line)
    global carried
    carried = carries is not None and carries in data
    return True

hows = [{"append": append, "rename": rename, "truncate": truncate}[way] for way in ways]
n = 0
with open(log, "ab") as out:
    while not os.path.exists(stop):
        path = rnd.choice(files)
        line = f"- agent line {seed}-{n}\n".encode()
        how = rnd.choice(hows)
        carried = False
        try:
            wrote = how(path, line)
        except FileNotFoundError:
            wrote = False
        if wrote:
            way = how.__name__ + (":carried" if carried else "")
            out.write(f"{path}\t{way}\t".encode() + line); out.flush()
            n += 1
        time.sleep(rnd.uniform(low, high))
"""


class Agent:
    """`with Agent(files, where, seed) as agent:` writes until the block ends; `agent.written()` after."""

    def __init__(self, files: list[Path], where: Path, seed: int, pause: tuple[float, float] = (0.005, 0.04),
                 ways: tuple[str, ...] = WAYS, carries: bytes | None = None):
        where.mkdir(parents=True, exist_ok=True)
        self.stop, self.log = where / "agent.stop", where / "agent.tsv"
        self.args = ["|".join(map(str, files)), str(self.stop), str(self.log), str(seed), str(pause[0]),
                     str(pause[1]), ",".join(ways), (carries or b"").hex()]

    def __enter__(self) -> Agent:
        self.process = subprocess.Popen([sys.executable, "-c", _SCRIPT, *self.args])
        while not self.log.exists() or not self.log.read_bytes():  # it is writing before the command starts
            if self.process.poll() is not None:
                raise AssertionError(f"the agent ended before writing a line (exit {self.process.returncode})")
            time.sleep(0.002)
        return self

    def __exit__(self, *exc) -> None:
        self.stop.touch()
        assert self.process.wait(timeout=30) == 0

    def written(self) -> list[tuple[Path, str, bytes]]:
        """(path, way, line) of every line written, in order."""
        rows = [row.split(b"\t", 2) for row in self.log.read_bytes().splitlines(keepends=True)]
        return [(Path(path.decode()), how.decode(), line) for path, how, line in rows]

"""`dream` command line. Importing a command module registers its commands on `app`.

The command modules import the library inside each command (each such
import says `# start-up:`): `dream --help` or `dream status` should not pay
for polars, jinja2, rapidfuzz, dateparser or anthropic, which together take
longer to import than most commands take to run.
"""

import gc

# A command is a short process that allocates far more objects than it leaves in cycles: at Python's default
# thresholds (700, 10, 10) the collector ran ~147 times in a nightly `dream run`, 0.07-0.09 s of its ~1 s of CPU
# (issue 41; one full collection, walking every object the imports made, 0.03 s). Set before those imports; a long
# run still collects, once per 100,000 new objects.
gc.set_threshold(100_000, 10, 10)

from dream.cli import (  # noqa: E402, F401  (registers the core commands)
    commands, evaluate, fsck, importing, lint, mirror, notes, purge, removed, report, review, settings,
)
from dream.cli.app import app, main  # noqa: E402

__all__ = ["app", "main"]

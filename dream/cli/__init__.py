"""`dream` command line. Importing a command module registers its commands on `app`.

The command modules import the library inside each command (each such
import says `# start-up:`): `dream --help` or `dream status` should not pay
for polars, jinja2, rapidfuzz, dateparser or anthropic, which together take
longer to import than most commands take to run.
"""

from dream.cli import (  # noqa: F401  (registers the core commands)
    commands, evaluate, fsck, importing, lint, mirror, notes, purge, removed, report, review, settings,
)
from dream.cli.app import app, main

__all__ = ["app", "main"]

"""`dream` command line. Importing a command module registers its commands on `app`.

The command modules import the library inside each command (each such
import says `# start-up:`): `dream --help` or `dream status` should not pay
for polars, jinja2, rapidfuzz, dateparser or anthropic, which together take
longer to import than most commands take to run.
"""

from dream.cli import commands, evaluate, fsck, importing, lint, notes, removed, report, review, settings  # noqa: F401  (registers the core commands)
from dream.cli.app import app, main

__all__ = ["app", "main"]

"""`dream` command line. Importing a command module registers its commands on `app`."""

from dream.cli import (
    commands,  # noqa: F401  (registers the core commands)
    importing,  # noqa: F401  (dream import)
    review,  # noqa: F401  (review, show, gc, rebase)
    settings,  # noqa: F401  (dream config)
)
from dream.cli.app import app, main

__all__ = ["app", "main"]

"""`dream` command line. Importing a command module registers its commands on `app`."""

from . import commands  # noqa: F401  (registers the core commands)
from . import importing  # noqa: F401  (dream import)
from . import review  # noqa: F401  (review, show, gc, rebase)
from . import settings  # noqa: F401  (dream config)
from .app import app, main

__all__ = ["app", "main"]

"""Code the tests share. Test files import from here, never from each other.

`tests/` is on the import path (pytest's `pythonpath`), so a test writes
`from helpers.stores import DEMO`. Fixtures every test may use live in
`tests/conftest.py`; the CLI drivers behind its `cli` and `spawned_cli`
fixtures are in `helpers.cli`.
"""

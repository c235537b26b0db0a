"""`dream --version`, as a new user types it first, and `dream version`, print the same release."""

from __future__ import annotations

from importlib.metadata import version


def test_version_option_and_command_print_the_installed_release(cli) -> None:
    installed = version("dream")

    as_option = cli("--version")
    as_command = cli("version")

    assert as_option.code == 0 and as_option.stdout.strip() == f"dream {installed}"
    assert as_command.code == 0 and as_command.stdout.strip() == installed


def test_version_option_runs_no_command(cli, tmp_path) -> None:
    result = cli("--version", "run", "--store", str(tmp_path / "nowhere"))

    assert result.code == 0 and "dream " in result.stdout and not (tmp_path / "nowhere").exists()

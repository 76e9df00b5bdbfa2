"""Subcommands registered by other packages under the `obvalidate.commands` entry points (pyproject.toml
`[project.entry-points."obvalidate.commands"]`): found by name, imported only when run, listed by --help."""
from __future__ import annotations

import sys

import pytest
from click.testing import CliRunner

import validator.cli
from validator.cli import COMMANDS_GROUP, main

PLUGIN = '''
import click

NOT_A_COMMAND = 42


@click.group()
def hello():
    """Say hello (a fake plugin)."""


@hello.command("world")
@click.option("--name", default="world")
def world(name):
    click.echo(f"hello {name}")
'''


@pytest.fixture
def installed_plugin(tmp_path, monkeypatch):
    """A distribution on sys.path whose entry points register three commands: a working one, one whose module
    is missing and one that names something other than a click command."""
    (tmp_path / "obvalidate_fake_plugin.py").write_text(PLUGIN, encoding="utf-8")
    dist = tmp_path / "obvalidate_fake_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: obvalidate-fake-plugin\nVersion: 1.0\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text(
        f"[{COMMANDS_GROUP}]\n"
        "hello = obvalidate_fake_plugin:hello\n"
        "broken = obvalidate_fake_plugin_missing:command\n"
        "notacommand = obvalidate_fake_plugin:NOT_A_COMMAND\n"
        "validate = obvalidate_fake_plugin:hello\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield
    sys.modules.pop("obvalidate_fake_plugin", None)


def run(*args):
    return CliRunner().invoke(main, list(args))


def test_a_registered_command_runs_and_is_imported_only_then(installed_plugin):
    assert "obvalidate_fake_plugin" not in sys.modules
    assert "hello" in run("--help").output
    result = run("hello", "world", "--name", "plugins")
    assert result.exit_code == 0, result.output
    assert result.output == "hello plugins\n"


def test_a_builtin_command_wins_over_a_registered_one_of_the_same_name(installed_plugin):
    result = run("validate", "--help")
    assert result.exit_code == 0
    assert "Validate payloads and requests" in result.output


@pytest.mark.parametrize("name, says", [
    ("broken", "ModuleNotFoundError"),
    ("notacommand", "is a int, not a click command or group"),
])
def test_a_broken_registration_is_a_message_not_a_traceback(installed_plugin, name, says):
    result = run(name, "--any", "argument")
    assert result.exit_code == 2
    assert says in result.output and f"entry point {name!r} of {COMMANDS_GROUP}" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    listing = run("--help")
    assert listing.exit_code == 0 and "hello" in listing.output
    assert f"{name}" in listing.output and "(unusable)" in listing.output


def test_input_files_never_look_for_registered_commands(monkeypatch, tmp_path):
    """The common case keeps its cold start: a .json argument is validated without scanning entry points."""
    def refuse():
        raise AssertionError("entry points scanned for an input file")

    monkeypatch.setattr(validator.cli, "_registered_commands", refuse)
    payload = tmp_path / "basket.json"
    payload.write_text('{"paymentIds": ["a"]}', encoding="utf-8")
    result = run(str(payload), "--kind", "signing-basket")
    assert result.exit_code == 0, result.output


def test_an_unknown_name_is_still_validated_as_a_path(installed_plugin):
    result = run("no-such-file-or-command")
    assert result.exit_code == 2
    assert "does not exist" in result.output

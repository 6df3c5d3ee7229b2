"""The options the command line and the pytest plugin share are one definition: the same
help, choices, default and metavar under both names (the plugin's prefixed), so a fix to one
reaches the other."""
import argparse

import pytest

from gelucheck import pytest_plugin
from gelucheck.cli import build_parser

# (the command's option, the plugin's) for every option they share
SHARED = [("check", "--impl", "--gelucheck-impl"),
          ("check", "--framework", "--gelucheck-framework"),
          ("check", "--budgets", "--gelucheck-budgets"),
          ("sweep", "--range", "--gelucheck-sweep-range"),
          ("sweep", "--impl", "--gelucheck-impl")]
FIELDS = ("choices", "default", "metavar")  # and the type's name (functions differ by call)


class _Group:
    def __init__(self):
        self.options = {}

    def addoption(self, *names, **attrs):
        self.options[names[0]] = attrs


class _Parser:
    def __init__(self):
        self.group = _Group()

    def getgroup(self, name):
        return self.group


def _plugin_options() -> dict:
    parser = _Parser()
    pytest_plugin.pytest_addoption(parser)
    return parser.group.options


def _command_action(command: str, option: str) -> argparse.Action:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return next(a for a in sub.choices[command]._actions if option in a.option_strings)


@pytest.mark.parametrize("command, option, plugin_option", SHARED)
def test_a_shared_option_is_defined_alike_for_the_cli_and_the_plugin(command, option,
                                                                      plugin_option):
    plugin = _plugin_options()[plugin_option]
    action = _command_action(command, option)
    for field in FIELDS:
        assert plugin.get(field) == getattr(action, field), (option, field)
    assert getattr(plugin.get("type"), "__name__", None) == getattr(action.type, "__name__", None)
    # the help differs only in the prefix of the options it names (and a default's source)
    cli_help = action.help.replace("--", "--gelucheck-")
    assert plugin["help"].startswith(cli_help.split(" (exit 1)")[0].split(" (default")[0])


def test_the_plugins_framework_refuses_what_the_cli_refuses(pytester):
    result = pytester.runpytest("--gelucheck-framework", "jax")
    assert result.ret != 0
    result.stderr.fnmatch_lines(["*--gelucheck-framework*unknown framework 'jax'*valid choices: "
                                 "numpy, torch*"])

"""Every command's --help prints (argparse formats help text with %: a literal one must be doubled)."""

from __future__ import annotations

import argparse

import pytest

from debugrelay.cli import build_parser


def commands() -> dict[str, argparse.ArgumentParser]:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


@pytest.mark.parametrize("name", sorted(commands()))
def test_every_command_prints_its_help(name: str) -> None:
    assert name in commands()[name].format_help()


def test_a_hit_condition_is_shown_as_written() -> None:
    assert "'% 5'" in commands()["break"].format_help()

"""Small helpers of the command line's option parsing shared by the subjects' fronts."""

from __future__ import annotations

import argparse


class Given(argparse.Action):
    """Store the value and remember that the option was given (in ``args.given``, a set of
    option destinations), for options whose default is also a valid explicit choice
    (``--config``, ``--subject``): ``--config x86_64-default --kconfig F`` is a conflict
    although ``--config`` has its default value.

    >>> p = argparse.ArgumentParser()
    >>> _ = p.add_argument("--config", default="a", action=Given)
    >>> sorted(given(p.parse_args(["--config", "a"]))), sorted(given(p.parse_args([])))
    (['config'], [])
    """

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        setattr(namespace, self.dest, values)
        namespace.given = {*given(namespace), self.dest}


def given(args: argparse.Namespace) -> set[str]:
    """The destinations of the :class:`Given` options given on the command line."""
    found: set[str] = getattr(args, "given", set())
    return found


__all__ = ["Given", "given"]

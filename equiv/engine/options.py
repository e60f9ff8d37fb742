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
    """The destinations of the :class:`Given` options given on the command line; once
    :func:`given_options` has been stored in ``args.given`` (as ``equiv.proofs`` does), of
    every option given."""
    found: set[str] = getattr(args, "given", set())
    return found


def given_options(parser: argparse.ArgumentParser, argv: list[str] | None) -> set[str]:
    """The destinations of every option ``argv`` gives, whatever its value (``--config
    x86_64-default`` is given although it is the default): ``argv`` parsed again by
    ``parser`` with no defaults.  ``parser`` is changed: build one for this alone.

    >>> p = argparse.ArgumentParser()
    >>> _ = p.add_argument("--cache-dir", default=None)
    >>> _ = p.add_argument("--no-cache", action="store_true")
    >>> sorted(given_options(p, ["--no-cache"]))
    ['no_cache']
    """
    for action in parser._actions:
        action.default = argparse.SUPPRESS
    return set(vars(parser.parse_args(argv))) - {"given"}


__all__ = ["Given", "given", "given_options"]

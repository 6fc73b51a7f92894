"""Checks at the point of input, shared by every module: one message for one kind of mistake.

- :data:`MODES`: ``"paper"`` (the paper's text, the default everywhere) and ``"as-coded"`` (the
  authors' code where it differs from the text).
- :func:`choice`: a value must be one of a few names.
- :func:`word_list`: a list of words or sentences, never a bare string (which Python would
  happily iterate letter by letter) and never empty.
- :func:`ddof`: the delta degrees of freedom of a standard deviation or variance, 0 or more.
- :func:`settings`: a settings dataclass from a profile's mapping, whose keys must be its fields.

>>> choice("mode", "paper", MODES)
'paper'
>>> word_list("targets", ["paris", "rome"])
['paris', 'rome']
>>> word_list("targets", "paris")
Traceback (most recent call last):
...
TypeError: targets must be a list of strings, not the bare string 'paris' (write ['paris'])
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping

MODES = ("paper", "as-coded")


def choice(name: str, value: str, choices: Iterable[str]) -> str:
    """``value`` if it is one of ``choices``; otherwise a ``ValueError`` that lists them."""
    choices = tuple(choices)
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")
    return value


def word_list(name: str, value: Iterable[str], *, allow_empty: bool = False) -> list[str]:
    """``value`` as a list of strings; a bare string, or an empty list unless allowed, is an error.
    """
    if isinstance(value, str):
        raise TypeError(f"{name} must be a list of strings, not the bare string {value!r} "
                        f"(write [{value!r}])")
    items = list(value)
    bad = [v for v in items if not isinstance(v, str)]
    if bad:
        raise TypeError(f"{name} must hold strings only; got {bad[:3]!r}")
    if not items and not allow_empty:
        raise ValueError(f"{name} is empty: give at least one")
    return items


def ddof(value: int) -> None:
    """A ``ValueError`` unless ``value`` is 0 or more (1: sample, 0: population)."""
    if value < 0:
        raise ValueError(f"ddof must be 0 or more, got {value} (1: sample, 0: population std)")


def settings(cls: type, values: Mapping | None, what: str):
    """``cls(**values)`` for a settings dataclass; an unknown key is a ``ValueError`` that lists
    the valid ones (``what`` names the settings in it).

    >>> @dataclasses.dataclass
    ... class Sampling:
    ...     seed: int = 0
    ...     runs: int = 1
    >>> settings(Sampling, {"runs": 3}, "sampling")
    Sampling(seed=0, runs=3)
    >>> settings(Sampling, {"run": 3}, "sampling")
    Traceback (most recent call last):
    ...
    ValueError: unknown sampling setting(s) ['run']; valid: seed, runs
    """
    values = dict(values or {})
    names = [f.name for f in dataclasses.fields(cls)]
    unknown = sorted(set(values) - set(names))
    if unknown:
        raise ValueError(f"unknown {what} setting(s) {unknown}; valid: {', '.join(names)}")
    return cls(**values)

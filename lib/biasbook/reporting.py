"""How the book writes a number with its interval, and where the paper's number falls.

:mod:`biasbook.stats` computes an interval; this module writes it as tables print it
(:func:`interval_text`, :func:`with_interval_text` for a frame in the record schema) and
compares it with the paper's number (:func:`paper_verdict`, :func:`paper_verdicts`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd


def paper_verdict(paper, low, high, *, reason: str = "", value=0.0) -> str:
    """Where the paper's number ``paper`` falls against our interval ``[low, high]`` (bounds
    included): ``"inside"`` or ``"outside"``; or why the question is not asked, in this order:
    ``"no paper value"``, ``"not comparable: <reason>"`` where ``reason`` says how the
    quantities differ (another model, corpus or scale; the prefix is added unless ``reason``
    has it), ``"not computable here"`` where ours (``value``) is missing, ``"no interval"``.

    >>> paper_verdict(0.83, 0.8, 0.86), paper_verdict(0.9, 0.8, 0.86), paper_verdict(None, 0, 1)
    ('inside', 'outside', 'no paper value')
    >>> paper_verdict(0.83, 0.8, 0.86, reason="another model")
    'not comparable: another model'
    >>> paper_verdict(0.83, float("nan"), float("nan"))
    'no interval'
    """
    if _missing(paper):
        return "no paper value"
    if reason:
        return reason if reason.startswith("not comparable") else f"not comparable: {reason}"
    if _missing(value):
        return "not computable here"
    if _missing(low) or _missing(high):
        return "no interval"
    return "inside" if low <= paper <= high else "outside"


def paper_verdicts(frame: pd.DataFrame, paper: str, reason: str | Sequence[str] = ""
                   ) -> list[str]:
    """:func:`paper_verdict` of every row of ``frame`` (the paper's number in column ``paper``,
    ours in ``value``, ``ci_low`` and ``ci_high`` where present), with one ``reason`` for all
    rows or one per row.

    >>> f = pd.DataFrame({"p": [0.5, 2.0, None, 1.0], "value": [0.4, 0.4, 0.4, None],
    ...                   "ci_low": [0.0, 0.0, 0.0, None], "ci_high": [1.0, 1.0, 1.0, None]})
    >>> paper_verdicts(f, "p")
    ['inside', 'outside', 'no paper value', 'not computable here']
    """
    reasons = [reason] * len(frame) if isinstance(reason, str) else list(reason)
    missing = pd.Series(np.nan, index=frame.index)
    ours = frame.get("value", pd.Series(0.0, index=frame.index))
    low, high = frame.get("ci_low", missing), frame.get("ci_high", missing)
    return [paper_verdict(p, lo, hi, reason=why, value=v) for p, v, lo, hi, why
            in zip(frame[paper], ours, low, high, reasons, strict=True)]


def _missing(x) -> bool:
    return x is None or bool(pd.isna(x))


#: Number formats of :func:`interval_text`: fixed decimals, significant digits, signed percent.
TEXT_STYLES = ("f", "g", "+%")


def interval_text(value, low=None, high=None, *, digits: int = 2, style: str = "f",
                  missing: str = "—") -> str:
    """``value [low, high]`` as the book's tables print a number with its interval; the value
    alone where it has no interval, ``missing`` where there is no value. ``style`` formats each
    number (:data:`TEXT_STYLES`): ``"f"`` with ``digits`` decimals, ``"g"`` with ``digits``
    significant digits, ``"+%"`` as a signed percentage with ``digits`` decimals.

    >>> interval_text(0.8312, 0.8, 0.86), interval_text(0.8312), interval_text(None)
    ('0.83 [0.80, 0.86]', '0.83', '—')
    >>> interval_text(0.1234, 0.1, 0.15, digits=1, style="+%")
    '+12.3% [+10.0%, +15.0%]'
    """
    if style not in TEXT_STYLES:
        raise ValueError(f"style must be one of {TEXT_STYLES}, got {style!r}")
    if _missing(value):
        return missing
    spec = f"+.{digits}%" if style == "+%" else f".{digits}{style}"
    if _missing(low) or _missing(high):
        return format(value, spec)
    return f"{format(value, spec)} [{format(low, spec)}, {format(high, spec)}]"


def with_interval_text(frame: pd.DataFrame, column: str = "ours", *, prefix: str = "",
                       **options) -> pd.DataFrame:
    """``frame`` with a column ``column`` of :func:`interval_text` (``options``) from its
    ``value``, ``ci_low`` and ``ci_high`` columns (``prefix`` before each name, e.g.
    ``"perplexity "``, for a second statistic of the row; ``value`` itself where the prefixed
    one is absent).

    >>> f = pd.DataFrame({"value": [0.5, None], "ci_low": [0.25, None], "ci_high": [0.75, None]})
    >>> with_interval_text(f)["ours"].tolist()
    ['0.50 [0.25, 0.75]', '—']
    """
    value = frame[f"{prefix}value"] if f"{prefix}value" in frame else frame["value"]
    missing = pd.Series(np.nan, index=frame.index)
    low, high = (frame.get(f"{prefix}{k}", missing) for k in ("ci_low", "ci_high"))
    return frame.assign(**{column: [interval_text(v, lo, hi, **options)
                                    for v, lo, hi in zip(value, low, high, strict=True)]})

"""Which tokens of an encoded text cover a span of its characters: the one rule the slot scorer,
the training objectives, the aligner's word vectors and the chapters use to find a word's tokens.

A token covers the span when its own characters overlap it. Tokens that cover no character are
never in a span: special tokens (by the tokenizer's ``special_tokens_mask`` where given, and by
their empty offsets ``(0, 0)`` where not) and any empty piece a tokenizer emits.

>>> offsets = [(0, 0), (0, 6), (6, 9), (9, 15), (15, 16), (0, 0)]  # [CLS] people in paris . [SEP]
>>> tokens_in_span(offsets, 10, 15)
[3]
>>> tokens_in_span(offsets, 0, 9)
[1, 2]
>>> tokens_in_span(offsets, 16, 16)
[]
"""

from __future__ import annotations

from collections.abc import Sequence


def tokens_in_span(offsets: Sequence[Sequence[int]], start: int, end: int,
                   special: Sequence[int] | None = None) -> list[int]:
    """Positions of the tokens whose characters overlap ``start:end`` (``offsets``: the
    tokenizer's ``offset_mapping``; ``special``: its ``special_tokens_mask``, if asked for)."""
    flags = special if special is not None else [0] * len(offsets)
    return [t for t, ((a, b), s) in enumerate(zip(offsets, flags, strict=True))
            if not s and b > a and a < end and b > start]

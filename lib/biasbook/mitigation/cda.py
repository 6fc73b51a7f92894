"""Counterfactual Data Augmentation over many groups (Zhao et al. 2018; Lu et al. 2020), as the
baseline of Ahn & Oh (2021, section 5): replace the group terms of a corpus (there: country names)
so that every group is mentioned equally often, then fine-tune on it.

**One-sided replacement** (:func:`balance_terms`): the corpus is rewritten in place, no original
sentence is kept. Text by text, each group mentioned is replaced by the group mentioned least so
far in the *rewritten* corpus (ties broken by a fixed random order, ``seed``), skipping groups
already used in that text, so that "France and Germany" never becomes "Iraq and Iraq"; every
mention of one group in one text gets the same substitute. With single mentions the final counts
differ by at most one; the result reports the counts before and after.

**Matching** (``boundary``): ``"word"`` needs a non-letter on both sides (English, German,
Spanish), ``"prefix"`` only before the term, so that suffixes stay attached (Turkish
*Türkiye'den*, Korean *미국에서*), ``"none"`` matches anywhere (Chinese). Longer forms win
("North Korea" before "Korea"). A substitute is written in its group's first form; particles
that depend on the noun's last sound (Korean 은/는) are not adjusted.

**Fine-tuning** on the rewritten corpus: :func:`training_examples` gives the ``(input_ids,
labels)`` pairs of :func:`biasbook.training.continual.continual_training` (the whole model, plain
SGD); :func:`biasbook.mitigation.alignment.finetune_head` trains the output head only.

>>> out = balance_terms(["France beat France.", "Spain won.", "France lost."],
...                     ["France", "Spain", "Egypt"], seed=0)
>>> dict(out.before), dict(out.after)
({'France': 3, 'Spain': 1, 'Egypt': 0}, {'France': 1, 'Spain': 1, 'Egypt': 2})
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from biasbook import validate

BOUNDARIES = ("word", "prefix", "none")


@dataclass
class Augmented:
    """The rewritten corpus and the mention counts per group before and after."""

    texts: list[str]
    before: Counter
    after: Counter
    changed: int  # texts that were rewritten

    @property
    def spread(self) -> int:
        """Most minus fewest mentions of a group after rewriting."""
        return max(self.after.values()) - min(self.after.values())


def _groups(terms: Mapping[str, Sequence[str]] | Sequence[str]) -> dict[str, list[str]]:
    if isinstance(terms, Mapping):
        groups = {str(k): validate.word_list(f"forms of {k!r}", v) for k, v in terms.items()}
    else:
        groups = {t: [t] for t in validate.word_list("terms", terms)}
    if len(groups) < 2:
        raise ValueError("counterfactual augmentation needs at least two groups")
    owners: dict[str, str] = {}
    for key, forms in groups.items():
        for form in forms:
            if not form.strip():
                raise ValueError(f"group {key!r} has an empty form")
            if owners.setdefault(form, key) != key:
                raise ValueError(f"the form {form!r} belongs to {owners[form]!r} and {key!r}")
    return groups


def term_pattern(forms: Sequence[str], boundary: str = "word",
                 ignore_case: bool = False) -> re.Pattern:
    """A regex matching any of ``forms`` (longest first) under ``boundary`` (module notes).

    >>> term_pattern(["Korea", "North Korea"]).findall("North Korea, Korean, Korea.")
    ['North Korea', 'Korea']
    >>> term_pattern(["Türkiye"], "prefix").findall("Türkiye'den")
    ['Türkiye']
    """
    validate.choice("boundary", boundary, BOUNDARIES)
    body = "|".join(re.escape(f) for f in sorted(set(forms), key=len, reverse=True))
    left = r"(?<!\w)" if boundary in ("word", "prefix") else ""
    right = r"(?!\w)" if boundary == "word" else ""
    return re.compile(f"{left}(?:{body}){right}", re.IGNORECASE if ignore_case else 0)


def mention_counts(texts: Sequence[str], terms: Mapping[str, Sequence[str]] | Sequence[str], *,
                   boundary: str = "word", ignore_case: bool = False) -> Counter:
    """How often each group is mentioned in ``texts`` (zero counts included).

    >>> dict(mention_counts(["Iran and Iraq", "Iraqi"], ["Iraq", "Iran", "Cuba"]))
    {'Iraq': 1, 'Iran': 1, 'Cuba': 0}
    """
    groups, pattern, owner = _matcher(terms, boundary, ignore_case)
    counts = Counter(dict.fromkeys(groups, 0))
    for text in validate.word_list("texts", texts, allow_empty=True):
        counts.update(owner[_norm(m, ignore_case)] for m in pattern.findall(text))
    return counts


def _norm(form: str, ignore_case: bool) -> str:
    return form.casefold() if ignore_case else form


def _matcher(terms: Mapping[str, Sequence[str]] | Sequence[str], boundary: str,
             ignore_case: bool) -> tuple[dict[str, list[str]], re.Pattern, dict[str, str]]:
    """The groups of ``terms``, the pattern of all their forms, and each form's group."""
    groups = _groups(terms)
    owner = {_norm(f, ignore_case): k for k, forms in groups.items() for f in forms}
    return groups, term_pattern(list(owner), boundary, ignore_case), owner


def balance_terms(texts: Sequence[str], terms: Mapping[str, Sequence[str]] | Sequence[str], *,
                  boundary: str = "word", ignore_case: bool = False, seed: int = 0
                  ) -> Augmented:
    """One-sided counterfactual rewriting of ``texts`` that balances the groups' mentions.

    ``terms`` maps each group to its surface forms (the first is written for a substitute), or
    lists one form per group.
    """
    texts = validate.word_list("texts", texts, allow_empty=True)
    groups, pattern, owner = _matcher(terms, boundary, ignore_case)
    priority = {k: i for i, k in enumerate(np.random.default_rng(seed).permutation(
        list(groups)).tolist())}
    before, after = Counter(dict.fromkeys(groups, 0)), Counter(dict.fromkeys(groups, 0))
    out, changed = [], 0
    for text in texts:
        found = [owner[_norm(m, ignore_case)] for m in pattern.findall(text)]
        before.update(found)
        if not found:
            out.append(text)
            continue
        substitute: dict[str, str] = {}
        for group, n in Counter(found).items():  # in order of first mention
            free = [k for k in groups if k not in substitute.values()]
            pick = min(free, key=lambda k: (after[k], priority[k]))
            substitute[group] = pick
            after[pick] += n
        def write(m: re.Match, sub: dict[str, str] = substitute) -> str:
            return groups[sub[owner[_norm(m.group(), ignore_case)]]][0]

        new = pattern.sub(write, text)
        changed += new != text
        out.append(new)
    return Augmented(out, before, after, changed)


def training_examples(lm, texts: Sequence[str], *, max_length: int = 128,
                      mlm_probability: float = 0.15, seed: int = 0
                      ) -> list[tuple[list[int], list[int]]]:
    """``(input_ids, labels)`` pairs for :func:`biasbook.training.continual.continual_training`:
    next-token labels for a causal LM, one fixed BERT masking (``seed``) for a masked LM."""
    from biasbook.training.objectives import lm_example, training_sequences

    rng = np.random.default_rng(seed)
    return [lm_example(lm, ids, rng, mlm_probability)
            for ids in training_sequences(lm, texts, max_length)]

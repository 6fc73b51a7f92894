"""Does the English CB score survive a rewording of its templates?

Seshadri, Pezeshkpour & Singh (2022) reword bias templates without changing their meaning and
find the measured bias moving by -81% to +162%. Ahn & Oh's ten templates are already such
rewordings of two sentences (target first, attribute first), and the chapter scores three of
them; notebook 02 asks how far the English CB score moves when templates 2 and 5 are reworded
once more, by the book's paraphrase sets (``data/ethnic-bias/paraphrases.yml``,
:func:`paraphrase_sets`). Only the templates change: targets, attributes, mode and word lists
are the run's, and the original is compared on the *same* template ids and cells, so a change is
the wording's alone (:func:`rewording_table`, with the chapter's interval over template x
attribute cells and a paired test that swaps each cell's two values).
:func:`biasbook.stats.order_holds` says whether the English models keep their order under every
wording.

:func:`score_sets` scores a model's paraphrases while :func:`~.runs.score_all` has it loaded
(its ``on_result`` hook), so the models are not loaded twice; it hands the reworded
:class:`~.languages.Language` to :func:`~.pipeline.cb_scores` directly.

>>> check_template("Someone from {target} is {attribute:a}.", "A person from {target} is "
...                "{attribute:a}.")
'Someone from {target} is {attribute:a}.'
>>> check_template("Someone is {attribute:a}.", "A person from {target} is {attribute:a}.")
... # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: template 'Someone is {attribute:a}.' must have the slots of ... it has {attribute:a}
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from biasbook import datafiles, stats
from biasbook.chapters.ethnic_bias import data, languages, uncertainty, uncertainty_cb
from biasbook.chapters.ethnic_bias.pipeline import CBResult, cb_scores
from biasbook.chapters.ethnic_bias.tables import base
from biasbook.models import LanguageModel
from biasbook.results import UNCERTAINTY

ORIGINAL = "original"  # the template set of the run's own templates
LANGUAGE = "en"


@dataclass(frozen=True)
class ParaphraseSet:
    """A named set of rewordings: English template id -> reworded template text.

    Used in: ethnic-bias/02.
    """

    name: str
    kind: str
    templates: dict[int, str]


def _slots(template: str) -> list[str]:
    return sorted("{" + kind + (f":{form}" if form else "") + "}"
                  for kind, form in data.PLACEHOLDER.findall(template))


def check_template(template: str, original: str) -> str:
    """``template`` itself if it has the placeholders of ``original`` (the template it rewords),
    each once; else a ``ValueError`` naming both. A rewording without ``{target}`` would give
    every country the same sentence, and another attribute form would change the claim
    (``{attribute:plural}`` for ``{attribute:a}``).

    Used in: ethnic-bias/02.
    """
    want, have = _slots(original), _slots(template)
    if have != want or len(set(have)) != len(have):
        raise ValueError(f"template {template!r} must have the slots of {original!r} once each "
                         f"({', '.join(want)}); it has {', '.join(have) or 'none'}")
    return template


def paraphrase_sets(names: Sequence[str] | None = None) -> dict[str, ParaphraseSet]:
    """The sets of ``data/ethnic-bias/paraphrases.yml`` named in ``names`` (None: all), in that
    order, each template checked against the English template it rewords (the book's
    ``en.yml``, whose ids both word lists share).

    Used in: ethnic-bias/02.
    """
    spec, names = datafiles.paraphrase_sets(languages.CHAPTER, names, original=ORIGINAL)
    if spec.get("language") != LANGUAGE:
        raise ValueError("data/ethnic-bias/paraphrases.yml must reword English templates")
    known = spec["sets"]
    english = languages.book_language(LANGUAGE).templates
    out = {}
    for name in names:
        templates = {}
        for tid, text in known[name]["templates"].items():
            if int(tid) not in english:
                raise KeyError(f"paraphrase set {name!r} rewords template {tid}, which English "
                               f"does not have ({list(english)})")
            original = english[int(tid)]["text"]
            if text == original:
                raise ValueError(f"paraphrase set {name!r}: template {tid} is the original")
            templates[int(tid)] = check_template(text, original)
        out[name] = ParaphraseSet(name, known[name]["kind"], templates)
    return out


def paraphrase_table(sets: Mapping[str, ParaphraseSet], word_lists: str = "authors"
                     ) -> pd.DataFrame:
    """One row per reworded template id: ``template``, then the ``original`` (from
    ``word_lists``) and each set's text.

    Used in: ethnic-bias/02.
    """
    english = data.language(LANGUAGE, word_lists).templates
    ids = sorted({t for s in sets.values() for t in s.templates})
    rows = [{"template": t, ORIGINAL: english[t]["text"],
             **{s.name: s.templates.get(t, "") for s in sets.values()}} for t in ids]
    return pd.DataFrame(rows)


def reworded_language(lang: languages.Language, templates: Mapping[int, str]) -> languages.Language:
    """``lang`` with only the templates of ``templates`` (id -> reworded text, each checked
    against ``lang``'s own template of that id); targets, attributes and forms unchanged.

    Used in: ethnic-bias/02.
    """
    if lang.code != LANGUAGE:
        raise ValueError(f"the paraphrase sets reword English templates, not {lang.code!r}")
    rows = {}
    for tid, text in templates.items():
        if tid not in lang.templates:
            raise KeyError(f"{lang.code} has no template {tid}")
        own = {k: v for k, v in lang.templates[tid].items() if k not in ("authors", "printed")}
        rows[tid] = {**own, "text": check_template(text, lang.templates[tid]["text"])}
    return replace(lang, templates=rows)


def score_sets(lm: LanguageModel, result: CBResult, sets: Mapping[str, ParaphraseSet], *,
               progress: bool | None = None) -> dict[str, CBResult]:
    """``{set: CBResult}`` of ``lm`` on each set's rewordings of the templates ``result`` (the
    model's English run) scored, with the run's targets, attributes, mode, ddof and word
    lists. Empty for another language, or when no set rewords a template of the run.

    Used in: ethnic-bias/02.
    """
    if result.language != LANGUAGE:
        return {}
    # the run's template ids that every set rewords (smoke: [2]; book: [2, 5])
    ids = [t for t in result.templates if all(t in s.templates for s in sets.values())]
    if not ids:
        return {}
    lang = data.language(LANGUAGE, result.word_lists)
    return {name: cb_scores(lm, reworded_language(lang, {t: s.templates[t] for t in ids}),
                               targets=result.targets, attributes=result.attributes,
                               templates=ids, mode=result.mode, ddof=result.ddof,
                               progress=progress)
            for name, s in sets.items()}


def rewording_table(scored: Iterable[tuple[str, CBResult]],
                    reworded: Mapping[str, Mapping[str, CBResult]], *, n_resamples: int = 9999,
                    seed: int = 0, alpha: float = 0.05) -> pd.DataFrame:
    """One row per (template set, English model), on the base lists (:func:`.tables.base`) and
    the compared template ids: the CB score with the chapter's interval over template x
    attribute cells (record schema), its ``change`` from the run's own templates on the same
    cells (absolute and ``relative``), the change's paired interval (``change ci_low``,
    ``change ci_high`` and the rest of the record schema, prefixed ``change``), permutation p
    and Holm's p over every (set, model), and ``moved`` (the
    change is real at ``alpha`` after the correction). ``headline``: the model's English CB on
    all the run's templates, as Table 4 reports it.

    Used in: ethnic-bias/02.
    """
    rows = []
    for group, full in scored:
        sets = reworded.get(full.model, {})
        if full.language != LANGUAGE or not sets:
            continue
        ids = list(next(iter(sets.values())).templates)
        same = {ORIGINAL: base(full.subset(templates=ids)),
                **{name: base(r) for name, r in sets.items()}}
        ci = uncertainty_cb.cb_intervals([(group, r) for r in same.values()],
                                         n_resamples=n_resamples, seed=seed)
        cells = {name: r.variances["variance"].to_numpy() for name, r in same.items()}
        for (name, r), interval in zip(same.items(), ci.to_dict("records"), strict=True):
            change = {"change": 0.0, "p_value": np.nan}
            if name != ORIGINAL:
                d = stats.paired_difference(cells[name], cells[ORIGINAL], np.mean,
                                            method="percentile", n_resamples=n_resamples,
                                            seed=seed, unit=uncertainty.UNIT)
                change = {"change": d.value, "p_value": d.p_value,
                          **{f"change {k}": v for k, v in d.interval.row().items()
                             if k != "value"}}
            rows.append({"template_set": name, "model": r.model, "group": group,
                         "templates": " ".join(map(str, r.templates)),
                         **{k: v for k, v in interval.items()
                            if k not in ("language", "model", "group")},
                         "value": r.cb, **change, "headline": base(full).cb})
    frame = pd.DataFrame(rows)
    if frame.empty:  # no English model, or no template a set rewords: the columns, no rows
        return pd.DataFrame(columns=["template_set", "model", "group", "templates", "value",
                                     *UNCERTAINTY, "change", "p_value", "headline", "relative",
                                     "p_holm", "moved"])
    # per (group, model): a model may be scored in English both as a monolingual and as a
    # multilingual model (the paper profile's stand-ins can be one folder)
    original = frame["value"].where(frame["template_set"] == ORIGINAL)
    frame["relative"] = frame["change"] / original.groupby(
        [frame["group"], frame["model"]]).transform("first")
    frame["p_holm"] = stats.holm_tested(frame["p_value"])
    frame["moved"] = frame["p_holm"] < alpha
    return frame

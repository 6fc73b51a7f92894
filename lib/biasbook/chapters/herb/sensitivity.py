"""Does HERB's overall C_w survive a rewording of its template, and WEAT a change of its lists?

Seshadri, Pezeshkpour & Singh (2022) reword bias templates without changing their meaning and
find the measured bias moving by -81% to +162%. HERB scores a single template, "People in
[region] are [description].", so its headline C_w could belong to that sentence as much as to the
model. Notebook 02 re-scores the book's paraphrase sets (``data/herb/paraphrases.yml``,
:func:`paraphrase_sets`) and sets each set's overall C_w beside the original's
(:func:`rewording_table`), with a bootstrap interval over descriptors and a paired test of the
change (descriptor columns swapped between the original and the paraphrase, the same test that
compares two models in :mod:`.uncertainty`). :func:`biasbook.stats.order_holds` says whether the
models keep their order under every wording.

**The tree.** The overall C_w is, up to about 1%, the sparseness of the six continent names'
vectors divided by 15 (notebook 02, "What the numbers are made of"): countries and cities enter
it through the near-uniform softmax weights only. So the rewording can be scored on a small tree,
the continents and the few most populous countries of each (:func:`rewording_tree`), with the
original template re-scored on the *same* tree; the notebook prints the original on both trees,
so that what the small tree changes is visible. ``countries_per_continent=None`` keeps the run's
whole tree (the ``paper`` profile).

**WEAT.** The same question for a word-list test: :func:`weat_variants` runs one WEAT on
Caliskan et al.'s lists and on the book's alternatives (``data/word-sets/book-alternatives.yml``),
each with a bootstrap interval over its target words beside the permutation p.

>>> check_template("In {region}, people are {description}.")
'In {region}, people are {description}.'
>>> check_template("People are {description}.")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: template 'People are {description}.' lacks the slot {region}: ...
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from string import Formatter

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from biasbook import datafiles, stats
from biasbook.chapters.herb import uncertainty
from biasbook.chapters.herb.downstream import select_countries
from biasbook.chapters.herb.model_scores import MASKED_METHODS, load_models
from biasbook.chapters.herb.regions import region_subset
from biasbook.chapters.herb.sentence_scores import TEMPLATE, descriptor_scores
from biasbook.chapters.herb.tables import SCALE
from biasbook.metrics import weat
from biasbook.metrics.herb import RegionTree
from biasbook.results import UNCERTAINTY
from biasbook.validate import choice

SLOTS: tuple[str, ...] = ("region", "description")
ORIGINAL = "original"  # the template set of the paper's one template


@dataclass(frozen=True)
class ParaphraseSet:
    """A named set of rewordings of the template; ``kind``: lexical, syntactic or both.

    Used in: herb/02.
    """

    name: str
    kind: str
    templates: tuple[str, ...]


def check_template(template: str) -> str:
    """``template`` itself if it has the slots ``{region}`` and ``{description}``, once each and
    no other; else a ``ValueError`` that names what is wrong. A rewording that lost a slot would
    score something else (every region the same sentence, or no descriptor at all).

    Used in: herb/02.
    """
    fields = [name for _, name, _, _ in Formatter().parse(template) if name is not None]
    for slot in SLOTS:
        if slot not in fields:
            raise ValueError(f"template {template!r} lacks the slot {{{slot}}}: a HERB template "
                             "needs {region} and {description}, once each")
    extra = sorted({f for f in fields if f not in SLOTS or fields.count(f) > 1})
    if extra:
        raise ValueError(f"template {template!r} has slots {extra} beyond one {{region}} and "
                         "one {description}")
    return template


def paraphrase_sets(names: Sequence[str] | None = None) -> dict[str, ParaphraseSet]:
    """The sets of ``data/herb/paraphrases.yml`` named in ``names`` (None: all), in that order,
    every template checked (:func:`check_template`); ``original`` is not a set name.

    Used in: herb/02.
    """
    spec, names = datafiles.paraphrase_sets("herb", names, original=ORIGINAL)
    if spec["original"] != TEMPLATE:
        raise ValueError(f"data/herb/paraphrases.yml paraphrases {spec['original']!r}, but the "
                         f"chapter scores {TEMPLATE!r}")
    known = spec["sets"]
    out = {}
    for name in names:
        templates = tuple(check_template(t) for t in known[name]["templates"])
        if not templates or TEMPLATE in templates:
            raise ValueError(f"paraphrase set {name!r} must hold rewordings, not the original")
        out[name] = ParaphraseSet(name, known[name]["kind"], templates)
    return out


def paraphrase_table(sets: Mapping[str, ParaphraseSet]) -> pd.DataFrame:
    """One row per template: ``template_set``, ``kind``, ``template``, the original first.

    Used in: herb/02.
    """
    rows = [{"template_set": ORIGINAL, "kind": "the paper's", "template": TEMPLATE}]
    rows += [{"template_set": s.name, "kind": s.kind, "template": t}
             for s in sets.values() for t in s.templates]
    return pd.DataFrame(rows)


def rewording_tree(table: pd.DataFrame, countries_per_continent: int | None) -> pd.DataFrame:
    """The region table the rewordings are scored on: the continents and the
    ``countries_per_continent`` most populous countries of each among ``table``'s, without
    cities (0: the continents alone, as leaves); ``None``: ``table`` itself. A subset of the
    run's regions, so that the original template's scores on it come from the scoring engine's
    cache. On the book's tree the original's overall C_w on 0, 1 and 2 countries per continent
    agreed within 0.3% when we wrote this.

    Used in: herb/02.
    """
    if countries_per_continent is None:
        return table
    if countries_per_continent < 0:
        raise ValueError("countries_per_continent must be None or >= 0")
    kept = select_countries(table[table["level"] == "country"], countries_per_continent)
    return region_subset(table, (table["level"] == "continent") | table["code"].isin(kept))


def template_scores(models: Sequence[str], regions: Sequence[str], words: Sequence[str],
                    templates: Sequence[str], *, progress: bool | None = None,
                    masked_method: str = "aul") -> dict[str, dict[str, NDArray[np.float64]]]:
    """``{model: {template: f(S) as [region, descriptor]}}``: each model loaded once and every
    template scored with the chapter's
    :func:`~.sentence_scores.descriptor_scores`, so a sentence already scored (the original on
    the run's regions) is a cache lookup. ``masked_method`` is how a masked model scores, as in
    :func:`~.model_scores.score_models`: the rewordings must be scored as the headline is.

    Used in: herb/02.
    """
    choice("masked_method", masked_method, MASKED_METHODS)
    out = {}
    for name in models:
        lm = load_models([name])[name]
        kw = MASKED_METHODS[masked_method] if lm.kind == "masked" else {}
        out[name] = {t: descriptor_scores(lm, regions, words, template=check_template(t),
                                          progress=progress, **kw) for t in templates}
        del lm
    return out


def set_scores(per_template: Mapping[str, Mapping[str, NDArray]],
               sets: Mapping[str, ParaphraseSet]) -> dict[str, dict[str, NDArray[np.float64]]]:
    """``{template set: {model: [region, descriptor]}}``, ``original`` first: a set's f(S) is
    the mean over its templates, as :func:`biasbook.metrics.herb.hierarchical_bias` averages a
    ``[template, region, descriptor]`` array.

    Used in: herb/02.
    """
    groups = {ORIGINAL: (TEMPLATE,), **{name: s.templates for name, s in sets.items()}}
    return {name: {model: np.mean([scores[t] for t in templates], axis=0)
                   for model, scores in per_template.items()}
            for name, templates in groups.items()}


def rewording_table(tree: RegionTree, by_set: Mapping[str, Mapping[str, NDArray]], *,
                    n_resamples: int, seed: int = 0, alpha: float = 0.05) -> pd.DataFrame:
    """One row per (template set, model), x 1e3 as Table 1 prints: the overall C_w with its
    bootstrap interval over descriptors (record schema), its ``change`` from the original
    template on the same tree (absolute and ``relative``), the change's paired interval
    (``change ci_low``, ``change ci_high`` and the rest of the record schema, prefixed
    ``change``), permutation p and Holm's p over every (set, model), and
    ``moved``: the change is real at ``alpha`` after the correction.

    Used in: herb/02.
    """
    rows = []
    for name, scores in by_set.items():
        spread = uncertainty.overall_intervals(tree, scores, n_resamples=n_resamples, seed=seed)
        for row in spread.to_dict("records"):
            change = {"change": 0.0, "p_value": np.nan}
            if name != ORIGINAL:
                model = row["model"]
                d = uncertainty.model_differences(
                    tree, {name: scores[model], ORIGINAL: by_set[ORIGINAL][model]},
                    n_resamples=n_resamples, seed=seed).iloc[0]
                change = {"change": d["value"], "p_value": d["p_value"],
                          **{f"change {k}": d[k] for k in UNCERTAINTY}}
            rows.append({"template_set": name, **row, **change})
    frame = pd.DataFrame(rows)
    for column in ("value", "ci_low", "ci_high", "change", "change ci_low", "change ci_high"):
        frame[column] *= SCALE["table1"]
    original = frame[frame["template_set"] == ORIGINAL].set_index("model")["value"]
    frame["relative"] = frame["change"] / frame["model"].map(original)
    frame["p_holm"] = stats.holm_tested(frame["p_value"])
    frame["moved"] = frame["p_holm"] < alpha
    return frame


def headline(ours: pd.DataFrame) -> pd.Series:
    """The chapter's headline per model, x 1e3: Table 1's overall C_w in paper mode, from
    :func:`.tables.herb_tables`' frame ``ours``.

    Used in: herb/02.
    """
    rows = ours.query("table == 'table1' and mode == 'paper' and metric == 'C_w' "
                      "and region == 'overall'")
    return rows.set_index("model")["value"] * SCALE["table1"]


def tree_effect(frame: pd.DataFrame, headline: Mapping[str, float]) -> pd.DataFrame:
    """Per model: the ``headline`` overall C_w (x 1e3, on the run's tree), the original
    template's on the rewording tree (from :func:`rewording_table`'s ``frame``) and their
    relative ``gap``: what scoring the rewordings on the smaller tree changes (0 on the run's
    own tree).

    Used in: herb/02.
    """
    original = frame[frame["template_set"] == ORIGINAL].set_index("model")["value"]
    out = pd.DataFrame({"headline (run's tree)": pd.Series(headline, dtype=float),
                        "original (rewording tree)": original})
    out["gap"] = out["original (rewording tree)"] / out["headline (run's tree)"] - 1
    return out.rename_axis("model")



# --------------------------------------------------------------------------- WEAT word lists


def weat_variants(kv, tests: Mapping[str, object], *, reference: str, n_resamples: int = 1999,
                  seed: int = 0) -> pd.DataFrame:
    """One WEAT on several word lists: per test (:class:`~biasbook.embeddings.wordsets.WeatTest`)
    the effect size with its percentile bootstrap interval over the target words (X and Y
    resampled separately, attribute words fixed; record schema), the permutation p, the words
    kept, and the change from the ``reference`` test (``change``, ``relative``,
    ``same_sign``). A word list is an item sample too: the interval says how far another draw
    of the *same kind* of words would move the effect; the rows say how far *other* words do.

    Used in: herb/02.
    """
    rows = []
    for name, test in tests.items():
        r = weat.weat(kv, test.x, test.y, test.a, test.b, seed=seed)
        row = {"test": name, "x": test.x_name, "y": test.y_name, "a": test.a_name,
               "b": test.b_name, "effect_size": r.effect_size, "p_value": r.p_value,
               **{f"n_{side}": r.kept[side] for side in ("x", "y", "a", "b")},
               "oov": "; ".join(f"{s}: {', '.join(w)}" for s, w in r.oov.items() if w)}
        if r.computable:
            used = {side: [w for w in getattr(test, side)
                           if w not in r.oov[side] and w not in r.dropped[side]]
                    for side in ("x", "y", "a", "b")}
            vecs = {side: np.asarray(kv[words], dtype=np.float64)
                    for side, words in used.items()}
            sx, sy = (weat.associations(vecs[s], vecs["a"], vecs["b"]) for s in "xy")
            ci = stats.interval((sx, sy), weat.two_sample_effect_sizes, paired=False,
                                method="percentile", n_resamples=n_resamples, seed=seed,
                                unit="target words")
            row |= {k: v for k, v in ci.row().items() if k != "value"}
        rows.append(row)
    frame = pd.DataFrame(rows)
    if reference not in set(frame["test"]):
        raise KeyError(f"reference test {reference!r} is not among {list(frame['test'])}")
    ref = frame.set_index("test").loc[reference, "effect_size"]
    frame["change"] = frame["effect_size"] - ref
    frame["relative"] = frame["change"] / abs(ref)
    frame["same_sign"] = np.sign(frame["effect_size"]) == np.sign(ref)
    return frame

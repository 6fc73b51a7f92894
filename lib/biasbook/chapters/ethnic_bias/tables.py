"""The chapter's tables: CB per language and model (Table 4), distributions over targets
(Figures 1, 3, 5), Jensen-Shannon divergences between languages (Tables 3 and 9) and the
sensitivity to the added targets and attributes (Table 7), with the paper's numbers beside ours.

>>> paper_table4().query("language == 'ko'")[["group", "cb"]].to_dict("records")
[{'group': 'monolingual', 'cb': 15.29}, {'group': 'multilingual', 'cb': 392.89}]
>>> m = paper_table3("multilingual")
>>> float(m.loc["en", "de"]), float(m.loc["de", "en"])
(0.13, 0.13)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from itertools import combinations

import numpy as np
import pandas as pd

from biasbook import datafiles
from biasbook.chapters.ethnic_bias import data, languages
from biasbook.chapters.ethnic_bias.pipeline import CBResult
from biasbook.metrics import cb

#: Table 7's four conditions: (name, with the 5 added attributes, with the 5 added targets).
CONDITIONS = (("base", False, False), ("+5 attributes", True, False),
              ("+5 targets", False, True), ("+5 attributes & 5 targets", True, True))


def _paper() -> dict:
    return datafiles.paper_results(languages.CHAPTER)["tables"]


def paper_table4() -> pd.DataFrame:
    """Table 4 as rows: language, group (``monolingual``/``multilingual``), cb, table; Arabic and
    Greek from Table 8's rows without fine-tuning (BERT and M-BERT), which Table 4 lacks.

    Used in: ethnic-bias/02.
    """
    paper = _paper()
    rows = [{"language": lang, "group": group, "cb": value, "table": "table4"}
            for lang, values in paper["table4"]["rows"].items()
            for group, value in zip(("monolingual", "multilingual"), values, strict=True)]
    groups = {"BERT": "monolingual", "M-BERT": "multilingual"}
    t8 = paper["table8"]
    rows += [{"language": lang, "group": groups[r["model"]], "cb": value, "table": "table8"}
             for r in t8["rows"] if r["model"] in groups and not r["fine_tuned"]
             for lang, value in zip(t8["columns"], r["values"], strict=True)]
    return pd.DataFrame(rows)


def paper_table3(group: str) -> pd.DataFrame:
    """Table 3's ``monolingual`` or ``multilingual`` triangle as a symmetric language x language
    frame (diagonal 0).

    Used in: ethnic-bias/03.
    """
    table = _paper()["table3"]
    languages = table["languages"]
    out = pd.DataFrame(0.0, index=languages, columns=languages)
    for a, row in table[group].items():
        for b, value in row.items():
            out.loc[a, b] = out.loc[b, a] = value
    return out


def paper_table7() -> pd.DataFrame:
    """Table 7 as rows: condition, group (``monolingual``: both rows are monolingual BERTs,
    fine-tuned or aligned), model, language, cb.

    Used in: ethnic-bias/03.
    """
    table = _paper()["table7"]
    return pd.DataFrame([{"condition": r["condition"], "group": "monolingual",
                          "model": r["model"], "language": lang,
                          "cb": v} for r in table["rows"]
                         for lang, v in zip(table["columns"], r["values"], strict=True)])


def base(result: CBResult) -> CBResult:
    """The result on the targets and attributes of A.2 only (the five added ones dropped).

    Used in: ethnic-bias/02, ethnic-bias/03.
    """
    return result.subset(targets=[t for t in result.targets if t in data.target_keys()],
                         attributes=[a for a in result.attributes if a in data.attribute_keys()])


def cb_table(results: Iterable[tuple[str, CBResult]]) -> pd.DataFrame:
    """One row per (group, result) on the base lists (:func:`base`): language, model, group, CB,
    the paper's Table 4 value for that language and group, and the sizes scored.

    Used in: ethnic-bias/02.
    """
    paper = paper_table4().set_index(["language", "group"])["cb"]
    rows = []
    for group, full in results:
        r = base(full)
        rows.append({"language": r.language, "model": r.model, "group": group, "cb": r.cb,
                     "paper": paper.get((r.language, group), np.nan),
                     "templates": len(r.templates), "attributes": len(r.attributes),
                     "targets": len(r.targets)})
    return pd.DataFrame(rows)


def per_template(results: Iterable[tuple[str, CBResult]]) -> pd.DataFrame:
    """CB score of every result on each of its templates alone (base lists).

    Used in: ethnic-bias/02.
    """
    return pd.DataFrame([{"language": r.language, "model": r.model, "group": group,
                          "template": t, "cb": base(r).subset(templates=[t]).cb}
                         for group, r in results for t in r.templates])


def attribute_variances(results: Iterable[tuple[str, CBResult]]) -> pd.DataFrame:
    """``Var_n log P'`` averaged over templates, per (model, language, attribute), base targets:
    which attributes carry a language's CB score.

    Used in: ethnic-bias/02.
    """
    frames = []
    for group, r in results:
        v = base(r).variances.groupby("attribute", sort=False)["variance"].mean()
        frames.append(v.rename("variance").reset_index().assign(
            language=r.language, model=r.model, group=group))
    return pd.concat(frames, ignore_index=True)


def token_effect(results: Iterable[tuple[str, CBResult]],
                 tokens: Mapping[tuple[str, str], pd.Series]) -> pd.DataFrame:
    """Does a country's token count predict its scores? Per (model, language), on the base
    lists: Spearman correlation of the token count with ``log p_tgt`` and with ``log P'`` (each
    averaged over templates and attributes); NaN where every country has the same count.
    ``tokens`` maps (model, language) to token counts by target key.

    Used in: ethnic-bias/02.
    """
    from scipy.stats import spearmanr

    rows = []
    for group, full in results:
        r = base(full)
        counts = tokens[(r.model, r.language)].reindex(list(r.targets)).to_numpy()
        constant = len(set(counts.tolist())) < 2
        row = {"model": r.model, "language": r.language, "group": group,
               "tokens min": int(counts.min()), "tokens max": int(counts.max())}
        for name, values in (("log p_tgt", r.log_p_target), ("log P'", r.log_p_norm)):
            per_target = values.mean(axis=(0, 1))
            row[f"spearman(tokens, {name})"] = (
                np.nan if constant else spearmanr(counts, per_target).statistic)
        rows.append(row)
    return pd.DataFrame(rows)


def top_targets(result: CBResult, attribute: str, template: int, k: int = 3) -> pd.DataFrame:
    """The ``k`` targets with the largest scaled ``P'`` for one (template, attribute).

    Used in: ethnic-bias/03.
    """
    dist = result.distribution(attribute, template).sort_values(ascending=False)
    return pd.DataFrame({"rank": range(1, k + 1), "target": dist.index[:k],
                         "scaled P'": dist.to_numpy()[:k]})


def example_variance(result: CBResult, attribute: str, template: int) -> float:
    """``Var_n log P'`` of one (template, attribute): the number the paper's Figure 3 prints
    beside each language.

    Used in: ethnic-bias/03.
    """
    t, a = result.templates.index(template), result.attributes.index(attribute)
    return float(cb.target_variances(result.log_p_norm[t, a], ddof=result.ddof))


def mean_jsd(first: CBResult, second: CBResult, *, averaged: bool = False) -> float:
    """Mean Jensen-Shannon divergence between two results' scaled ``P'`` distributions over their
    common targets, over the (template id, attribute) pairs both have; with ``averaged``, the
    divergence between the two distributions averaged over those pairs instead (the other
    reading of the paper's Table 3, never larger: the JSD is jointly convex).

    Used in: ethnic-bias/03, ethnic-bias/04.

    Template ids match templates of the same meaning across languages (Chinese has ids 1-5).
    """
    p, q, _, _ = common_distributions(first, second)
    if averaged:
        return float(cb.jensen_shannon(p.mean(axis=(0, 1)), q.mean(axis=(0, 1))))
    return float(cb.jensen_shannon(p, q).mean())


def common_distributions(first: CBResult, second: CBResult
                          ) -> tuple[np.ndarray, np.ndarray, list[int], list[str]]:
    """Both results' scaled ``P'`` as ``[templates, attributes, targets]`` arrays over the
    template ids, attributes and targets they share, and those template ids and attributes.

    Used in: ethnic-bias/03, ethnic-bias/04.
    """
    templates = [t for t in first.templates if t in second.templates]
    attributes = [a for a in first.attributes if a in second.attributes]
    targets = [n for n in first.targets if n in second.targets]
    if not templates or not attributes or len(targets) < 2:
        raise ValueError(f"{first.language}/{second.language}: no common templates, attributes "
                         "or targets to compare")
    p, q = (cb.scaled_probabilities(r.subset(templates=templates, attributes=attributes,
                                             targets=targets).log_p_norm)
            for r in (first, second))
    return p, q, templates, attributes


def jsd_cells(first: CBResult, second: CBResult) -> pd.DataFrame:
    """The Jensen-Shannon divergence of every (template id, attribute) cell the two results
    share: columns template, attribute, jsd. Their mean is :func:`mean_jsd`; they are the items
    an interval resamples.

    Used in: ethnic-bias/03, ethnic-bias/04.
    """
    p, q, templates, attributes = common_distributions(first, second)
    index = pd.MultiIndex.from_product([templates, attributes], names=["template", "attribute"])
    return pd.DataFrame({"jsd": cb.jensen_shannon(p, q).ravel()}, index=index).reset_index()


def jsd_matrix(results: Mapping[str, CBResult], *, averaged: bool = False) -> pd.DataFrame:
    """Symmetric matrix of :func:`mean_jsd` between the results (keyed by language).

    Used in: ethnic-bias/03.
    """
    names = list(results)
    out = pd.DataFrame(0.0, index=names, columns=names)
    for a, b in combinations(names, 2):
        out.loc[a, b] = out.loc[b, a] = mean_jsd(results[a], results[b], averaged=averaged)
    return out


def word_lists_table(first: Iterable[tuple[str, CBResult]],
                     second: Iterable[tuple[str, CBResult]]) -> pd.DataFrame:
    """The CB score of each (group, model, language) on two word lists (:func:`base` lists), one
    column per list, and ``change``: the second's score relative to the first's, minus 1.

    Used in: ethnic-bias/02.
    """
    second = {(g, r.model, r.language): r for g, r in second}
    rows = []
    for group, r in first:
        other = second.get((group, r.model, r.language))
        if other is None:
            raise KeyError(f"{r.model} ({group}) in {r.language} is scored on one list only")
        a, b = base(r).cb, base(other).cb
        rows.append({"group": group, "model": r.model, "language": r.language,
                     f"cb {r.word_lists}": a, f"cb {other.word_lists}": b, "change": b / a - 1,
                     "templates": len(r.templates), "attributes": len(base(r).attributes)})
    return pd.DataFrame(rows)


def sensitivity(result: CBResult, group: str) -> pd.DataFrame:
    """Table 7 form: the CB score on the result's base targets and attributes (those of the 30
    and 70 of A.2 it holds) and with the added ones it holds; conditions that would add nothing
    are left out. The causal prior is recomputed on each list. ``group`` (monolingual or
    multilingual) labels the rows: one model may be scored in both groups.

    Used in: ethnic-bias/03.
    """
    return pd.DataFrame([{"condition": name, "group": group, "language": result.language,
                          "model": result.model, "cb": part.cb, "targets": len(part.targets),
                          "attributes": len(part.attributes)}
                         for name, part in conditions(result)])


def conditions(result: CBResult) -> list[tuple[str, CBResult]]:
    """Table 7's conditions that ``result`` holds: (name, the result on that condition's lists),
    leaving out a condition that would add nothing (:func:`sensitivity`).

    Used in: ethnic-bias/03.
    """
    base_targets = [t for t in result.targets if t in data.target_keys()]
    base_attributes = [a for a in result.attributes if a in data.attribute_keys()]
    out = []
    for name, more_attributes, more_targets in CONDITIONS:
        targets = list(result.targets) if more_targets else base_targets
        attributes = list(result.attributes) if more_attributes else base_attributes
        if (more_targets and len(targets) == len(base_targets)) or (
                more_attributes and len(attributes) == len(base_attributes)):
            continue
        out.append((name, result.subset(targets=targets, attributes=attributes)))
    return out


def relative_change(frame: pd.DataFrame) -> pd.DataFrame:
    """A Table 7 frame (condition, group, model, language, cb) with ``change``: the CB score
    relative to the same group, model and language on the base lists, minus 1.

    Used in: ethnic-bias/03.

    >>> relative_change(paper_table7()).query("model == 'BERT' and language == 'es' and "
    ...                                       "condition == '+5 targets'")["change"].round(3).item()
    2.132
    """
    by = ["group", "model", "language"]
    base_cb = frame[frame["condition"] == "base"].set_index(by)["cb"]
    keys = pd.MultiIndex.from_frame(frame[by])
    return frame.assign(change=frame["cb"].to_numpy() / base_cb.reindex(keys).to_numpy() - 1)

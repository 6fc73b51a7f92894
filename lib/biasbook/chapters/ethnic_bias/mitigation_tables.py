"""The mitigation rows as the paper's tables (Ahn & Oh 2021, Tables 2, 4, 5, 8 and 9): one row
per measured model (:func:`table`), each set against its reference row (:func:`against`: the
relative change of CB, the perplexity ratio and the ``usable`` flag), the distance of each row's
distributions to English (:func:`jsd_to_english`, Table 9) and the paper's number for a row
(:func:`paper_cb`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from biasbook import datafiles, validate
from biasbook.chapters.ethnic_bias import languages, tables

if TYPE_CHECKING:
    from biasbook.chapters.ethnic_bias.mitigation import Outcome

#: The paper's row names for (model role, variant).
PAPER_ROWS = {("multilingual", "base"): ("M-BERT", False), ("multilingual", "ft"): ("M-BERT", True),
              ("monolingual", "base"): ("BERT", False), ("monolingual", "ft"): ("BERT", True),
              ("monolingual", "cda"): ("BERT + CDA", True),
              ("monolingual", "rand"): ("BERT + Rand. Alignment", True),
              ("monolingual", "align"): ("BERT + Alignment", True)}


def paper_cb(direction: str, role: str, variant: str, language: str,
             aligned_to: str | None = None) -> float | None:
    """The paper's CB for a row: Table 2 (X→EN, X in DE ES KO TR ZH, scored in X), Table 8
    (AR, EL) or Table 5 (EN→X, English scored; ``aligned_to`` X for the alignment rows).

    Used in: ethnic-bias/04.

    >>> paper_cb("x->en", "monolingual", "align", "ko")
    5.616
    >>> paper_cb("en->x", "multilingual", "ft", "en")
    0.558
    >>> paper_cb("en->x", "monolingual", "align", "en", aligned_to="tr")
    0.612
    """
    if (role, variant) not in PAPER_ROWS:
        return None
    name, tuned = PAPER_ROWS[(role, variant)]
    tables = datafiles.paper_results(languages.CHAPTER)["tables"]
    if direction == "x->en":
        table = tables["table8" if language in ("ar", "el") else "table2"]
        if language not in table["columns"]:
            return None
        return next((row["values"][table["columns"].index(language)] for row in table["rows"]
                     if row["model"] == name and row["fine_tuned"] == tuned), None)
    name = "BERT + Rand." if variant == "rand" else name  # Table 5's spelling
    wanted = (name, tuned, aligned_to if variant == "align" else None)
    return next((row["cb"] for row in tables["table5"]["rows"]
                 if (row["model"], row["fine_tuned"], row["aligned_to"]) == wanted), None)


def table(outcomes: Sequence[Outcome]) -> pd.DataFrame:
    """The outcomes as one table (Tables 2/5/8 form, with the quality column).

    Used in: ethnic-bias/04.
    """
    return pd.DataFrame([o.row for o in outcomes])


def against(frame: pd.DataFrame, reference: str = "base",
            max_perplexity_ratio: float = 2.0) -> pd.DataFrame:
    """Each row of :func:`table` set against the monolingual ``reference`` row of its direction
    and language: ``base`` (the paper's "BERT, F.T. X": what fine-tuning, CDA, alignment or a
    multilingual model (Method 1) change) or ``ft`` (the same fine-tuning without ``W`` or
    rewriting: what the rotation or CDA add; unfine-tuned rows are then left out). Columns: the
    relative change of CB, ours and the paper's, whether they go the same way, the perplexity
    ratio, and ``usable``: perplexity at most ``max_perplexity_ratio`` times the reference's
    (True where no quality measure exists). A row that is not usable measures a broken language
    model, not a mitigated one.

    Used in: ethnic-bias/04.

    >>> rows = pd.DataFrame({"direction": "x->en", "language": "ko", "role": "monolingual",
    ...                      "variant": ["base", "ft", "rand"], "cb": [2.0, 1.0, 3.0],
    ...                      "paper_cb": [15.293, 6.995, 6.087], "perplexity": [10, 12, 900]})
    >>> against(rows)[["variant", "cb_change", "agrees", "usable"]].values.tolist()
    [['ft', -0.5, True, True], ['rand', 0.5, False, False]]
    >>> against(rows, "ft")[["variant", "cb_change", "agrees", "usable"]].values.tolist()
    [['rand', 2.0, False, False]]
    """
    validate.choice("reference", reference, ("base", "ft"))
    keys = ["direction", "language"]
    aligned = ["aligned_to"] if "aligned_to" in frame else []  # tells EN→X's align rows apart
    is_reference = (frame["variant"] == reference) & (frame["role"] == "monolingual")
    ref = frame[is_reference].set_index(keys)[["cb", "paper_cb", "perplexity"]]
    others = frame[~is_reference & ~((reference == "ft") & (frame["variant"] == "base"))]
    others = others.join(ref.add_suffix("_ref"), on=keys, how="inner")
    ratio = others["perplexity"] / others["perplexity_ref"]
    ours = others["cb"] / others["cb_ref"] - 1
    paper = (others["paper_cb"] / others["paper_cb_ref"] - 1).astype(float)
    return others.assign(reference=reference, cb_change=ours, paper_change=paper,
                         agrees=np.where(paper.isna(), None, np.sign(ours) == np.sign(paper)),
                         perplexity_ratio=ratio,
                         usable=ratio.isna() | (ratio <= max_perplexity_ratio)
                         )[[*keys, "role", "variant", *aligned, "reference", "cb_ref", "cb",
                            "cb_change", "paper_change", "agrees", "perplexity_ratio", "usable"]
                           ].reset_index(drop=True)


def jsd_to_english(outcomes: Sequence[Outcome]) -> pd.DataFrame:
    """Table 9 form: the mean Jensen-Shannon divergence (:func:`tables.mean_jsd`) between each
    row's distributions and those of the English monolingual ``base`` row. X→EN rows: how close
    language X's model comes to English (the paper: closer after alignment); EN→X rows: how far
    the English model moves from its original (the paper: further after alignment). The paper's
    value for the row is beside ours: "No Alignment" for ``ft``, "Alignment" for ``align``.
    Empty where the outcomes hold no English ``base`` row (a plan without EN→X).

    Used in: ethnic-bias/04.
    """
    english, compared = english_pairs(outcomes)
    if english is None:
        return pd.DataFrame()
    paper = datafiles.paper_results(languages.CHAPTER)["tables"]["table9"]
    keys = ("direction", "language", "model", "variant", "aligned_to")
    return pd.DataFrame([{**{k: o.row[k] for k in keys},
                          "jsd_to_english_base": tables.mean_jsd(o.result, english.result),
                          "paper": _paper_jsd(paper, o.row)} for o in compared])


def english_pairs(outcomes: Sequence[Outcome]) -> tuple[Outcome | None, list[Outcome]]:
    """The English monolingual ``base`` outcome (None if the run has none) and, in order, the
    monolingual outcomes :func:`jsd_to_english` sets against it.

    Used in: ethnic-bias/04.
    """
    english = next((o for o in outcomes if o.row["language"] == "en"
                    and o.row["variant"] == "base" and o.row["role"] == "monolingual"), None)
    if english is None:
        return None, []
    return english, [o for o in outcomes if o is not english and o.row["role"] == "monolingual"]


def _paper_jsd(paper: dict, row: dict) -> float | None:
    column = {"ft": "no_alignment", "align": "alignment"}.get(row["variant"])
    if column is None:
        return None
    if row["direction"] == "x->en":
        printed = paper["rows"].get(row["language"])
    else:  # EN→X without alignment: one printed value, the same in every row
        printed = paper["rows"].get(row["aligned_to"] or next(iter(paper["rows"])))
    prefix = "x_to_en" if row["direction"] == "x->en" else "en_to_x"
    return None if printed is None else printed[paper["columns"].index(f"{prefix}_{column}")]


def distributions(outcomes: Sequence[Outcome], attribute: str, template: int) -> pd.DataFrame:
    """Scaled ``P'`` over targets for one attribute and template, one column per variant
    (the paper's Figures 4 and 6).

    Used in: ethnic-bias/04.
    """
    return pd.DataFrame({f"{o.row['language']} {o.row['variant']}":
                         o.result.distribution(attribute, template) for o in outcomes})

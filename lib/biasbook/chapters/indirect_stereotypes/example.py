"""Example 1 of the paper as a toy corpus a student can edit.

"engineer" occurs in sentences with "he" (``he_handsome`` + ``he_other`` times) and with "she"
(``she_handsome`` + ``she_other``), described as "handsome" in some of them. With the paper's
numbers (6, 2, 1, 3) "engineer" refers to a man twice as often as to a woman and is called
handsome three times as often when it does, and Eq. 2 scales the pair (handsome, engineer) by
6/7 (Eq. 1).

>>> round(eq1_factor(2 / 3, 3), 6)
0.857143
>>> table = example_1()
>>> float(table.loc["Eq. 2 factor (engineer made neutral)", "value"])
0.8571428571428571
"""

from __future__ import annotations

import pandas as pd

from biasbook.mitigation.birm import FEMININE, MASCULINE, birm, marginals
from biasbook.text.word_context import word_context_matrix


def eq1_factor(p_masculine: float, ratio: float) -> float:
    """Eq. 1: the factor on P(handsome | engineer) when engineer, which refers to a man with
    probability ``p_masculine``, becomes neutral, if handsome is ``ratio`` times likelier for a
    man: (ratio / 2 + 1 / 2) / (p ratio + (1 - p)).

    Used in: indirect-stereotypes/01.
    """
    return (0.5 * ratio + 0.5) / (p_masculine * ratio + (1 - p_masculine))


def example_corpus(he_handsome: int = 6, he_other: int = 2, she_handsome: int = 1,
                   she_other: int = 3, unmarked: int = 0) -> list[list[str]]:
    """The toy sentences; ``unmarked`` adds "handsome engineer" sentences with no pronoun.

    Used in: indirect-stereotypes/01, book/class/indirect-stereotypes.
    """
    return ([["he", "handsome", "engineer"]] * he_handsome + [["he", "nice", "engineer"]] * he_other
            + [["she", "handsome", "engineer"]] * she_handsome
            + [["she", "nice", "engineer"]] * she_other + [["handsome", "engineer"]] * unmarked)


def example_1(a: str = "handsome", b: str = "engineer", **counts: int) -> pd.DataFrame:
    """Every quantity of Eq. 2-3 for the pair (a, b) on :func:`example_corpus` (``counts``).

    Used in: indirect-stereotypes/01, book/class/indirect-stereotypes.
    """
    m = word_context_matrix(example_corpus(**counts), window=5, min_count=1,
                            min_sentence_length=1, distance_weighting=False,
                            markers=(MASCULINE, FEMININE))
    idx = m.index()
    s = {k: float(v[idx[a] if k[0] == "r" else idx[b]]) for k, v in marginals(m).items()}
    n, nx, ny, nxy = (m.value(a, b, ch) for ch in ("total", "x", "y", "xy"))
    rows = {
        f"n = count of ({a}, {b})": n,
        "n_x (near a masculine word)": nx, "n_y (near a feminine word)": ny,
        "n_xy (near both)": nxy,
        f"c_x = P(B∩X) N, B: context is {b}": s["cx"], "c_y = P(B∩Y) N": s["cy"],
        f"P(A|B∩X) = n_x / c_x, A: word is {a}": nx / s["cx"] if s["cx"] else float("nan"),
        "P(A|B∩Y) = n_y / c_y": ny / s["cy"] if s["cy"] else float("nan"),
        "r_x = P(A∩X) N": s["rx"], "r_y = P(A∩Y) N": s["ry"],
    }
    for side, label in (("context", f"Eq. 2 factor ({b} made neutral)"),
                        ("word", f"Eq. 2 factor ({a} made neutral)"),
                        ("both", "Eq. 3 factor (both, the paper's BIRM)")):
        rows[label] = birm(m, side=side).matrix.value(a, b) / n
    return pd.DataFrame({"value": rows})

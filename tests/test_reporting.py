"""The book's text of a number with its interval, and the verdict on the paper's number."""

import numpy as np
import pandas as pd

from biasbook import reporting


def test_paper_verdict_includes_the_bounds_and_says_why_it_cannot_answer():
    assert reporting.paper_verdict(0.86, 0.80, 0.86) == "inside"  # bounds included
    assert reporting.paper_verdict(0.8601, 0.80, 0.86) == "outside"
    assert reporting.paper_verdict(np.nan, 0.80, 0.86) == "no paper value"  # before any reason
    assert reporting.paper_verdict(0.83, 0.80, 0.86, reason="a plain LSTM") == \
        "not comparable: a plain LSTM"
    assert reporting.paper_verdict(0.83, 0.80, 0.86, reason="not comparable: Reddit") == \
        "not comparable: Reddit"  # one prefix, not two
    assert reporting.paper_verdict(0.83, 0.80, 0.86, value=np.nan) == "not computable here"
    assert reporting.paper_verdict(0.83, np.nan, 0.86) == "no interval"
    frame = pd.DataFrame({"paper": [0.5, 2.0], "value": [0.4, 0.4], "ci_low": [0.0, 0.0],
                          "ci_high": [1.0, 1.0]})
    assert reporting.paper_verdicts(frame, "paper", ["", "corpus"]) == [
        "inside", "not comparable: corpus"]

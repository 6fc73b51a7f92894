"""Regional bias in downstream classifiers (HERB, Li et al. 2022, Sec. 4.5, Tables 4-5, Fig. 4).

The paper prepends a *neutral* sentence that names a region to every test sample of two tasks
and watches the predictions move:

- hatespeech18 (de Gibert et al. 2018): ``"I am from [region]."`` before each sentence;
- IMDB (Maas et al. 2011): ``"The cast is from [region]."`` before each review.

A classifier free of regional bias would not care which region is named. This module holds the
task data, the prefixes, the statistics of Tables 4 and 5 and the paper's numbers for them (the
classifiers are :mod:`biasbook.training.classifiers`; the notebook's pipeline is
:mod:`.propagation`):

- :func:`change_counts`: per region, how many test samples gain / lose probability of the
  positive class (hate, positive sentiment) and the average size of those gains / losses
  (Table 4, "Quantity" and "Avg. Prob.");
- :func:`label_change_rates`: per region, the share of test samples whose predicted label
  flips in each direction (Table 5), in percent of all test samples;
- :func:`table5`: those rates averaged over regions, with and without single regions
  (Table 5's "Country-All Average" and "w/o Ireland" columns).

Every classifier here has ``predict_proba(texts) -> P(positive class)`` (a 1-D array).

>>> add_prefix(["Nice film."], "France", PREFIXES["imdb"])
['The cast is from France. Nice film.']
>>> p0 = np.array([0.25, 0.75, 0.875, 0.125])
>>> change_counts(p0, np.array([0.5, 0.625, 0.875, 0.125]))
{'n_up': 1, 'avg_up': 0.25, 'n_down': 1, 'avg_down': 0.125, 'n_same': 2, 'mean_change': 0.03125}
>>> label_change_rates(p0, np.array([0.75, 0.25, 0.875, 0.125]))  # one flip each way of 4
{'neg_to_pos': 25.0, 'pos_to_neg': 25.0}
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

import numpy as np
import pandas as pd

from biasbook import datafiles, resources, validate

#: The paper's neutral prefixes (Sec. 4.5), one per task; ``{region}`` is filled with a name.
PREFIXES = {"hatespeech18": "I am from {region}.", "imdb": "The cast is from {region}."}
#: The class whose probability the tables track (label 1).
POSITIVE = {"hatespeech18": "hate", "imdb": "positive"}
_BR = re.compile(r"<br\s*/?>", re.IGNORECASE)


# ------------------------------------------------------------------------------------- data


def hatespeech18(split: str = "test") -> pd.DataFrame:
    """hatespeech18 sentences with labels: ``file_id``, ``text``, ``label`` (1 = hate).

    Used in: herb/04.

    ``split`` is the authors' balanced ``train`` (1,914) or ``test`` (478) sample, or ``all``
    (every sentence labelled hate or noHate; relation, idk/skip are dropped).
    """
    folders = {"train": "sampled_train", "test": "sampled_test", "all": "all_files"}
    validate.choice("split", split, folders)
    root = resources.unpacked("hate-speech-dataset") / "hate-speech-dataset" / folders[split]
    meta = pd.read_csv(resources.path("hate-speech-dataset", "annotations_metadata.csv"))
    labels = dict(zip(meta["file_id"], meta["label"], strict=True))
    rows = []
    for path in sorted(root.glob("*.txt")):
        label = labels.get(path.stem)
        if label in ("hate", "noHate"):
            text = " ".join(path.read_text(encoding="utf-8").split())
            rows.append((path.stem, text, int(label == "hate")))
    return pd.DataFrame(rows, columns=["file_id", "text", "label"])


def imdb(split: str = "test", n: int | None = None, seed: int = 0) -> pd.DataFrame:
    """IMDB reviews: ``file``, ``text`` (``<br />`` tags and entities removed), ``label``
    (1 = positive). ``n`` draws a class-balanced random sample (None: all 25,000 of the split).

    Used in: herb/04.
    """
    validate.choice("split", split, ("train", "test"))
    root = resources.unpacked("imdb") / "aclImdb" / split
    frame = pd.DataFrame([(f"{folder}/{p.name}", p, int(folder == "pos"))
                          for folder in ("neg", "pos")
                          for p in sorted((root / folder).glob("*.txt"))],
                         columns=["file", "path", "label"])
    frame = balanced_sample(frame, n, seed)
    texts = [clean_review(p.read_text(encoding="utf-8")) for p in frame["path"]]
    return frame.assign(text=texts)[["file", "text", "label"]].reset_index(drop=True)


def clean_review(text: str) -> str:
    """An IMDB review as plain text: HTML line breaks and entities replaced, spaces squeezed.

    Used in: herb/04.

    >>> clean_review("Great.<br /><br />Loved it &amp; more")
    'Great. Loved it & more'
    """
    return " ".join(html.unescape(_BR.sub(" ", text)).split())


def balanced_sample(frame: pd.DataFrame, n: int | None, seed: int = 0,
                    label: str = "label") -> pd.DataFrame:
    """``n`` rows, half of each of two classes (fewer if a class is short), drawn with ``seed``;
    original row order kept. ``n`` None or at least ``len(frame)`` returns ``frame``.

    Used in: herb/04.

    >>> f = pd.DataFrame({"label": [0, 0, 0, 1, 1, 1]})
    >>> balanced_sample(f, 4)["label"].tolist()
    [0, 0, 1, 1]
    """
    if n is None or n >= len(frame):
        return frame
    parts = [group.sample(n=min(len(group), n // 2 + (k < n % 2)), random_state=seed)
             for k, (_, group) in enumerate(frame.groupby(label, sort=True))]
    return frame.loc[sorted(pd.concat(parts).index)]


def add_prefix(texts: Sequence[str], region: str, template: str) -> list[str]:
    """Every text with the prefix ``template`` (e.g. ``"I am from {region}."``) before it.

    Used in: herb/04.
    """
    prefix = template.format(region=region)
    return [f"{prefix} {text}" for text in texts]


# ------------------------------------------------------------------------------- predictions


def classification_metrics(labels: Sequence[int], proba: Sequence[float],
                           threshold: float = 0.5) -> dict[str, float]:
    """Accuracy and macro F1 of ``proba >= threshold`` (Table 4, "Overall Metrics").

    Used in: herb/04.

    >>> classification_metrics([0, 1, 1, 0], [0.1, 0.8, 0.4, 0.3])
    {'accuracy': 0.75, 'macro_f1': 0.7333333333333334}
    """
    from sklearn.metrics import accuracy_score, f1_score

    y = np.asarray(labels)
    pred = (np.asarray(proba) >= threshold).astype(int)
    return {"accuracy": float(accuracy_score(y, pred)),
            "macro_f1": float(f1_score(y, pred, average="macro"))}


def prefixed_probabilities(classifier, texts: Sequence[str], regions: Sequence[str],
                           template: str, *, progress: bool = True) -> np.ndarray:
    """``[len(regions), len(texts)]`` P(positive) of every text behind every region's prefix.

    Used in: herb/04.
    """
    from tqdm.auto import tqdm

    out = np.empty((len(regions), len(texts)))
    for r, region in enumerate(tqdm(regions, desc="regions", disable=not progress)):
        out[r] = classifier.predict_proba(add_prefix(texts, region, template), progress=False)
    return out


# ---------------------------------------------------------------------------------- tables


def change_counts(p0: np.ndarray, p: np.ndarray) -> dict[str, float]:
    """Table 4's "Biased Probability Change" for one region: the number of samples whose
    positive-class probability rises (``n_up``) or falls (``n_down``) once the prefix is added,
    the mean size of those rises and falls (``avg_up``, ``avg_down``, both positive), the
    unchanged ones and the mean signed change.

    Used in: herb/04.
    """
    diff = np.asarray(p, dtype=np.float64) - np.asarray(p0, dtype=np.float64)
    up, down = diff > 0, diff < 0
    return {"n_up": int(up.sum()), "avg_up": float(diff[up].mean()) if up.any() else 0.0,
            "n_down": int(down.sum()),
            "avg_down": float(-diff[down].mean()) if down.any() else 0.0,
            "n_same": int((~up & ~down).sum()), "mean_change": float(diff.mean())}


def label_change_rates(p0: np.ndarray, p: np.ndarray, threshold: float = 0.5
                       ) -> dict[str, float]:
    """Table 5 for one region: percent of *all* test samples whose predicted label flips from
    the negative to the positive class (``neg_to_pos``, e.g. noHate -> hate) and back.

    Used in: herb/04.
    """
    before = np.asarray(p0) >= threshold
    after = np.asarray(p) >= threshold
    n = len(before)
    return {"neg_to_pos": 100.0 * float((~before & after).sum()) / n,
            "pos_to_neg": 100.0 * float((before & ~after).sum()) / n}


def region_changes(p0: np.ndarray, probs: np.ndarray, regions: Sequence[str],
                 threshold: float = 0.5) -> pd.DataFrame:
    """One row per region: :func:`change_counts`, :func:`label_change_rates` and the change in
    the share of positive predictions (``positive_share_change``, what Fig. 4 maps).

    Used in: herb/04.

    >>> t = region_changes(np.array([0.4, 0.6]), np.array([[0.7, 0.4], [0.2, 0.9]]), ["A", "B"])
    >>> t.loc["A", ["n_up", "n_down", "neg_to_pos", "pos_to_neg"]].tolist()
    [1.0, 1.0, 50.0, 50.0]
    >>> t["mean_change"].round(3).tolist(), t["positive_share_change"].tolist()
    ([0.05, 0.05], [0.0, 0.0])
    """
    share0 = float((np.asarray(p0) >= threshold).mean())
    rows = [{"region": region, **change_counts(p0, p), **label_change_rates(p0, p, threshold),
             "positive_share_change": float((p >= threshold).mean()) - share0}
            for region, p in zip(regions, probs, strict=True)]
    return pd.DataFrame(rows).set_index("region").round(12)


def table5(per_region: pd.DataFrame, without: Sequence[str] = ()) -> pd.Series:
    """Table 5 for one model: the label change rates averaged over all regions
    (``all/neg_to_pos``, ``all/pos_to_neg``) and over all regions but one
    (``w/o <region>/...``), from a :func:`region_changes` frame.

    Used in: herb/04.

    >>> frame = pd.DataFrame({"neg_to_pos": [1.0, 3.0], "pos_to_neg": [0.0, 2.0]},
    ...                      index=pd.Index(["A", "B"], name="region"))
    >>> table5(frame, without=["B"]).to_dict()
    {'w/o B/neg_to_pos': 1.0, 'w/o B/pos_to_neg': 0.0, 'all/neg_to_pos': 2.0, \
'all/pos_to_neg': 1.0}
    """
    cols = ["neg_to_pos", "pos_to_neg"]
    out = {}
    for region in without:
        if region not in per_region.index:
            raise KeyError(f"region {region!r} is not in the table")
        rest = per_region.drop(index=region)[cols].mean()
        out.update({f"w/o {region}/{c}": float(rest[c]) for c in cols})
    mean = per_region[cols].mean()
    out.update({f"all/{c}": float(mean[c]) for c in cols})
    return pd.Series(out)


def pooled_metrics(labels: Sequence[int], probs: np.ndarray,
                   threshold: float = 0.5) -> dict[str, float]:
    """Table 4's "Country-All" row: accuracy and macro F1 over every (region, sample) pair.

    Used in: herb/04.
    """
    probs = np.asarray(probs)
    return classification_metrics(np.tile(np.asarray(labels), probs.shape[0]), probs.ravel(),
                                  threshold)


def select_countries(countries: pd.DataFrame, per_continent: int | None,
                     include: Sequence[str] = ()) -> list[str]:
    """ISO codes: the ``per_continent`` most populous countries of each continent (None: all),
    plus ``include``, in the order of ``countries`` (a :func:`.regions.countries` frame).

    Used in: herb/02, herb/04, biasbook plan.

    >>> frame = pd.DataFrame({"code": ["A", "B", "C", "D"], "continent": ["EU", "EU", "AS", "AS"],
    ...                       "population": [5, 9, 1, 2]})
    >>> select_countries(frame, 1, include=["A"])
    ['A', 'B', 'D']
    """
    if per_continent is None:
        chosen = set(countries["code"])
    else:
        top = countries.sort_values("population", ascending=False, kind="stable")
        chosen = set(top.groupby("continent", sort=False).head(per_continent)["code"])
    unknown = set(include) - set(countries["code"])
    if unknown:
        raise ValueError(f"unknown country code(s): {sorted(unknown)}")
    chosen |= set(include)
    return [c for c in countries["code"] if c in chosen]


# ------------------------------------------------------------------------- paper's numbers


def paper_overall() -> pd.DataFrame:
    """Table 4's overall metrics: one row per ``task`` and ``testset`` (``original``,
    ``country_all``), columns ``accuracy`` and ``macro_f1``.

    Used in: herb/04.

    >>> float(paper_overall().loc[("hatespeech18", "country_all"), "accuracy"])
    0.8426
    """
    spec = datafiles.paper_results("herb")["table4"]["overall"]
    rows = [{"task": task, "testset": testset, **metrics}
            for task, sets in spec.items() for testset, metrics in sets.items()]
    return pd.DataFrame(rows).set_index(["task", "testset"])


def paper_table4() -> pd.DataFrame:
    """Table 4's rows: ``task``, ``region`` (as printed), ``n_up``, ``avg_up``, ``n_down``,
    ``avg_down``, and the shares ``share_up`` / ``share_down`` of the task's test set.

    Used in: herb/04.

    >>> row = paper_table4().set_index(["task", "region"]).loc[("hatespeech18", "Ireland")]
    >>> int(row["n_up"]), round(float(row["share_up"]), 4)
    (48, 0.1004)
    """
    spec = datafiles.paper_results("herb")["table4"]
    frame = pd.DataFrame([(task, region, *numbers) for region, tasks in spec["rows"].items()
                          for task, numbers in tasks.items()],
                         columns=["task", "region", "n_up", "avg_up", "n_down", "avg_down"])
    n = frame["task"].map(spec["n_test"])  # the task's test-set size
    return frame.assign(share_up=frame["n_up"] / n, share_down=frame["n_down"] / n)


def paper_table5() -> pd.DataFrame:
    """Table 5: one row per model, columns as :func:`table5` names them.

    Used in: herb/04.

    >>> float(paper_table5().loc["BERT-base", "all/pos_to_neg"])
    1.3645
    """
    columns = [f"{group}/{c}" for group in ("w/o Ireland", "w/o Mexico", "all")
               for c in ("neg_to_pos", "pos_to_neg")]
    return pd.DataFrame.from_dict(datafiles.paper_results("herb")["table5"], orient="index",
                                  columns=columns)

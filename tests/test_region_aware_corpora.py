"""Region-labelled corpora of the region-aware chapter: cleaning and splitting on hand-written
text, the region mapping, the top-3 country rule, balanced seeded samples, clear errors."""

import gzip

import pandas as pd
import pytest

from biasbook import resources
from biasbook.chapters.region_aware import cleaning, corpora, sources

UN_YEARS = (2015, 2016)  # two sessions keep the UN tests to a few seconds


def test_sentences_split_at_full_stops_but_not_after_titles_initials_or_decimals():
    text = ('Mr. President, I thank you. The U.N. Charter (Art. 2) says so! Did J. F. Kennedy '
            'agree? "Yes." 2.5 per cent of 1990. 45 States voted.')
    assert cleaning.split_sentences(text) == [
        "Mr. President, I thank you.", "The U.N. Charter (Art. 2) says so!",
        "Did J. F. Kennedy agree?", '"Yes."', "2.5 per cent of 1990.", "45 States voted."]


def test_speech_cleaning_joins_wrapped_lines_and_drops_paragraph_numbers():
    raw = "\ufeff1.\tWe meet in the fifty-\nfirst session of the\nAssembly.\n12. It is\tnew."
    assert cleaning.clean_speech(raw) == ("We meet in the fifty-first session of the Assembly. "
                                         "It is new.")


def test_tweet_cleaning():
    assert cleaning.clean_tweet("@a @b_c Good morning #Accra!! https://t.co/x www.x.com") == \
        "Good morning Accra!!"
    assert cleaning.clean_tweet("RT @news: Rain &gt; sun &amp; wind") == "Rain > sun & wind"


def test_short_and_repeated_documents_are_dropped():
    kept = cleaning.kept(["one two three four five", "one two", "one two three four five",
                          "a b c d e f"], min_words=5)
    assert kept == ["one two three four five", "a b c d e f"]


def test_every_un_speaker_is_placed_or_named_as_left_out():
    table = sources.un_countries()
    assert table["code"].is_unique
    assert set(table.loc[table["region"].isna(), "continent"]) == {"SA"}
    assert set(table["region"].dropna()) == set(corpora.REGIONS)
    placed = table.set_index("code")["region"]
    assert placed[["CSK", "DDR", "YUG"]].tolist() == ["Europe"] * 3
    assert placed[["EGY", "JPN", "AUS", "MEX", "TUR"]].tolist() == [
        "Africa", "Asia", "Oceania", "North America", "Asia"]
    assert "EU" not in placed.index  # an organisation, not a country
    assert table["speeches"].sum() + 14 == 10952  # every speech but the EU's 14


def test_tweet_volume_keeps_the_three_largest_asian_cities():
    full = corpora.volume_table("tweets", all_sources=True)
    assert full["region"].unique().tolist() == ["Africa", "Asia", "Europe", "North America"]
    asia = full[full["region"] == "Asia"]
    assert asia["examples"].is_monotonic_decreasing and asia["rank"].tolist() == [1, 2, 3, 4]
    assert asia.loc[~asia["selected"], "code"].tolist() == [asia["code"].iloc[-1]]
    top = corpora.volume_table("tweets")
    assert len(top) == 6 and top["selected"].all()
    for code, n in zip(full["code"], full["examples"], strict=True):
        assert n == len(corpora.source_texts("tweets", code))


def test_stricter_filters_keep_fewer_tweets():
    loose = corpora.volume_table("tweets", min_english=0.0, all_sources=True)
    strict = corpora.volume_table("tweets", min_english=0.9, min_words=8, all_sources=True)
    merged = loose.merge(strict, on="code", suffixes=("_loose", "_strict"))
    assert (merged["examples_strict"] < merged["examples_loose"]).all()


def test_documents_are_balanced_seeded_and_nested():
    docs = corpora.document_frame("tweets", max_docs=90, seed=3)
    assert docs.groupby("region").size().eq(90).all()
    assert docs[docs["region"] == "Asia"].groupby("code").size().eq(30).all()
    again = corpora.document_frame("tweets", max_docs=90, seed=3)
    pd.testing.assert_frame_equal(docs, again)
    small = corpora.document_frame("tweets", max_docs=30, seed=3)
    for code, group in small.groupby("code"):
        big = docs.loc[docs["code"] == code, "text"].tolist()
        assert group["text"].tolist() == big[:len(group)]
    other = corpora.document_frame("tweets", max_docs=90, seed=4)
    assert set(other["text"]) != set(docs["text"])
    for code, group in docs.groupby("code"):
        assert set(group["text"]) <= set(corpora.source_texts("tweets", code))


def test_documents_and_tokens_by_region():
    docs = corpora.documents("tweets", regions=["Europe", "Africa"], max_docs=5)
    assert list(docs) == ["Europe", "Africa"] and all(len(v) == 5 for v in docs.values())
    toks = corpora.tokenized("tweets", regions=["Europe"], max_docs=5)
    assert toks["Europe"] == [corpora.tokens(t) for t in docs["Europe"]]
    assert all(t == t.lower() and t[0].isalnum() for doc in toks["Europe"] for t in doc)


def test_un_documents_come_from_the_top_three_countries_of_each_region():
    table = corpora.volume_table("un-debates", years=UN_YEARS, all_sources=True)
    top = table[table["selected"]]
    assert top.groupby("region").size().eq(3).all()
    for _, group in table.groupby("region"):
        chosen = group[group["selected"]]["examples"]
        assert chosen.min() >= group[~group["selected"]]["examples"].max()
    docs = corpora.document_frame("un-debates", regions=["Oceania"], max_docs=60, seed=0,
                                  years=UN_YEARS)
    assert set(docs["code"]) == set(top.loc[top["region"] == "Oceania", "code"])
    one = docs["code"].iloc[0]
    files = [p for p in sources.text_corpora.un_debate_files()
             if p.stem.startswith(f"{one}_") and int(p.stem[-4:]) in range(2015, 2017)]
    sentences = [s for p in files for s in sources.un_speech_sentences(p)]
    assert set(docs.loc[docs["code"] == one, "text"]) <= set(sentences)
    assert table.set_index("code").loc[one, "examples"] == len(sentences) == len(
        corpora.source_texts("un-debates", one, years=UN_YEARS))


@pytest.mark.parametrize("call, match", [
    (lambda: corpora.documents("reddit"), "domain must be one of"),
    (lambda: corpora.documents("tweets", regions=["Oceania"]), "no documents for region"),
    (lambda: corpora.documents("tweets", regions="Asia"), "bare string"),
    (lambda: corpora.documents("tweets", max_docs=0), "max_docs must be >= 1"),
    (lambda: corpora.documents("tweets", years=(2010, 2012)), "has no years"),
    (lambda: corpora.documents("un-debates", min_english=0.5), "filters tweets"),
    (lambda: corpora.volume_table("un-debates", years=(2016, 2015)), "first <= last"),
    (lambda: corpora.volume_table("tweets", per_region=0), "per_region must be"),
])
def test_bad_input_is_named(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


def test_geowac_is_read_from_the_users_file_and_missing_offline(tmp_path, monkeypatch, offline):
    monkeypatch.setenv("BIASBOOK_DATA", str(tmp_path / "mirror"))
    monkeypatch.setenv("BIASBOOK_CACHE", str(tmp_path / "cache"))
    sources._geowac_frame.cache_clear()
    with pytest.raises(resources.ResourceError, match="NOT AVAILABLE OFFLINE"):
        corpora.volume_table("geowac")
    rows = [("NG", f"Nigerian example number {i} here.") for i in range(5)]
    rows += [("KE", f"Kenyan example number {i} here.") for i in range(3)]
    rows += [("GH", f"Ghana example number {i} here.") for i in range(4)]
    rows += [("ML", "Mali example number one here."), ("NZ", "Kiwi example number one here."),
             ("NG", "too short")]
    target = tmp_path / "cache" / "data" / "geowac-english" / "geowac-english.tsv.gz"
    target.parent.mkdir(parents=True)
    with gzip.open(target, "wt") as fh:
        fh.write("country\ttext\n" + "".join(f"{c}\t{t}\n" for c, t in rows))
    try:
        table = corpora.volume_table("geowac", all_sources=True)
        assert table[["region", "code", "examples", "selected"]].values.tolist() == [
            ["Africa", "NG", 5, True], ["Africa", "GH", 4, True], ["Africa", "KE", 3, True],
            ["Africa", "ML", 1, False], ["Oceania", "NZ", 1, True]]
        docs = corpora.documents("geowac", max_docs=6)
        assert sorted(len(v) for v in docs.values()) == [1, 6]
    finally:
        sources._geowac_frame.cache_clear()


def test_table_helpers_in_the_papers_forms():
    from biasbook.chapters.region_aware import tables

    table5 = tables.paper_table5()
    assert len(table5) == 15 and table5.groupby("region").size().eq(3).all()
    assert table5.set_index("country").loc["Canada", "examples"] == 7965736
    options = {"tweets": corpora.domain_options("tweets")}
    cover = tables.selection_coverage(options).set_index("region")
    full = corpora.volume_table("tweets", all_sources=True)
    asia = full[full["region"] == "Asia"]
    assert cover.loc["Asia", "countries"] == 4 == len(asia)
    assert cover.loc["Asia", "selected"] == asia["examples"].head(3).sum()
    assert cover.loc["Asia", "share_selected"] == pytest.approx(
        asia["examples"].head(3).sum() / asia["examples"].sum())
    assert cover.loc["Europe", "share_selected"] == 1.0
    fm = tables.fm_table(options).set_index("region")
    assert (fm["total"] == fm["female"] + fm["male"]).all()
    assert fm.loc["Africa", "paper_female_share"] == pytest.approx(20153 / 57895)

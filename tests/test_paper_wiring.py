"""Every chapter's ``paper`` profile, run end to end offline: the wiring, not the numbers.

The paper profiles name hub models (BERT, ALBERT, RoBERTa, BART, eight monolingual BERTs,
multilingual BERT, Llama-2-chat, Mistral-Instruct) and corpora that are not mirrored (UMBC
WebBase, GeoWAC). Here each hub model is replaced by a tiny random-init model of its kind saved
to a folder (``--stand-in``, :func:`biasbook.testing.stand_in`), every loop is bounded
(``--cap``, each chapter's ``plan.cap``), and the two corpora are stood in for by mirrored text in
their formats, so that the paper profile's code paths run: its model kinds, languages, mitigation
rows, corpora and objectives. Each chapter runs through ``biasbook run`` in its own process, three
at a time. A notebook that fails fails the test, with its cell and error, unless it is one of the
bugs listed in :data:`KNOWN_BUGS` (code this test may not change), which are reported as expected
failures until they are fixed.
"""

import gzip
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from biasbook import cli, plan, profiles, results, testing

pytestmark = pytest.mark.slow

CAP = 2


def hub_models(chapter: str) -> set[str]:
    """The hub models the plan of the chapter's paper profile counts work for."""
    resolved, _ = cli.prepare(chapter, "paper", loadable=False)
    works = plan.chapter_module(chapter).work(resolved)
    return set(plan.hub_models(w.model for w in works if w.model))


def ethnic_bias_alphabet() -> str:
    """Every character of the ethnic-bias word lists (the book's and the authors'), which the
    stand-ins must spell: the scoring engine refuses [UNK]."""
    from biasbook.chapters.ethnic_bias import authors, languages

    book = "".join((profiles.project_data_dir() / "ethnic-bias" / f"{code}.yml").read_text(
        encoding="utf-8") for code in languages.LANGUAGES)
    theirs = " ".join(line for code in languages.LANGUAGES for line in [
        *authors.lines(f"templates/templates_{code}.txt"),
        *authors.lines(f"templates/occ_{code}.txt"),
        *authors.configuration()[code]["nationality"]])
    return book + theirs


@pytest.fixture(scope="module")
def wiring(tmp_path_factory):
    """(stand-in folders by hub id, the UMBC-format folder, the private cache)."""
    root = tmp_path_factory.mktemp("wiring")
    alphabet = ethnic_bias_alphabet()
    hub = sorted(set().union(*(hub_models(c) for c in profiles.chapters())))
    folders = {h: str(testing.stand_in(h, root / h.replace("/", "--"), alphabet=alphabet))
               for h in hub}
    return folders, umbc_folder(root / "umbc"), geowac_cache(root / "cache")


def umbc_folder(folder: Path) -> Path:
    """IMDB review sentences, one a line, as UMBC WebBase is distributed."""
    from biasbook.chapters.indirect_stereotypes.corpus import sentences
    from biasbook.text.corpora import imdb_reviews

    folder.mkdir()
    lines = [" ".join(s) for s in sentences(imdb_reviews(400, seed=0).values())]
    (folder / "part-0.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


GEOWAC_COUNTRIES = ["NG", "KE", "GH", "IN", "PK", "PH", "GB", "DE", "FR", "US", "CA", "MX",
                    "AU", "NZ", "FJ"]  # three per region of the paper


def geowac_cache(cache: Path) -> Path:
    """A private BIASBOOK_CACHE holding a GeoWAC-format file (country, text) of IMDB reviews,
    whose he/she sentences give the topic models gendered documents."""
    from biasbook.text.corpora import imdb_reviews

    target = cache / "data" / "geowac-english" / "geowac-english.tsv.gz"
    target.parent.mkdir(parents=True)
    reviews = [" ".join(r) for r in imdb_reviews(3000, seed=1).values()]
    with gzip.open(target, "wt", encoding="utf-8") as out:
        out.write("country\ttext\n")
        for i, text in enumerate(reviews):
            out.write(f"{GEOWAC_COUNTRIES[i % len(GEOWAC_COUNTRIES)]}\t{text}\n")
    return cache


EXTRA = {
    "indirect-stereotypes": lambda umbc: [
        "-p", f"corpus={{source: umbc, path: {umbc}, max_sentences: 30000000, seed: 0}}"],
    # gensim's default 2,000,000 n-gram buckets take 800 MB a region on disk (4 GB a run, which
    # once filled CI's disk); the wiring is the same with fewer
    "region-aware": lambda _: ["-p", "fasttext=" + json.dumps({**profiles.notebook_params(
        "region-aware", "paper", "05-region-aware-weat")["fasttext"], "bucket": 20000})],
}

#: Failures this test found in code it may not change, by chapter: (exception, text in its
#: message, where and why). Such a failure is reported as an expected failure naming the bug; any
#: other failure fails the test, and a fixed bug lets the chapter pass.
KNOWN_BUGS: dict[str, list[tuple[str, str, str]]] = {}


CHAPTERS = [c for c in profiles.chapters() if c != "demo"]
PARALLEL = 3  # runs at once: a run waits on kernels and files much of its time
LONGEST = {"ethnic-bias": 3, "region-aware": 2, "herb": 1}  # started first


def run(chapter: str, folders: dict, umbc: Path, cache: Path, runs: Path
        ) -> subprocess.CompletedProcess:
    """``biasbook run CHAPTER --profile paper --cap CAP --stand-in ...`` in its own process."""
    argv = [sys.executable, "-m", "biasbook.cli", "run", chapter, "--profile", "paper",
            "--cap", str(CAP), "--runs", str(runs / chapter)]
    for hub in sorted(hub_models(chapter)):
        argv += ["--stand-in", f"{hub}={folders[hub]}"]
    argv += EXTRA.get(chapter, lambda _: [])(umbc)
    # one thread per kernel: tiny models gain nothing from more, and runs share the cores
    env = {**os.environ, "BIASBOOK_CACHE": str(cache), "HF_HUB_OFFLINE": "1",
           "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    return subprocess.run(argv, capture_output=True, text=True, env=env)


@pytest.fixture(scope="module")
def runs(wiring, tmp_path_factory):
    """Every chapter's run, ``PARALLEL`` at a time, longest first: ``{chapter: (process, runs
    folder)}``."""
    folders, umbc, cache = wiring
    root = tmp_path_factory.mktemp("runs")
    order = sorted(CHAPTERS, key=lambda c: -LONGEST.get(c, 0))
    with ThreadPoolExecutor(PARALLEL) as pool:
        futures = {c: pool.submit(run, c, folders, umbc, cache, root) for c in order}
    return {c: (f.result(), root / c) for c, f in futures.items()}


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_the_paper_profile_runs_offline_on_stand_ins(chapter, runs, wiring):
    done, folder = runs[chapter]
    if done.returncode:
        error = next((line for line in done.stderr.splitlines()
                      if line.startswith("biasbook: error: ")), "")
        for ename, text, bug in KNOWN_BUGS.get(chapter, []):
            if error.startswith(f"biasbook: error: {ename}: ") and text in error:
                pytest.xfail(f"known bug: {bug}")
        pytest.fail(f"{chapter} failed (exit {done.returncode}):\n{done.stderr[-4000:]}")
    assert done.stdout.startswith(f"plan {chapter}/paper:"), done.stdout[:300]
    assert "no downloads" in done.stdout.splitlines()[0]
    (run_dir,) = folder.iterdir()
    assert results.run_status(run_dir) == "finished"
    table = results.load(run_dir)
    stems = {Path(n).stem for n in profiles.chapter_spec(chapter)["notebooks"]}
    assert set(table["notebook"]) <= stems and not table.empty
    stood_in = {os.path.basename(wiring[0][h]) for h in hub_models(chapter)}
    if stood_in:
        recorded = {os.path.basename(str(m)) for m in table["model"].dropna()}
        assert stood_in & recorded, f"no stand-in among the models {recorded}"

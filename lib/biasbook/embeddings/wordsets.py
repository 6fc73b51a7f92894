"""WEAT word sets as data: ``data/word-sets/<name>.yml``, one file per source.

Each file names its ``source`` (a key of ``book/references.bib``), holds named ``sets`` of words
and ``tests`` that combine four sets (a set written ``<file>:<set>`` comes from another file), and
says whether its tests are ``lowercase`` by default (the indirect-stereotypes paper lower-cases its
corpus; Caliskan's lists are cased). Published numbers travel with a test as ``paper`` (shown by
:func:`biasbook.metrics.weat.run_tests` beside ours).

- ``caliskan``: the ten tests of Caliskan et al. (2017) with their GloVe 840B effect sizes.
- ``indirect-stereotypes``: the unrelated, direct and indirect tests of the 2023 paper (Tables
  2-4, Appendix B).

>>> tests = load("indirect-stereotypes")
>>> t = tests["professions-adjectives"]
>>> t.group, t.x_name, t.a_name, len(t.x), len(t.b)
('indirect', 'Masculine professions', 'Masculine adjectives', 10, 8)
>>> load("caliskan")["science-arts-gender"].x[4:6], tests["science-arts-gender"].x[4:6]
(('Einstein', 'NASA'), ('einstein', 'nasa'))
>>> gendered_pairs({"t": tests["math-arts-gender"]})[:2]
[('female', 'male'), ('woman', 'man')]
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from biasbook import datafiles, paths
from biasbook.embeddings.vectors import normalise

FOLDER = "word-sets"
SIDES = ("x", "y", "a", "b")


@dataclass(frozen=True)
class WeatTest:
    """Target sets ``x``, ``y`` and attribute sets ``a``, ``b`` of one WEAT, with their names.

    ``gendered`` maps ``"masculine"``/``"feminine"`` to the sides holding gendered words (for RIPA
    pairs); ``paper`` holds the numbers the source reports (e.g. ``effect_size``, ``p_value``).
    """

    name: str
    title: str
    x: tuple[str, ...]
    y: tuple[str, ...]
    a: tuple[str, ...]
    b: tuple[str, ...]
    x_name: str
    y_name: str
    a_name: str
    b_name: str
    source: str
    group: str | None = None
    paper: dict = field(default_factory=dict)
    gendered: dict = field(default_factory=dict)

    def sets(self) -> dict[str, list[str]]:
        """``{"x": [...], "y": [...], "a": [...], "b": [...]}``."""
        return {side: list(getattr(self, side)) for side in SIDES}

    @classmethod
    def of(cls, name: str, x: Iterable[str], y: Iterable[str], a: Iterable[str],
           b: Iterable[str]) -> WeatTest:
        """A test from your own word lists (sets named X, Y, A, B; source "user").

        >>> WeatTest.of("career-family", ["salary"], ["home"], ["john"], ["amy"]).sets()["a"]
        ['john']
        """
        return cls(name=name, title=name, x=tuple(x), y=tuple(y), a=tuple(a), b=tuple(b),
                   x_name="X", y_name="Y", a_name="A", b_name="B", source="user")

    def lowercased(self) -> WeatTest:
        """The same test with every word lower-cased (for uncased vectors such as GloVe 6B) by
        :func:`biasbook.embeddings.vectors.normalise`, the lookup's own case rule."""
        lowered = {}
        for side in SIDES:
            words = [normalise(w, "lower") for w in getattr(self, side)]
            if len(set(words)) < len(words):
                raise ValueError(f"test {self.name}: lower-casing merges words of set {side}")
            lowered[side] = tuple(words)
        return replace(self, **lowered)


def names() -> list[str]:
    """The word-set files available: ``data/word-sets/*.yml``."""
    return sorted(p.stem for p in (paths.project_data_dir() / FOLDER).glob("*.yml"))


def _resolve(ref: str, file: str, raw: dict, include_excluded: bool) -> tuple[str, tuple[str, ...]]:
    other, _, set_name = ref.rpartition(":")
    table = datafiles.load(FOLDER, other)["sets"] if other else raw["sets"]
    if set_name not in table:
        raise KeyError(f"word-set file {other or file!r} has no set {set_name!r}")
    spec = table[set_name]
    dropped = set() if include_excluded else set(spec.get("excluded") or ())
    return spec["name"], tuple(w for w in spec["words"] if w not in dropped)


def load(name: str, *, lowercase: bool | None = None,
         include_excluded: bool = False) -> dict[str, WeatTest]:
    """The tests of ``data/word-sets/<name>.yml``, in file order.

    ``lowercase=None`` follows the file's own ``lowercase`` flag; ``include_excluded`` keeps the
    words a source excluded from its own run (Caliskan's italic names), left out by default.
    """
    raw = datafiles.load(FOLDER, name)
    lowercase = raw.get("lowercase", False) if lowercase is None else lowercase
    tests = {}
    for test_name, spec in raw["tests"].items():
        resolved = {side: _resolve(spec["sets"][side], name, raw, include_excluded)
                    for side in SIDES}
        test = WeatTest(
            name=test_name, title=spec.get("title", test_name), source=raw["source"],
            group=spec.get("group"), paper=dict(spec.get("paper") or {}),
            gendered=dict(spec.get("gendered") or {}),
            **{side: words for side, (_, words) in resolved.items()},
            **{f"{side}_name": label for side, (label, _) in resolved.items()})
        tests[test_name] = test.lowercased() if lowercase else test
    return tests


def gendered_pairs(tests: Mapping[str, WeatTest] | Iterable[WeatTest]) -> list[tuple[str, str]]:
    """``(feminine, masculine)`` word pairs from the gendered sides of ``tests``, by position.

    Appendix C of the indirect-stereotypes paper averages RIPA over "all pairs of feminine and
    masculine words tested by WEAT": the i-th feminine word of a test pairs with its i-th masculine
    word. Repeated pairs are kept once, in order of appearance; tests without gendered sides add
    nothing.
    """
    items = tests.values() if isinstance(tests, Mapping) else tests
    pairs: list[tuple[str, str]] = []
    for test in items:
        if not test.gendered:
            continue
        fem = getattr(test, test.gendered["feminine"])
        masc = getattr(test, test.gendered["masculine"])
        if len(fem) != len(masc):
            raise ValueError(f"test {test.name}: {len(fem)} feminine and {len(masc)} masculine "
                             "words cannot be paired by position")
        pairs.extend(p for p in zip(fem, masc, strict=True) if p not in pairs)
    return pairs

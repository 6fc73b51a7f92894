"""Per-chapter parameters for the three profiles, and which notebook reads which parameter.

- ``smoke``: CI and the classroom; minutes on 2 cores, tiny sizes, one offline model.
- ``book``: what the rendered book shows; offline models, the whole book in under an hour.
- ``paper``: the papers' own models and sizes; needs the Hugging Face hub and ideally a GPU.

Each chapter has ``data/profiles/<chapter>.yml``: a ``title``, the ``notebooks`` in reading order
and one mapping per profile. In a profile,

- a plain key (``models: [...]``) is a **chapter-level** parameter: every notebook of the chapter
  that declares it gets it;
- a key named after a notebook (its file name without ``.ipynb``) holds a mapping of that
  notebook's **own** parameters, which also override chapter-level ones for that notebook;
- ``extends: <profile>`` starts from another profile of the same file and changes only what it
  lists (notebook groups are merged key by key).

A notebook *declares* what it reads in its first code cell, tagged ``parameters``: literals only
(``profile = "book"``, ``models = None``). The next cell calls :func:`resolve`, where every
parameter left at ``None`` takes the profile's value. The runner (:mod:`biasbook.cli`) injects a
user's parameter into every notebook that declares it; a parameter that no notebook of the
chapter declares is an error that lists the valid ones.

>>> p = resolve("demo", "smoke", "01-offline-models", models=None, sentences=["A cat."])
>>> p["profile"], p["sentences"]
('smoke', ['A cat.'])
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from functools import cache
from pathlib import Path

import yaml

from biasbook.paths import PROJECT_ROOT, project_data_dir

PROFILES = ("smoke", "book", "paper")
NOTEBOOKS_DIR = PROJECT_ROOT / "notebooks"


class ProfileError(ValueError):
    """An unknown chapter, profile, notebook or parameter."""


def chapters() -> list[str]:
    """Every chapter that has a profile file."""
    return sorted(p.stem for p in (project_data_dir() / "profiles").glob("*.yml"))


@cache
def chapter_spec(chapter: str) -> dict:
    """The parsed profile file of a chapter, every profile with its ``extends`` chain applied."""
    path = project_data_dir() / "profiles" / f"{chapter}.yml"
    if not path.exists():
        raise ProfileError(f"unknown chapter {chapter!r}; chapters: {', '.join(chapters())}")
    spec = yaml.safe_load(path.read_text())
    missing = [p for p in PROFILES if p not in spec]
    if missing:
        raise ProfileError(f"{path} lacks the profile(s) {missing}")
    stems = [Path(n).stem for n in spec["notebooks"]]
    for profile in PROFILES:
        spec[profile] = _expanded(spec, profile, path, ())
        for key, value in spec[profile].items():
            if isinstance(value, dict) and key not in stems and _looks_like_group(key):
                raise ProfileError(f"{path}: profile {profile!r} has a group {key!r} that is not "
                                   f"a notebook of the chapter ({', '.join(stems)})")
    return spec


def _looks_like_group(key: str) -> bool:
    return key[:2].isdigit() and key[2:3] == "-"


def _expanded(spec: dict, profile: str, path: Path, seen: tuple[str, ...]) -> dict:
    if profile in seen:
        raise ProfileError(f"{path}: 'extends' loops through {' -> '.join((*seen, profile))}")
    own = dict(spec[profile] or {})
    parent = own.pop("extends", None)
    if parent is None:
        return own
    if parent not in PROFILES:
        raise ProfileError(f"{path}: profile {profile!r} extends unknown profile {parent!r}")
    merged = _expanded(spec, parent, path, (*seen, profile))
    for key, value in own.items():
        if _looks_like_group(key) and isinstance(value, dict):
            merged[key] = {**merged.get(key, {}), **value}
        else:
            merged[key] = value
    return merged


def notebook_params(chapter: str, profile: str, notebook: str) -> dict:
    """Every parameter the profile gives ``notebook``: chapter-level keys, then its own group."""
    if profile not in PROFILES:
        raise ProfileError(f"unknown profile {profile!r}; profiles: {', '.join(PROFILES)}")
    spec = chapter_spec(chapter)
    stem = Path(notebook).stem
    stems = [Path(n).stem for n in spec["notebooks"]]
    if stem not in stems:
        raise ProfileError(f"chapter {chapter!r} has no notebook {stem!r}; "
                           f"notebooks: {', '.join(stems)}")
    values = spec[profile]
    params = {k: v for k, v in values.items() if k not in stems}
    params.update(values.get(stem) or {})
    return params


def resolve(chapter: str, profile: str, notebook: str, **overrides) -> dict:
    """Parameters of ``notebook`` in ``chapter`` under ``profile``; overrides not ``None`` win.

    A notebook names every parameter it reads (its papermill parameters, ``None`` where it keeps
    the profile's value) and gets back just those and ``profile``, so that its record and its
    display hold no other notebook's keys. A name that the profile does not give this notebook is
    an error (a typo would be silently ignored otherwise).

    ``torch_threads``, where the notebook reads it, is also applied here (``torch`` intra-op
    threads for the rest of the kernel; ``None`` leaves torch's default), so that the thread
    count is a profile setting a user can override like any other, not a line in a notebook.

    >>> sorted(resolve("herb", "smoke", "05-toxic-training", epochs=None))
    ['epochs', 'profile']
    """
    params = notebook_params(chapter, profile, notebook)
    unknown = sorted(set(overrides) - set(params))
    if unknown:
        raise ProfileError(f"notebook {chapter}/{Path(notebook).stem} has no parameter(s) "
                           f"{unknown} in profile {profile!r}; known: {sorted(params)}")
    resolved = {k: params[k] if v is None else v for k, v in overrides.items()}
    resolved["profile"] = profile
    if resolved.get("torch_threads") is not None:
        set_torch_threads(resolved["torch_threads"])
    return resolved


def from_notebook(chapter: str, notebook: str, namespace: Mapping) -> dict:
    """:func:`resolve` with a notebook's own parameters cell as the overrides, so that the
    header names each parameter once: ``P = profiles.from_notebook(chapter, notebook,
    globals())`` reads ``profile`` and every name the profile gives ``notebook`` that the
    namespace holds as a value (``None``, a number, a string, a list or a mapping; an imported
    module of the same name is not a parameter).

    >>> cell = {"profile": "smoke", "epochs": None, "lr": 0.5, "objective": __import__("math")}
    >>> from_notebook("herb", "05-toxic-training", cell)
    {'epochs': 1, 'lr': 0.5, 'profile': 'smoke'}
    """
    profile = namespace["profile"]
    values = (type(None), bool, int, float, str, list, tuple, dict)
    overrides = {k: namespace[k] for k in notebook_params(chapter, profile, notebook)
                 if isinstance(namespace.get(k, ...), values)}
    return resolve(chapter, profile, notebook, **overrides)


def set_torch_threads(n: int) -> None:
    """Run torch on ``n`` intra-op threads (a positive integer).

    >>> set_torch_threads(0)
    Traceback (most recent call last):
    ...
    biasbook.profiles.ProfileError: torch_threads must be a positive integer, got 0
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ProfileError(f"torch_threads must be a positive integer, got {n!r}")
    import torch  # here, not at import: reading a profile needs no torch

    torch.set_num_threads(n)


def declared_params(path: str | Path) -> list[str]:
    """Names assigned in a notebook's ``parameters`` cell (without ``profile``), in order."""
    import nbformat

    nb = nbformat.read(str(path), as_version=4)
    cells = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    if len(cells) != 1:
        raise ProfileError(f"{path} needs exactly one cell tagged 'parameters', has {len(cells)}")
    names = [t.id for node in ast.parse(cells[0].source).body if isinstance(node, ast.Assign)
             for t in node.targets if isinstance(t, ast.Name)]
    return [n for n in names if n != "profile"]


def split_user_params(chapter: str, params: dict) -> dict[str, dict]:
    """Route a user's ``-p`` parameters to the notebooks that declare them.

    ``key=value`` goes to every notebook that declares ``key``; ``<notebook>.key=value`` (the
    notebook's file name without ``.ipynb``, or just its number: ``04.models``) to that one only,
    and wins over the chapter-wide value there. A key that no notebook declares is an error.
    """
    spec = chapter_spec(chapter)
    declared = {Path(n).stem: declared_params(NOTEBOOKS_DIR / chapter / n)
                for n in spec["notebooks"]}
    routed: dict[str, dict] = {stem: {} for stem in declared}
    valid = sorted({k for names in declared.values() for k in names})
    scoped = {}
    for key, value in params.items():
        target, dot, name = key.rpartition(".")
        if dot:
            stems = [s for s in declared if s == target or s.split("-")[0] == target]
            if len(stems) != 1:
                raise ProfileError(f"{key!r}: chapter {chapter!r} has no notebook {target!r}; "
                                   f"notebooks: {', '.join(declared)}")
            if name not in declared[stems[0]]:
                raise ProfileError(f"notebook {stems[0]} has no parameter {name!r}; "
                                   f"it reads: {', '.join(declared[stems[0]])}")
            scoped[(stems[0], name)] = value
            continue
        users = [s for s, names in declared.items() if key in names]
        if not users:
            raise ProfileError(f"no notebook of chapter {chapter!r} reads a parameter {key!r}; "
                               f"valid: {', '.join(valid)}")
        for stem in users:
            routed[stem][key] = value
    for (stem, name), value in scoped.items():
        routed[stem][name] = value
    return routed

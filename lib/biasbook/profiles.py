"""Per-chapter parameters for the three profiles.

- ``smoke``: CI and the classroom; minutes on 2 cores, tiny sizes, one offline model.
- ``book``: what the rendered book shows; offline models, the whole book in under an hour.
- ``paper``: the papers' own models and sizes; needs the Hugging Face hub and ideally a GPU.

Each chapter has ``data/profiles/<chapter>.yml``: a ``title``, the ``notebooks`` in reading order,
and one mapping of parameters per profile. A notebook's ``parameters`` cell holds literals only
(``profile = "book"``, ``models = None``); the next cell calls :func:`resolve`, where every
parameter left at ``None`` takes the profile's value.

>>> p = resolve("demo", "smoke", models=None, sentences=["A cat."])
>>> p["profile"], p["sentences"]
('smoke', ['A cat.'])
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import yaml

from biasbook.paths import project_data_dir

PROFILES = ("smoke", "book", "paper")


class ProfileError(ValueError):
    """An unknown chapter, profile or parameter."""


def profile_file(chapter: str) -> Path:
    return project_data_dir() / "profiles" / f"{chapter}.yml"


def chapters() -> list[str]:
    """Every chapter that has a profile file."""
    return sorted(p.stem for p in (project_data_dir() / "profiles").glob("*.yml"))


@cache
def chapter_spec(chapter: str) -> dict:
    """The parsed profile file of a chapter."""
    path = profile_file(chapter)
    if not path.exists():
        raise ProfileError(f"unknown chapter {chapter!r}; chapters: {', '.join(chapters())}")
    spec = yaml.safe_load(path.read_text())
    missing = [p for p in PROFILES if p not in spec]
    if missing:
        raise ProfileError(f"{path} lacks the profile(s) {missing}")
    return spec


def resolve(chapter: str, profile: str, **overrides) -> dict:
    """Parameters of ``chapter`` under ``profile``; overrides that are not ``None`` win.

    A notebook names every parameter it reads (its papermill parameters, ``None`` where it keeps
    the profile's value) and gets back just those and ``profile``, so that its record and its
    display hold no other notebook's keys; with no names, every parameter comes back. A name
    that the profile does not define is an error (a typo would be silently ignored otherwise).

    >>> sorted(resolve("herb", "smoke", toxic_epochs=None))
    ['profile', 'toxic_epochs']
    """
    if profile not in PROFILES:
        raise ProfileError(f"unknown profile {profile!r}; profiles: {', '.join(PROFILES)}")
    params = dict(chapter_spec(chapter)[profile])
    unknown = sorted(set(overrides) - set(params))
    if unknown:
        raise ProfileError(f"chapter {chapter!r} has no parameter(s) {unknown}; "
                           f"known: {sorted(params)}")
    params.update({k: v for k, v in overrides.items() if v is not None})
    if overrides:
        params = {k: params[k] for k in overrides}
    params["profile"] = profile
    return params

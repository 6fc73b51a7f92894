"""``biasbook``: run a chapter with papermill, list what is available, compare runs.

    biasbook run CHAPTER [--profile P] [-p key=value ...]   # executes into runs/<time>-<chapter>/
    biasbook plan CHAPTER [--profile P] [-p key=value ...]  # what a run would cost, before it runs
    biasbook list                                          # chapters, profiles, models, datasets
    biasbook compare [RUN_DIR ...]                         # one tidy table across runs
    biasbook atlas [--all]                                 # headline numbers, intervals, pair marks
    biasbook class                                         # every chapter's smoke profile

Parameter values are parsed as YAML, so ``-p models=[gpt2,distilgpt2]`` gives a list and
``-p n=3`` an integer; a single value where the profile has a list is taken as a one-element list
(``-p models=gpt2``). Values are checked against the type of the profile's value. The source
notebooks are never modified. Errors the tool can name are printed as one line (exit status 2);
``--debug`` shows the traceback.

``run`` and ``plan`` also take ``--stand-in HUB_ID=FOLDER`` (repeatable: the model in that folder
replaces the hub model wherever a parameter names it) and ``--cap N`` (every loop of the chapter
bounded by ``N``, :func:`biasbook.plan.capped`): together they run a ``paper`` profile's code paths
offline on tiny models (``tests/test_paper_wiring.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import os
import sys
import time
from pathlib import Path

import pandas as pd
import yaml

from biasbook import plan, profiles, resources, results
from biasbook.paths import runs_dir

NOTEBOOKS_DIR = profiles.NOTEBOOKS_DIR
RUNS_DIR = runs_dir()


class CLIError(ValueError):
    """A mistake on the command line, reported as one line."""


def parse_params(pairs: list[str]) -> dict:
    """``["a=1", "m=[x,y]"]`` -> ``{"a": 1, "m": ["x", "y"]}``.

    >>> parse_params(["n=3", "models=[gpt2, distilgpt2]", "name=bert-base-cased"])
    {'n': 3, 'models': ['gpt2', 'distilgpt2'], 'name': 'bert-base-cased'}
    """
    params = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise CLIError(f"parameter {pair!r} is not of the form key=value")
        try:
            params[key.strip()] = yaml.safe_load(value)
        except yaml.YAMLError as err:
            problem = getattr(err, "problem", None) or str(err).splitlines()[0]
            raise CLIError(f"parameter {key.strip()!r}: {value!r} is not valid YAML "
                           f"({problem}); quote lists, e.g. -p '{key.strip()}=[a, b]'") from err
    return params


def _kind(value) -> str:
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, (int, float)):
        return "number"
    return {str: "text", list: "list", dict: "mapping"}.get(type(value), type(value).__name__)


def check_types(chapter: str, notebook: str, given: dict, *, loadable: bool = True) -> dict:
    """``given`` with each value checked against the profiles' values of the same parameter.

    A scalar where every profile has a list becomes a one-element list; an integer is accepted
    where the profile has a float; ``null`` is accepted where a profile has ``null``. A mapping
    may only use keys some profile uses (its settings, or its languages or corpora), each
    checked the same way; a count that every profile sets to 1 or more must be 1 or more; a
    model must be loadable here (:func:`biasbook.models.problem`). Every problem is reported,
    one line each, in one :class:`CLIError`.
    """
    checked, problems = {}, []
    for key, value in given.items():
        examples = [profiles.notebook_params(chapter, p, notebook).get(key)
                    for p in profiles.PROFILES]
        checked[key], found = _checked(f"{key!r} of {chapter}/{notebook}", key, value, examples,
                                       loadable)
        problems += found
    if problems:
        raise CLIError("\n".join(f"parameter {p}" for p in problems))
    return checked


def _checked(where: str, key: str, value, examples: list, loadable: bool = True
             ) -> tuple[object, list[str]]:
    """(``value``, with a scalar made a list where the profiles have lists; its problems)."""
    present = [v for v in examples if v is not None]
    # a per-corpus mapping {corpus: value} also admits a plain value
    inner = [x for v in present if isinstance(v, dict) for x in v.values() if x is not None]
    kinds = {_kind(v) for v in present + inner}
    items = {_kind(x) for v in present if isinstance(v, list) for x in v}
    if kinds == {"list"} and not isinstance(value, list) and _kind(value) in items:
        value = [value]
    if value is None:
        return value, [] if None in examples else [f"{where} cannot be null"]
    if kinds and _kind(value) not in kinds:
        return value, [f"{where} takes {' or '.join(sorted(kinds))}, got {value!r}"]
    if value == []:
        return value, [f"{where} is an empty list"]
    if (present and all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in present)
            and isinstance(value, int) and value < 1):
        return value, [f"{where} must be 1 or more (every profile has a count), got {value}"]
    if isinstance(value, dict):
        return value, _mapping_problems(where, value, [v for v in examples if isinstance(v, dict)],
                                        loadable)
    if loadable and (key in ("models", "model") or key.endswith(("_models", "_model"))):
        from biasbook import models  # torch: only when a model is named

        names = value if isinstance(value, list) else [value]
        return value, [f"{where}: {found}" for name in names
                       if isinstance(name, str) and (found := models.problem(name))]
    return value, []


def _mapping_problems(where: str, value: dict, examples: list[dict], loadable: bool
                      ) -> list[str]:
    known = sorted({k for e in examples for k in e})
    if not known:  # a plain value in every profile: the mapping is per corpus, not checked
        return []
    problems = []
    for k, v in value.items():
        if k not in known:
            problems.append(f"{where} has no key {k!r} (known: {', '.join(map(str, known))})")
        else:
            problems += _checked(f"{where}.{k}", str(k), v, [e.get(k) for e in examples],
                                 loadable)[1]
    return problems


def prepare(chapter: str, profile: str, params: dict | None = None, *,
            stand_ins: dict[str, str] | None = None, cap: int | None = None,
            loadable: bool = True) -> tuple[dict[str, dict], dict[str, dict]]:
    """(every notebook's resolved parameters, the parameters to inject into each notebook).

    A user's ``params`` reach the notebooks that declare them (:func:`profiles.split_user_params`)
    and are checked (:func:`check_types`); then ``cap`` bounds every loop (the chapter's
    ``plan.cap``) and ``stand_ins`` (``{hub id: folder}``) replace models wherever a value names
    them. What the cap or a stand-in changed is checked too and injected like a user's parameter.
    """
    spec = profiles.chapter_spec(chapter)
    routed = profiles.split_user_params(chapter, params or {})
    source = NOTEBOOKS_DIR / chapter
    resolved, given = {}, {}
    for name in spec["notebooks"]:
        stem = Path(name).stem
        given[stem] = check_types(chapter, stem, routed[stem], loadable=loadable)
        declared = profiles.declared_params(source / name)
        resolved[stem] = profiles.resolve(chapter, profile, stem,
                                          **{k: given[stem].get(k) for k in declared})
    final = plan.capped(chapter, resolved, cap) if cap is not None else resolved
    if stand_ins:
        named: set[str] = set()
        final = {stem: {k: _stand_in(v, stand_ins, named) for k, v in p.items()}
                 for stem, p in final.items()}
        unused = [hub for hub in stand_ins if hub not in named]
        if unused:
            raise CLIError(f"no parameter of chapter {chapter!r} (profile {profile}) names "
                           f"{', '.join(unused)}: check the stand-in's hub id")
    injected = {}
    for stem, p in final.items():
        changed = {k: v for k, v in p.items() if k != "profile" and v != resolved[stem][k]}
        injected[stem] = {**given[stem],
                          **check_types(chapter, stem, changed, loadable=loadable)}
    return final, injected


def _stand_in(value, stand_ins: dict[str, str], named: set[str]):
    """``value`` with every string that is a key of ``stand_ins`` replaced, inside lists and
    mapping values; each string replaced is added to ``named``."""
    if isinstance(value, str):
        if value in stand_ins:
            named.add(value)
        return stand_ins.get(value, value)
    if isinstance(value, list):
        return [_stand_in(v, stand_ins, named) for v in value]
    if isinstance(value, dict):
        return {k: _stand_in(v, stand_ins, named) for k, v in value.items()}
    return value


def parse_stand_ins(pairs: list[str]) -> dict[str, str]:
    """``["bert-base-cased=/tmp/bert"]`` -> ``{"bert-base-cased": "/tmp/bert"}``; the folder
    must exist.

    >>> parse_stand_ins([])
    {}
    """
    out = {}
    for pair in pairs:
        hub, sep, folder = pair.partition("=")
        if not sep or not hub or not folder:
            raise CLIError(f"--stand-in {pair!r} is not of the form HUB_ID=FOLDER")
        if not Path(folder).is_dir():
            raise CLIError(f"--stand-in {hub}: {folder} is not a folder")
        out[hub.strip()] = str(Path(folder).resolve())
    return out


def run_chapter(chapter: str, profile: str = "book", params: dict | None = None,
                runs_dir: Path | None = None, *, stand_ins: dict[str, str] | None = None,
                cap: int | None = None) -> Path:
    """Execute every notebook of ``chapter`` into a new run folder; returns the folder.

    Each parameter reaches the notebooks that declare them (:func:`prepare`, with ``stand_ins``
    and ``cap``); every notebook's parameters are resolved before anything runs, so a bad name
    fails at once. The plan's one-line summary is printed first.
    """
    import papermill

    spec = profiles.chapter_spec(chapter)
    resolved, routed = prepare(chapter, profile, params, stand_ins=stand_ins, cap=cap)
    print(_plan_line(chapter, profile, resolved), flush=True)
    source = NOTEBOOKS_DIR / chapter
    run_dir = new_run_dir(runs_dir or RUNS_DIR, chapter)
    os.environ["BIASBOOK_RUN_DIR"] = str(run_dir)  # the kernels inherit it
    results.mark_run(run_dir, "running", chapter=chapter, profile=profile)
    for i, name in enumerate(spec["notebooks"], 1):
        start = time.perf_counter()
        print(f"[{chapter} {i}/{len(spec['notebooks'])}] {name} (profile {profile})", flush=True)
        try:
            papermill.execute_notebook(
                source / name, run_dir / name,
                parameters={"profile": profile, **routed[Path(name).stem]}, cwd=str(source),
                progress_bar=True, extra_arguments=KERNEL_ARGUMENTS)
        except BaseException:  # an interrupted run is as unfinished as a failed one
            results.mark_run(run_dir, "failed", chapter=chapter, profile=profile, notebook=name)
            raise
        print(f"[{chapter} {i}/{len(spec['notebooks'])}] {name} done in "
              f"{time.perf_counter() - start:.0f} s", flush=True)
    results.mark_run(run_dir, "finished", chapter=chapter, profile=profile)
    return run_dir


def _plan_line(chapter: str, profile: str, resolved: dict[str, dict]) -> str:
    """The plan's summary; a plan that cannot be made is named, and the run goes on (the plan
    informs, the notebooks decide)."""
    try:
        return plan.chapter_plan(chapter, profile, resolved).summary()
    except Exception as err:  # any failure of the estimate must not stop the run
        return f"plan {chapter}/{profile}: not available ({type(err).__name__}: {err})"


# The kernel's warning that it talks to papermill over local TCP without CurveZMQ says nothing
# a reader can act on; errors still show.
KERNEL_ARGUMENTS = ["--IPKernelApp.log_level=ERROR"]


def new_run_dir(runs_dir: Path, chapter: str) -> Path:
    """``runs_dir/<date>-<time>-<chapter>``, with ``-2``, ``-3``... for runs started in the same
    second (two terminals, or a script), so that no run is refused or overwritten."""
    stem = f"{dt.datetime.now().strftime('%Y%m%d-%H%M%S')}-{chapter}"
    runs_dir.mkdir(parents=True, exist_ok=True)
    for n in range(1, 1000):
        run_dir = runs_dir / (stem if n == 1 else f"{stem}-{n}")
        with contextlib.suppress(FileExistsError):  # taken: the next suffix
            run_dir.mkdir()
            return run_dir
    raise CLIError(f"more than 999 runs of {chapter} started in one second under {runs_dir}")


def _cmd_run(args) -> None:
    run_dir = run_chapter(args.chapter, args.profile, parse_params(args.param or []),
                          Path(args.runs) if args.runs else None,
                          stand_ins=parse_stand_ins(args.stand_in or []), cap=args.cap)
    print(f"done: notebooks and results in {run_dir}")
    table = results.load(run_dir)
    if not table.empty:
        print(table.drop(columns=["run", "status", "params"]).to_string(index=False))


def _cmd_plan(args) -> None:
    resolved, _ = prepare(args.chapter, args.profile, parse_params(args.param or []),
                          stand_ins=parse_stand_ins(args.stand_in or []), cap=args.cap,
                          loadable=False)
    print(plan.chapter_plan(args.chapter, args.profile, resolved,
                            gpu_flops=args.gpu_tflops * 1e12).render())


def _cmd_list(_args) -> None:
    print("chapters:")
    for chapter in profiles.chapters():
        spec = profiles.chapter_spec(chapter)
        print(f"  {chapter:22s} {spec['title']}  ({len(spec['notebooks'])} notebooks)")
    print(f"profiles: {', '.join(profiles.PROFILES)}")
    for kind, plural in (("model", "models"), ("corpus", "corpora"), ("benchmark", "benchmarks"),
                         ("wordlist", "word lists")):
        print(f"{plural}:")
        for name in resources.names(kind):
            print(f"  {name:30s} {resources.entry(name).title}")
    print("any Hugging Face model id or local folder is accepted wherever a model is expected")


def _cmd_compare(args) -> None:
    dirs = [Path(d) for d in args.runs] or sorted(p for p in RUNS_DIR.glob("*") if p.is_dir())
    table = results.compare(dirs)
    if table.empty:
        print("no recorded results in", ", ".join(map(str, dirs)) or RUNS_DIR)
        return
    with pd.option_context("display.width", 200, "display.max_columns", 50):
        print(table.to_string(index=False))


def _cmd_atlas(args) -> None:
    from biasbook import atlas

    tidy = atlas.collect(args.runs)
    every = atlas.latest(tidy)
    table = every if args.all else atlas.latest(atlas.headline(tidy))
    if table.empty:
        print(f"no recorded results under {args.runs}: build the book or run a chapter first")
        return
    columns = ["chapter", "profile", "key", "labels", "model", "value", "paper", "run"]
    shown = table.assign(value=[f"{v:.6g}" + (f" {i}" if i else "") for v, i in
                                zip(table["value"], table["interval"], strict=True)])
    with pd.option_context("display.width", 200, "display.max_rows", None,
                           "display.max_colwidth", 90):
        print(shown[columns].to_string(index=False))
    pairs = atlas.comparisons(table, every)
    print(f"\nPairs: {atlas.MARKS.replace('*', '')}")
    if pairs.empty:
        print("(no pair of these values has a recorded test, nor an interval on both sides)")
    for (chapter, profile, metric, setting), group in pairs.groupby(
            ["chapter", "profile", "metric", "setting"], sort=False):
        print(f"{chapter} ({profile}) · {metric}" + (f" [{setting}]" if setting else ""))
        for pair in group.itertuples():
            sides = " vs ".join(f"{side} {value}".rstrip() for side, value in
                                ((pair.a, pair.value_a), (pair.b, pair.value_b)))
            difference = f": difference {pair.difference}" if pair.difference else ""
            print(f"  {sides}{difference}: {pair.mark}")


def _cmd_class(args) -> None:
    """Run every chapter's smoke profile (a class's set-up check) and summarise what it shows."""
    from biasbook import atlas

    runs_dir = Path(args.runs)
    timings = {}
    for chapter in profiles.chapters():
        start = time.perf_counter()
        run_chapter(chapter, "smoke", runs_dir=runs_dir)
        timings[chapter] = time.perf_counter() - start
    numbers = atlas.latest(atlas.headline(atlas.collect(runs_dir)))
    print("\nWhat every student should see (smoke profile; the book's profile shows more):")
    for chapter, seconds in timings.items():
        print(f"\n{profiles.chapter_spec(chapter)['title']} ({seconds:.0f} s)")
        for row in numbers[numbers["chapter"] == chapter].itertuples():
            where = f" [{row.labels}]" if row.labels else ""
            print(f"  {row.key}{where} {row.model or ''}: {row.value:.4g}")


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {value}")
    return value


def _known_errors() -> tuple[type[BaseException], ...]:
    from papermill.exceptions import PapermillExecutionError

    from biasbook.models import ModelError

    return (CLIError, profiles.ProfileError, ModelError, resources.ResourceError,
            results.RecordError, PapermillExecutionError, FileNotFoundError)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="biasbook", description=__doc__.splitlines()[0])
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="execute a chapter's notebooks with papermill")
    planned = sub.add_parser("plan", help="what a run would count, cost and download")
    for command in (run, planned):
        command.add_argument("chapter")
        command.add_argument("--profile", default="book", choices=profiles.PROFILES)
        command.add_argument("-p", "--param", action="append", metavar="KEY=VALUE")
        command.add_argument("--stand-in", action="append", metavar="HUB_ID=FOLDER",
                             help="the model in FOLDER replaces the hub model HUB_ID")
        command.add_argument("--cap", type=_positive, metavar="N",
                             help="bound every loop of the chapter by N (a wiring check)")
    run.add_argument("--runs", help=f"where the run folder goes (default {RUNS_DIR})")
    run.set_defaults(func=_cmd_run)
    planned.add_argument("--gpu-tflops", type=float, default=plan.GPU_FLOPS / 1e12,
                         help="the GPU rate the estimate assumes (default %(default)g)")
    planned.set_defaults(func=_cmd_plan)
    sub.add_parser("list", help="chapters, profiles, models, datasets").set_defaults(
        func=_cmd_list)
    compare = sub.add_parser("compare", help="one table across runs")
    compare.add_argument("runs", nargs="*", help="run folders (default: all under runs/)")
    compare.set_defaults(func=_cmd_compare)
    atlas = sub.add_parser("atlas", help="every chapter's headline numbers, per model and run")
    atlas.add_argument("--all", action="store_true", help="every recorded number, not only "
                       "the headline ones")
    atlas.add_argument("--runs", default=str(RUNS_DIR), help="folder of run folders")
    atlas.set_defaults(func=_cmd_atlas)
    klass = sub.add_parser("class", help="run every chapter's smoke profile and summarise")
    klass.add_argument("--runs", default=str(RUNS_DIR / "class"), help="where the runs go")
    klass.set_defaults(func=_cmd_class)
    args = parser.parse_args(argv)
    try:
        args.func(args)
    except KeyboardInterrupt:
        if args.debug:
            raise
        where = os.environ.get("BIASBOOK_RUN_DIR")
        print("biasbook: interrupted" + (f"; {where} is marked failed. Results computed so far "
              "are cached: the same command resumes from them" if where else ""),
              file=sys.stderr)
        raise SystemExit(130) from None
    except _known_errors() as err:
        if args.debug:
            raise
        lines = str(err).splitlines() if isinstance(err, CLIError) else [str(err)]
        message = "\nbiasbook: error: ".join(" ".join(line.split()) for line in lines) \
            if not hasattr(err, "ename") else \
            f"{err.ename}: {err.evalue} (cell {err.exec_count}; the executed notebook is kept " \
            f"in {os.environ.get('BIASBOOK_RUN_DIR', 'the run folder')})"
        print(f"biasbook: error: {message}", file=sys.stderr)
        raise SystemExit(2) from None


if __name__ == "__main__":
    sys.exit(main())

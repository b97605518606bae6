# Two commands do all the set-up (see README.md):
#   make lab    set everything up, open the course in JupyterLab (offline unless ANTHROPIC_API_KEY is set)
#   make test   set everything up, run the whole test suite
# Everything installs into a local virtual environment, .venv/.

PYTHON ?= python3
# The course's language for `make lab` and `make handout` (make cannot take --lang): make lab LANG_COURSE=fr
LANG_COURSE ?= en
VENV := .venv
BIN := $(VENV)/bin

.PHONY: lab test dev record benchmarks notebooks drift handout

# scripts/bootstrap.py does the work (and runs without make, on Windows too): it checks the Python
# version, (re)builds .venv, installs requirements.txt (+ requirements-dev.txt for the tools below).
lab:
	$(PYTHON) scripts/bootstrap.py lab --lang $(LANG_COURSE)

# The whole suite, in parallel (scripts/bootstrap.py's run_tests says why one test file per worker).
test:
	$(PYTHON) scripts/bootstrap.py test

# The maintainer's tools below need the test tools too (a no-op once they are installed).
dev:
	$(PYTHON) scripts/bootstrap.py setup-dev

# Re-record the shipped recordings from the live API (needs ANTHROPIC_API_KEY), then refresh the notebooks: the
# English ones, then the French ones (from the French solutions the first `make notebooks` regenerated).
record: dev
	$(BIN)/python -m authoring record --live
	$(MAKE) notebooks
	$(BIN)/python -m authoring record --live --lang fr
	$(MAKE) notebooks

# The one step after an edit: re-author a recording a notebook outgrew (offline, scripted answers),
# store the solutions' outputs, regenerate the learner notebooks and the generated pages.
# The maintainer's tools are the authoring/ package (python -m authoring), never shipped to learners.
# A no-op on an unchanged course (it prints "nothing changed").
notebooks: dev
	$(BIN)/python -m authoring notebooks

# What an instructor sends learners, into dist/: learner notebooks, a wheelhouse for Windows, macOS and Linux
# on Python 3.11-3.13, a learner README (in French: make handout LANG_COURSE=fr); no answers. Also the small handout (no wheelhouse). Check it: --verify
# Solutions, when it is time: .venv/bin/python -m authoring handout --release 01_one_tool_call
handout: dev
	$(BIN)/python -m authoring handout --lang $(LANG_COURSE)

benchmarks: dev
	$(BIN)/python benchmarks/replay_overhead.py
	$(BIN)/python benchmarks/grading.py
	$(BIN)/python benchmarks/calculator_hostile.py
	$(BIN)/python benchmarks/regeneration.py

# The suite against the newest anthropic, httpx2, ipywidgets, nbclient, nbval and jupyterlab, in a throwaway
# venv (needs the network): prints what moved and what broke. `make test` stays pinned.
drift:
	$(PYTHON) scripts/drift.py

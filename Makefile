# Two commands do all the set-up (see README.md):
#   make lab    set everything up, open the course in JupyterLab (offline unless ANTHROPIC_API_KEY is set)
#   make test   set everything up, run the whole test suite
# Everything installs into a local virtual environment, .venv/.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: lab test record benchmarks notebooks drift

$(BIN)/.installed: requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	touch $@

# JupyterLab refuses to run as root unless told; containers and CI machines often are root.
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root)

lab: $(BIN)/.installed
	$(BIN)/jupyter lab $(ROOT_FLAG) notebooks/01_one_tool_call.ipynb

# In parallel, one test file per worker: nbval's cells of one notebook share a kernel, so they must
# never be split across workers (the old occasional failure of notebook 4's last cells under -n).
test: $(BIN)/.installed
	bash scripts/install_system_deps.sh
	$(BIN)/python -m pytest -n auto --dist loadfile

# Re-record the shipped recordings from the live API (needs ANTHROPIC_API_KEY), then refresh the notebooks.
record: $(BIN)/.installed
	$(BIN)/python scripts/author_recordings.py --live
	$(MAKE) notebooks

# The one step after an edit: re-author a recording a notebook outgrew (offline, scripted answers),
# store the solutions' outputs, regenerate the learner notebooks.
# A no-op on an unchanged course (it prints "nothing changed").
notebooks: $(BIN)/.installed
	$(BIN)/python scripts/regenerate.py

benchmarks: $(BIN)/.installed
	$(BIN)/python benchmarks/replay_overhead.py
	$(BIN)/python benchmarks/grading.py
	$(BIN)/python benchmarks/calculator_hostile.py

# The suite against the newest anthropic, httpx2, ipywidgets, nbclient, nbval and jupyterlab, in a throwaway
# venv (needs the network): prints what moved and what broke. `make test` stays pinned.
drift:
	$(PYTHON) scripts/drift.py

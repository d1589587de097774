# rl-course: `make lab` to start the course, `make test` to run the whole test suite.
# Both create .venv and install the pinned stack when needed.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# Tests run notebooks in fast mode, and games play themselves (nobody can click).
TEST_ENV := COURSE_FAST=1 COURSE_HEADLESS=1 MPLBACKEND=Agg
# Every command here starts many Python processes (the suite about 200: kernels, graders): let
# them cache compiled modules (in __pycache__, ignored by git) even where the machine sets
# PYTHONDONTWRITEBYTECODE. The install compiles what the course imports, not all of
# site-packages (20 s more).
unexport PYTHONDONTWRITEBYTECODE
JOBS ?= 2
# JupyterLab refuses to run as root unless told (containers, CI machines).
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root)

.PHONY: install browser-deps lab test test-slow lint release bench clean

# pip fetches torch's wheel, honouring this machine's pip configuration (a local CPU-only build
# where one is configured); uv then installs it and the ~150 other packages in parallel. With the
# compile step below: 22 s on 2 cores, against 55 s with pip alone.
$(STAMP): requirements.txt requirements-overrides.txt pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip uv
	$(PY) -m pip download --quiet --no-deps --dest $(VENV)/wheels "$$(grep '^torch==' requirements.txt)"
	$(VENV)/bin/uv pip install --quiet --python $(PY) --find-links $(VENV)/wheels --override requirements-overrides.txt \
		-r requirements.txt
	rm -rf $(VENV)/wheels
	$(VENV)/bin/uv pip install --quiet --python $(PY) --no-deps --no-build-isolation -e .
	@# compile what the course's kernels and graders import, once: a sandboxed grading kernel may
	@# read the installed packages but not write their compiled modules
	$(PY) -c "import course_utils.harlow, course_utils.colour, course_utils.lunar, course_utils.replay, \
	course_admin.grading.autograder, course_admin.grading.worker, ipykernel.kernelapp, ipywidgets, matplotlib.pyplot"
	@# tutorial 3's lander step in C (the same numbers as Python, faster), built and checked once here
	$(PY) -c "from course_utils.lunar import lander_step as s; print('lander step:', 'C' if s.load() else 'Python (' + s.why_not + ')')"
	@touch $(STAMP)

install: $(STAMP)

# Debian's chromium for the browser tests (skipped with a warning where it cannot be installed).
browser-deps:
	@bash .ci/install-chromium

lab: install
	$(VENV)/bin/jupyter lab --ServerApp.root_dir=. --LabApp.default_url=/lab/tree/notebooks $(ROOT_FLAG)

lint: install
	$(VENV)/bin/ruff check course_utils course_admin tests nbgrader_config.py
	$(VENV)/bin/lint-imports --no-cache

# The suite asserts each part of `course release --check` (tests/grading/test_student_notebooks.py
# holds it to that), so it is not run again before the tests: 40 CPU-s with both cores idle otherwise.
# Debian's chromium installs while the Python stack does (apt-get and uv each wait on the network
# and the disk much of the time): about 15 s less on a fresh machine than one after the other.
test:
	@$(MAKE) --no-print-directory -j2 install browser-deps
	@$(MAKE) --no-print-directory lint
	$(TEST_ENV) $(PY) -m pytest -n $(JOBS) --dist loadfile --no-loadscope-reorder --durations=30 tests

test-slow: install
	$(TEST_ENV) $(PY) -m pytest -n $(JOBS) --dist loadfile --no-loadscope-reorder --run-slow tests

release: install
	$(PY) -m course_utils.cli release

bench: install
	$(PY) -m course_utils.cli bench colour

clean:
	rm -rf grading grades .pytest_cache .ruff_cache course_utils/lunar/_build

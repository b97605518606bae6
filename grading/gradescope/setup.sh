#!/usr/bin/env bash
# Gradescope runs this once, when it builds the autograder's image: install the course in a venv.
# The autograder zip (made by make_zip.py) holds this file, run_autograder and the course itself
# (looplab/, pyproject.toml, requirements.txt, README.md); Gradescope unpacks it in /autograder/source.
# looplab needs Python 3.11 or newer: pick Gradescope's Ubuntu 24.04 base image (Python 3.12).
set -euo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
cd "$ROOT/source"

if ! python3 -m venv --help >/dev/null 2>&1; then
    apt-get update -q
    apt-get install -y -q python3 python3-venv
fi
python3 -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else
    f"looplab needs Python 3.11 or newer, this image has {sys.version.split()[0]}: choose the Ubuntu 24.04 base image")'

python3 -m venv "$ROOT/venv"
# The course's own pins (requirements.txt installs the course itself with `-e .`): the kernels that
# grade here run the same versions of the SDK, ipykernel and nbclient as the course.
"$ROOT/venv/bin/pip" install --quiet -r requirements.txt
"$ROOT/venv/bin/python" -c "import looplab.grade" # fail the build now rather than at the first submission

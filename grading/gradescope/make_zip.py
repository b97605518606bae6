"""Make the Gradescope autograder zip: setup.sh and run_autograder at its top, the course beside them.

    python grading/gradescope/make_zip.py [autograder.zip]

The course is the files git tracks in looplab/, plus pyproject.toml, requirements.txt and README.md
(what `pip install -r requirements.txt` needs to install it). Upload the zip as the assignment's
autograder ("Zip file upload", Ubuntu 24.04 base image).
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
COURSE_ROOT = HERE.parents[1]
SCRIPTS = ["setup.sh", "run_autograder"]
COURSE_FILES = ["looplab", "pyproject.toml", "requirements.txt", "README.md"]


def course_files(root: Path = COURSE_ROOT) -> list[str]:
    """The course's files git tracks (no caches, nothing local)."""
    listed = subprocess.run(["git", "ls-files", "-z", "--", *COURSE_FILES], cwd=root, capture_output=True,
                            check=True).stdout.decode()
    return sorted(name for name in listed.split("\0") if name)


def make_zip(target: Path, root: Path = COURSE_ROOT) -> list[str]:
    """Write the zip; returns the names it holds."""
    names = []
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for script in SCRIPTS:
            info = zipfile.ZipInfo(script)
            info.external_attr = 0o100755 << 16  # executable: Gradescope runs them as they are
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, (HERE / script).read_bytes())
            names.append(script)
        for name in course_files(root):
            archive.write(root / name, name)
            names.append(name)
    return names


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "autograder.zip")
    held = make_zip(target)
    print(f"{target}: {len(held)} files (setup.sh, run_autograder and the course)")

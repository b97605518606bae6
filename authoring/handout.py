"""`make handout`: the folder an instructor sends to learners, with no answers in it.

    .venv/bin/python -m authoring handout                      # dist/looplab-handout/ and its .zip
    .venv/bin/python -m authoring handout --for all            # wheelhouse for Windows, macOS and Linux too
    .venv/bin/python -m authoring handout --release 01_one_tool_call   # dist/solutions/01_one_tool_call.ipynb

Why: learners need the notebooks and the package, not the repository, which holds `solutions/` (a
learner who copied them would score full marks) and the grader's machinery. The handout holds:

- `notebooks/`: the learner notebooks (exercise regions replaced by stubs, outputs cleared);
- `wheelhouse/`: the course's package as a wheel (recordings and checks inside) and every wheel it
  needs, so a room with bad Wi-Fi installs without the network (`--for` chooses the computers);
- `requirements.txt`: the same pins as the repository's, the course itself as `looplab==VERSION`;
- `scripts/bootstrap.py`: the same set-up script as the repository's (it installs from the wheelhouse);
- `README.md`: set-up on each system, offline install, how to hand in (docs/HANDOUT_README.md).

Solutions are released one notebook at a time, when the instructor decides: `--release STEM...` copies
those solution notebooks (with their outputs) into `dist/solutions/`.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from looplab.course import COURSE

from . import ROOT

DIST = ROOT / "dist"
HANDOUT = "looplab-handout"
# Which computers a wheelhouse serves: pip's platform tags per system, for each Python the course runs on.
PYTHONS = ("3.11", "3.12", "3.13")
PLATFORMS = {
    "linux": ("manylinux2014_x86_64", "manylinux_2_28_x86_64", "manylinux2014_aarch64", "manylinux_2_28_aarch64"),
    "macos": ("macosx_11_0_arm64", "macosx_10_15_x86_64", "macosx_10_9_x86_64"),
    "windows": ("win_amd64",),
}


def learner_pins(version: str) -> str:
    """requirements.txt as a learner gets it: the course from its wheel (same version), the rest pinned."""
    lines = []
    for line in (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() == "-e .":
            line = f"looplab=={version}  # from wheelhouse/"
        lines.append(line)
    return "\n".join(lines) + "\n"


def pip(*args) -> None:
    subprocess.run([sys.executable, "-m", "pip", *map(str, args)], check=True)


def build_wheel(wheelhouse: Path) -> Path:
    """The package as a wheel, built offline from a copy of the sources (a build writes next to them)."""
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder)
        shutil.copytree(ROOT / "looplab", source / "looplab", ignore=shutil.ignore_patterns("__pycache__"))
        for name in ("pyproject.toml", "README.md"):
            shutil.copy(ROOT / name, source / name)
        pip("wheel", "--quiet", "--no-deps", "--no-index", "--no-build-isolation", "--check-build-dependencies",
            "--wheel-dir", wheelhouse, source)
    (wheel,) = wheelhouse.glob("looplab-*.whl")
    return wheel


def fill_wheelhouse(wheelhouse: Path, requirements: Path, targets: list[str]) -> None:
    """Every wheel the course needs, for this computer ("here") or for the named systems."""
    wheels = ["--find-links", wheelhouse, "--dest", wheelhouse, "--only-binary", ":all:", "-r", requirements]
    if "here" in targets:
        pip("download", "--quiet", *wheels)
    for system in (target for target in targets if target != "here"):
        for python in PYTHONS:
            tags = [arg for tag in PLATFORMS[system] for arg in ("--platform", tag)]
            pip("download", "--quiet", *tags, "--python-version", python, *wheels)


def build_handout(out: Path, targets: list[str]) -> Path:
    """dist/looplab-handout/ from scratch, and a zip of it beside it. Returns the folder."""
    folder = out / HANDOUT
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "notebooks").mkdir(parents=True)
    for notebook in COURSE.notebooks:
        shutil.copy(ROOT / "notebooks" / f"{notebook.stem}.ipynb", folder / "notebooks")
    (folder / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "bootstrap.py", folder / "scripts")
    listing = ", ".join(f"`{notebook.stem}`" for notebook in COURSE.notebooks)
    readme = (ROOT / "docs" / "HANDOUT_README.md").read_text(encoding="utf-8").replace("{NOTEBOOKS}", listing)
    (folder / "README.md").write_text(readme, encoding="utf-8")
    wheel = build_wheel(folder / "wheelhouse")
    requirements = folder / "requirements.txt"
    requirements.write_text(learner_pins(wheel.name.split("-")[1]), encoding="utf-8")  # looplab-VERSION-...whl
    fill_wheelhouse(folder / "wheelhouse", requirements, targets)
    shutil.make_archive(str(folder), "zip", out, HANDOUT)
    return folder


def release(stems: list[str], out: Path) -> list[Path]:
    """Copy these solution notebooks, outputs and all, into dist/solutions/ for the learners."""
    known = {notebook.stem for notebook in COURSE.notebooks}
    unknown = [stem for stem in stems if stem not in known]
    if unknown:
        raise SystemExit(f"handout: no notebook {', '.join(unknown)} in the course (known: {', '.join(sorted(known))})")
    (out / "solutions").mkdir(parents=True, exist_ok=True)
    return [Path(shutil.copy(ROOT / "solutions" / f"{stem}.ipynb", out / "solutions")) for stem in stems]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m authoring handout", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DIST, help="where to build (default: dist/)")
    parser.add_argument("--for", dest="targets", default="here",
                        help="whose computers the wheelhouse serves: here (default), or a comma list of "
                             f"{', '.join(PLATFORMS)}, or all")
    parser.add_argument("--release", nargs="+", metavar="NOTEBOOK", help="copy these solutions to OUT/solutions/")
    args = parser.parse_args(argv)
    if args.release:
        for path in release(args.release, args.out):
            print(f"handout: released {path}")
        return 0
    targets = ["here", *PLATFORMS] if args.targets == "all" else args.targets.split(",")
    if set(targets) - {"here", *PLATFORMS}:
        parser.error(f"--for takes here, {', '.join(PLATFORMS)} or all; got {args.targets}")
    folder = build_handout(args.out, targets)
    size = sum(path.stat().st_size for path in folder.rglob("*") if path.is_file()) / 1e6
    print(f"handout: {folder} ({size:.0f} MB) and {folder}.zip: send the zip; solutions stay here")
    return 0


if __name__ == "__main__":
    sys.exit(main())

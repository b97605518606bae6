"""`make handout`: the folder an instructor sends to learners, with no answers in it.

    .venv/bin/python -m authoring handout                      # the room's mix: Windows, macOS, Linux
    .venv/bin/python -m authoring handout --for here           # this computer and Python only (quick)
    .venv/bin/python -m authoring handout --lang fr            # its README in French (make handout LANG_COURSE=fr)
    .venv/bin/python -m authoring handout --for linux-aarch64 --python 3.12   # one kind of laptop
    .venv/bin/python -m authoring handout --verify             # check dist/'s handout (authoring/handout_check.py)
    .venv/bin/python -m authoring handout --release 01_one_tool_call   # dist/solutions/01_one_tool_call.ipynb
    .venv/bin/python -m authoring handout --release 01_one_tool_call --lang fr   # dist/solutions/fr/01_one_tool_call.ipynb

Why: learners need the notebooks and the package, not the repository, which holds `solutions/` (a
learner who copied them would score full marks) and the grader's machinery. The handout holds:

- `notebooks/`: the learner notebooks (exercise regions replaced by stubs, outputs cleared), and
  `notebooks/fr/` the same in French (`bootstrap.py lab --lang fr` opens them);
- `wheelhouse/`: the course's package as a wheel (recordings and checks inside) and every wheel it
  needs, so a room with bad Wi-Fi installs without the network; by default for Windows x86_64, macOS
  arm64 and x86_64, Linux x86_64 and aarch64 on every Python the course supports (`--for` and
  `--python` choose others; authoring/wheelhouse.py), with `platforms.json` saying which;
- `requirements.txt`: the same pins as the repository's, the course itself as `looplab==VERSION`;
- `scripts/bootstrap.py`: the same set-up script as the repository's (it installs from the wheelhouse);
- `README.md`: set-up on each system, which laptops it serves offline, how to hand in
  (docs/HANDOUT_README.md, or docs/HANDOUT_README.fr.md with `--lang fr`).

Every build also writes the small handout, `looplab-handout-small/` and its zip: the same without the
other packages' wheels (notebooks, the course's wheel, the set-up), for a room with a network, small
enough to send by mail; its set-up downloads the rest.

Solutions are released one notebook at a time, when the instructor decides: `--release STEM...` copies
those solution notebooks (with their outputs) into `dist/solutions/`; with `--lang fr`, the French ones
(`solutions/fr/`) into `dist/solutions/fr/`, beside the handout's `notebooks/fr/`.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from looplab import language
from looplab.catalogue import words
from looplab.course import COURSE

from . import ROOT
from . import wheelhouse as wheels

DIST = ROOT / "dist"
HANDOUT = "looplab-handout"
SMALL = "looplab-handout-small"


def learner_pins(version: str, requirements: Path | None = None) -> str:
    """requirements.txt as a learner gets it: the course from its wheel (same version), the rest pinned.

    `requirements` replaces the repository's requirements.txt for a trial (`--requirements`)."""
    lines = []
    for line in (requirements or ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines():
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


WORDS = words(__file__)  # authoring/texts/handout.toml: the README's words that are not in docs/HANDOUT_README*.md


def readme_template(spoken: str) -> Path:
    """docs/HANDOUT_README.md in English, docs/HANDOUT_README.<language>.md in another language."""
    suffix = "" if spoken == language.SOURCE else f".{spoken}"
    return ROOT / "docs" / f"HANDOUT_README{suffix}.md"


def learner_readme(entries: list[dict], spoken: str = language.SOURCE) -> str:
    """The learner README in `spoken`, with the notebooks and, on its first page, the laptops this copy serves."""
    listing = ", ".join(f"`{notebook.stem}`" for notebook in COURSE.notebooks)
    with language.using(spoken):
        serves = WORDS("serves_offline", laptops=wheels.describe(entries)) if entries else WORDS("serves_nothing")
    text = readme_template(spoken).read_text(encoding="utf-8")
    return (text.replace("{NOTEBOOKS}", listing).replace("{SERVES}", serves)
            .replace("{COUNT}", str(len(COURSE.notebooks))))


def copy_notebooks(folder: Path) -> None:
    """The learner notebooks of every language the course has: notebooks/ and notebooks/<language>/."""
    for spoken in language.LANGUAGES:
        source = ROOT / "notebooks" if spoken == language.SOURCE else ROOT / "notebooks" / spoken
        target = folder / "notebooks" if spoken == language.SOURCE else folder / "notebooks" / spoken
        for notebook in COURSE.notebooks:
            if (source / f"{notebook.stem}.ipynb").exists() or spoken == language.SOURCE:
                target.mkdir(parents=True, exist_ok=True)
                shutil.copy(source / f"{notebook.stem}.ipynb", target)


def build_handout(out: Path, names: list[str], pythons: list[str], requirements: Path | None = None,
                  spoken: str = language.SOURCE) -> Path:
    """dist/looplab-handout/ from scratch, the small handout beside it, and a zip of each, their README in
    `spoken` (the notebooks are in every language the course has). Returns the folder."""
    folder = out / HANDOUT
    shutil.rmtree(folder, ignore_errors=True)
    copy_notebooks(folder)
    (folder / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "bootstrap.py", folder / "scripts")
    wheel = build_wheel(folder / "wheelhouse")
    pins = folder / "requirements.txt"
    pins.write_text(learner_pins(wheel.name.split("-")[1], requirements), encoding="utf-8")  # looplab-VERSION-...
    build_small(folder, wheel, out / SMALL, spoken)
    wheels.fill(folder / "wheelhouse", pins, names, pythons)
    (folder / "README.md").write_text(learner_readme(wheels.read_served(folder / "wheelhouse"), spoken),
                                      encoding="utf-8")
    shutil.make_archive(str(folder), "zip", out, HANDOUT)
    return folder


def build_small(full: Path, wheel: Path, small: Path, spoken: str = language.SOURCE) -> Path:
    """The small handout: the full one's notebooks, set-up and pins, and of the wheelhouse the course alone."""
    shutil.rmtree(small, ignore_errors=True)
    for part in ("notebooks", "scripts"):
        shutil.copytree(full / part, small / part)
    shutil.copy(full / "requirements.txt", small)
    (small / "wheelhouse").mkdir()
    shutil.copy(wheel, small / "wheelhouse")
    wheels.write_served(small / "wheelhouse", [])
    (small / "README.md").write_text(learner_readme([], spoken), encoding="utf-8")
    shutil.make_archive(str(small), "zip", small.parent, small.name)
    return small


def release(stems: list[str], out: Path, spoken: str = language.SOURCE) -> list[Path]:
    """Copy these solution notebooks, outputs and all, into dist/solutions/ for the learners; in another language than
    English, that language's generated solutions (solutions/fr/) into dist/solutions/fr/."""
    known = {notebook.stem for notebook in COURSE.notebooks}
    unknown = [stem for stem in stems if stem not in known]
    if unknown:
        raise SystemExit(f"handout: no notebook {', '.join(unknown)} in the course (known: {', '.join(sorted(known))})")
    where = Path("solutions") if spoken == language.SOURCE else Path("solutions") / spoken
    missing = [stem for stem in stems if not (ROOT / where / f"{stem}.ipynb").exists()]
    if missing:
        raise SystemExit(f"handout: no {spoken} solution for {', '.join(missing)} in {where}/: run `make notebooks` first")
    (out / where).mkdir(parents=True, exist_ok=True)
    return [Path(shutil.copy(ROOT / where / f"{stem}.ipynb", out / where)) for stem in stems]


def zip_size(folder: Path) -> str:
    megabytes = Path(f"{folder}.zip").stat().st_size / 1e6
    return f"{folder}.zip ({megabytes:.1f} MB)" if megabytes < 10 else f"{folder}.zip ({megabytes:.0f} MB)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m authoring handout", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DIST, help="where to build (default: dist/)")
    parser.add_argument("--for", dest="targets", default="all",
                        help="whose laptops the wheelhouse serves, a comma list: all (default: "
                             f"{', '.join(wheels.ROOM)}), {wheels.HERE} (this computer and Python only), "
                             f"{', '.join(wheels.SYSTEMS)}, or {', '.join(wheels.PLATFORMS)}")
    parser.add_argument("--python", default=",".join(wheels.PYTHONS),
                        help=f"for which Pythons, a comma list (default: {','.join(wheels.PYTHONS)}; not with here)")
    parser.add_argument("--requirements", type=Path, help="pins to use instead of requirements.txt (a trial)")
    parser.add_argument("--lang", choices=language.LANGUAGES, default=language.SOURCE,
                        help="the language of the handout's README (its notebooks are in every language; "
                             "`make handout LANG_COURSE=fr`)")
    parser.add_argument("--verify", action="store_true",
                        help="check the handout in OUT: offline installs here, dry runs for the other laptops")
    parser.add_argument("--dry-runs-only", action="store_true", help="with --verify: skip the real installs")
    parser.add_argument("--release", nargs="+", metavar="NOTEBOOK",
                        help="copy these solutions to OUT/solutions/ (with --lang fr, the French ones to OUT/solutions/fr/)")
    args = parser.parse_args(argv)
    if args.release:
        for path in release(args.release, args.out, args.lang):
            print(f"handout: released {path}")
        return 0
    if args.verify:
        from .handout_check import verify
        return verify(args.out / HANDOUT, args.dry_runs_only)
    try:
        names = wheels.platforms_named(args.targets.split(","))
    except ValueError as error:
        parser.error(str(error))
    if not all(re.fullmatch(r"3\.\d+", python) for python in args.python.split(",")):
        parser.error(f"--python takes versions such as 3.12,3.13; got {args.python}")
    missing = [notebook.stem for notebook in COURSE.notebooks if args.lang != language.SOURCE
               and not (ROOT / "notebooks" / args.lang / f"{notebook.stem}.ipynb").exists()]
    if missing:
        parser.error(f"no {args.lang} learner notebook for {', '.join(missing)}: run `make notebooks` first")
    folder = build_handout(args.out, names, args.python.split(","), args.requirements, args.lang)
    print(f"handout: {zip_size(folder)} serves {wheels.describe(wheels.read_served(folder / 'wheelhouse'))}")
    print(f"handout: {zip_size(args.out / SMALL)} holds the course only (its set-up needs the network)")
    print("handout: send a zip; solutions stay here")
    return 0


if __name__ == "__main__":
    sys.exit(main())

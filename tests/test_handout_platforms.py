"""Every laptop, or a clear answer (authoring/wheelhouse.py, authoring/handout.py, scripts/bootstrap.py).

Cheap on purpose: nothing here downloads. The plan of `pip download` calls is checked with pip
captured; pip's reading of another laptop's markers is tried on two wheels made here; the handout's
assembly runs with the downloads and the wheel build faked; bootstrap's answer for a laptop its
wheelhouse does not serve is tried with its functions, then once for real in a throwaway venv with the
network pointed at a dead port. The real thing (downloads, offline installs on 3.11-3.13, dry runs for
every other laptop) is `python -m authoring handout --verify`, run by hand (README says when).
"""

from __future__ import annotations

import json
import os
import platform
import re
import runpy
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from packaging.markers import Marker

from authoring import handout, wheelhouse as wheels
from authoring.learner_notebooks import BEGIN, REGION
from looplab.course import COURSE

ROOT = Path(__file__).resolve().parent.parent
BOOTSTRAP = ROOT / "scripts" / "bootstrap.py"
bootstrap = runpy.run_path(str(BOOTSTRAP))


def test_the_supported_pythons_start_where_the_course_does():
    assert wheels.PYTHONS[0] == "{}.{}".format(*bootstrap["NEEDED"])
    assert f'requires-python = ">={wheels.PYTHONS[0]}"' in (ROOT / "pyproject.toml").read_text()


def test_the_default_is_the_rooms_mix_of_three_systems():
    assert wheels.platforms_named(["all"]) == ["windows-x86_64", "macos-arm64", "macos-x86_64", "linux-x86_64",
                                               "linux-aarch64"]
    assert wheels.platforms_named(["macos", "linux-aarch64", "here"]) == ["macos-arm64", "macos-x86_64",
                                                                          "linux-aarch64", "here"]
    with pytest.raises(ValueError, match="--for takes"):
        wheels.platforms_named(["amiga"])


def test_one_download_per_platform_and_python_each_with_one_architecture(tmp_path):
    calls = []
    wheels.fill(tmp_path, tmp_path / "requirements.txt", wheels.platforms_named(["all"]), list(wheels.PYTHONS),
                run=lambda command, **options: calls.append(command))
    assert len(calls) == 5 * 3
    seen = set()
    for command in calls:
        assert command[command.index("-m") + 1] == "authoring.pip_for_platform"
        tags = [command[i + 1] for i, arg in enumerate(command) if arg == "--platform"]
        architectures = {re.sub(r"^(manylinux_2_\d+|manylinux2014|macosx_\d+_\d+|win)_", "", tag) for tag in tags}
        assert len(architectures) == 1, tags  # one pip call never mixes x86_64 and aarch64 wheels
        markers = json.loads(command[command.index("authoring.pip_for_platform") + 1])
        python = command[command.index("--python-version") + 1]
        assert markers["python_version"] == python
        seen.add((markers["platform_system"], architectures.pop(), python))
    assert len(seen) == 15
    served = wheels.read_served(tmp_path)
    assert [entry["label"] for entry in served] == ["Windows x86_64", "macOS arm64", "macOS x86_64", "Linux x86_64",
                                                    "Linux aarch64"]
    assert all(entry["pythons"] == list(wheels.PYTHONS) for entry in served)


def test_here_is_one_plain_download_for_this_computer_and_python(tmp_path):
    calls = []
    wheels.fill(tmp_path, tmp_path / "r.txt", ["here"], ["3.12"], run=lambda command, **options: calls.append(command))
    [command] = calls
    assert command[:3] == [sys.executable, "-m", "pip"] and "--platform" not in command
    [entry] = wheels.read_served(tmp_path)
    assert entry["system"] == platform.system() and entry["pythons"] == ["{}.{}".format(*sys.version_info[:2])]


@pytest.mark.parametrize("marker, windows, macos, linux", [
    ("os_name == 'nt'", True, False, False),
    ("platform_system == 'Darwin'", False, True, False),
    ("sys_platform != 'win32'", False, True, True)])
def test_each_laptop_reads_markers_as_its_own(marker, windows, macos, linux):
    for name, expected in (("windows-x86_64", windows), ("macos-arm64", macos), ("linux-aarch64", linux)):
        assert Marker(marker).evaluate(wheels.marker_environment(wheels.PLATFORMS[name], "3.12")) is expected
    assert Marker("python_version < '3.12'").evaluate(wheels.marker_environment(wheels.PLATFORMS["linux-x86_64"],
                                                                                 "3.11"))


def make_wheel(folder: Path, name: str, requires: list[str] = ()) -> None:
    """A pure-Python wheel with just enough metadata for pip to resolve it."""
    info = f"{name}-1.0.dist-info"
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n" + "".join(f"Requires-Dist: {r}\n" for r in requires)
    with zipfile.ZipFile(folder / f"{name}-1.0-py3-none-any.whl", "w") as wheel:
        wheel.writestr(f"{name}.py", "")
        wheel.writestr(f"{info}/METADATA", metadata)
        wheel.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        wheel.writestr(f"{info}/RECORD", "")


def test_pip_reads_the_target_laptops_markers_not_this_computers(tmp_path):
    """Why pip runs through authoring.pip_for_platform: a Windows-only dependency reaches a Windows wheelhouse."""
    make_wheel(tmp_path, "course", ["winonly; os_name == 'nt'", "posixonly; os_name != 'nt'"])
    make_wheel(tmp_path, "winonly")
    make_wheel(tmp_path, "posixonly")
    resolved = {}
    for name in ("windows-x86_64", "linux-aarch64"):
        one = wheels.PLATFORMS[name]
        run = subprocess.run([*wheels.pip_runner(one, "3.12"), "install", "--dry-run", "--quiet", "--report", "-",
                              "--no-index", "--find-links", tmp_path, "--target", tmp_path / "t",
                              *wheels.target_options(one, "3.12"), "course"],
                             capture_output=True, text=True, cwd=ROOT, env={"PATH": "/usr/bin:/bin", "PIP_CONFIG_FILE": "/dev/null"})
        assert run.returncode == 0, run.stderr
        resolved[name] = sorted(item["metadata"]["name"] for item in json.loads(run.stdout)["install"])
    assert resolved == {"windows-x86_64": ["course", "winonly"], "linux-aarch64": ["course", "posixonly"]}


@pytest.fixture
def built(tmp_path, monkeypatch) -> Path:
    """build_handout with the wheel build and the downloads faked: the assembly alone, in a second."""
    def fake_wheel(folder: Path) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        make_wheel(folder, "looplab")
        return next(folder.glob("looplab-*.whl"))

    def fake_fill(folder, requirements, names, pythons):
        (folder / "pydantic_core-2.0-cp312-cp312-win_amd64.whl").write_bytes(b"not really")
        wheels.write_served(folder, wheels.served(names, pythons))

    monkeypatch.setattr(handout, "build_wheel", fake_wheel)
    monkeypatch.setattr(wheels, "fill", fake_fill)
    return handout.build_handout(tmp_path, wheels.platforms_named(["all"]), list(wheels.PYTHONS))


def test_the_handouts_first_page_says_which_laptops_it_serves(built):
    first_page = "\n".join((built / "README.md").read_text().splitlines()[:12])
    for label in ("Windows x86_64", "macOS arm64", "macOS x86_64", "Linux x86_64", "Linux aarch64"):
        assert label in first_page
    assert "Python 3.11, 3.12, 3.13" in first_page and "{" not in first_page


def test_the_small_handout_holds_the_course_and_no_answers(built):
    small = built.parent / handout.SMALL
    files = sorted(str(path.relative_to(small)) for path in small.rglob("*") if path.is_file())
    french = [f"notebooks/fr/{n.stem}.ipynb" for n in COURSE.notebooks if (ROOT / "notebooks" / "fr" / f"{n.stem}.ipynb").exists()]
    assert files == sorted([*(f"notebooks/{n.stem}.ipynb" for n in COURSE.notebooks), *french, "README.md", "requirements.txt",
                            "scripts/bootstrap.py", "wheelhouse/looplab-1.0-py3-none-any.whl",
                            "wheelhouse/platforms.json"])
    assert wheels.read_served(small / "wheelhouse") == []
    assert "small handout" in (small / "README.md").read_text()
    for path in (small / "notebooks").rglob("*.ipynb"):
        sources = "\n".join("".join(cell["source"]) for cell in json.loads(path.read_text())["cells"])
        assert not REGION.search(sources) and BEGIN not in sources, path.name
    with zipfile.ZipFile(f"{small}.zip") as archive:
        assert not [name for name in archive.namelist() if "solutions" in name or "tests/" in name]
        assert f"{handout.SMALL}/scripts/bootstrap.py" in archive.namelist()


def test_the_learner_readme_speaks_the_handouts_language():
    english, french = handout.learner_readme([]), handout.learner_readme([], "fr")
    assert "small handout" in english and f"{len(COURSE.notebooks)} Jupyter notebooks" in english
    assert "petit kit" in french and "lab --lang fr" in french and "notebooks/fr/" in french
    assert "{" not in english.split("## Hand")[0] and "{" not in french.split("## Rendre")[0]


@pytest.mark.parametrize("args, expected", [
    (["--lang", "fr", "--no-browser"], ("fr", ["--no-browser"])),
    (["--port=1", "--lang=fr"], ("fr", ["--port=1"])),
    (["--no-browser"], ("en", ["--no-browser"])),
])
def test_bootstrap_lab_takes_the_courses_language(args, expected):
    assert bootstrap["language_option"](args) == expected
    opened = bootstrap["lab_command"]("python", expected[1], expected[0])[4]
    assert opened == os.path.join(*(["notebooks"] + (["fr"] if expected[0] == "fr" else []) + ["01_one_tool_call.ipynb"]))
    assert (ROOT / opened).exists() or expected[0] == "fr"  # the French notebooks are generated by `make notebooks`


def test_bootstrap_names_an_unknown_language_in_one_line(tmp_path):
    run = subprocess.run([sys.executable, str(BOOTSTRAP), "lab", "--lang", "de"], capture_output=True, text=True)
    assert run.returncode == 2 and run.stderr.strip() == "bootstrap: --lang takes one of en, fr; got 'de'"


# scripts/bootstrap.py's side: a laptop the wheelhouse does not serve.

SERVES_WINDOWS = [{"name": "windows-x86_64", "label": "Windows x86_64", "system": "Windows",
                   "machines": ["amd64", "x86_64"], "pythons": ["3.11", "3.12", "3.13"]}]


@pytest.mark.parametrize("system, machine, name", [("Windows", "AMD64", "windows-x86_64"),
                                                   ("Darwin", "arm64", "macos-arm64"),
                                                   ("Darwin", "x86_64", "macos-x86_64"),
                                                   ("Linux", "aarch64", "linux-aarch64"),
                                                   ("Linux", "arm64", "linux-aarch64"),
                                                   ("Linux", "x86_64", "linux-x86_64")])
def test_bootstrap_names_each_laptop_as_the_handouts_for_option_does(system, machine, name):
    assert bootstrap["this_laptop"](system, machine, (3, 12))[0] == name
    assert name in wheels.PLATFORMS
    entry = wheels.served([name], ["3.12"])[0]
    assert bootstrap["serves"]([entry], system, machine, (3, 12))
    assert not bootstrap["serves"]([entry], system, machine, (3, 14))


def fake_wheelhouse(folder: Path, entries: list[dict]) -> Path:
    (folder / "wheelhouse").mkdir(parents=True)
    wheels.write_served(folder / "wheelhouse", entries)
    return folder / "wheelhouse"


def test_a_laptop_not_served_offline_gets_one_line_and_pip_is_not_called(tmp_path, monkeypatch):
    monkeypatch.setattr(platform, "system", lambda: "Linux")
    monkeypatch.setattr(platform, "machine", lambda: "aarch64")
    monkeypatch.setitem(bootstrap["install"].__globals__, "network_reachable", lambda: False)  # run_path gave a copy
    monkeypatch.setattr(subprocess, "call", lambda *args, **kwargs: pytest.fail("pip was called"))
    line = bootstrap["install_from_wheelhouse"](["pip"], str(fake_wheelhouse(tmp_path, SERVES_WINDOWS)))
    python = "{}.{}".format(*sys.version_info[:2])
    assert "\n" not in line
    assert f"this laptop (Linux aarch64, Python {python})" in line
    assert "it serves Windows x86_64 on Python 3.11, 3.12, 3.13" in line
    assert "connect to a network and run this again" in line and "built `--for linux-aarch64`" in line


def test_a_python_the_handout_lacks_is_named_in_the_build_to_ask_for(monkeypatch):
    entries = wheels.served(["linux-x86_64"], ["3.11"])
    line = bootstrap["not_served_line"](entries, ("linux-x86_64", "Linux x86_64", "3.13"), "has no wheels for", True)
    assert "`--for linux-x86_64 --python 3.13`" in line and "trying with the network now" in line


def test_the_set_up_offline_on_a_laptop_not_served_ends_in_one_line_and_doctor_says_why(tmp_path):
    """For real, once: pip is never called, exit 1, no traceback; doctor explains. (The venv is made here
    without pip, which this path never needs: making one with pip takes half a minute on a busy machine.)"""
    folder = tmp_path / "handout"
    (folder / "scripts").mkdir(parents=True)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", folder / ".venv"], check=True)
    shutil.copy(BOOTSTRAP, folder / "scripts")
    (folder / "requirements.txt").write_text("looplab==0.1.0\n")
    fake_wheelhouse(folder, SERVES_WINDOWS if platform.system() != "Windows" else [])
    dead = {"PATH": "/usr/bin:/bin", "PIP_INDEX_URL": "http://127.0.0.1:9/simple", "PIP_CONFIG_FILE": "/dev/null"}
    run = subprocess.run([sys.executable, "scripts/bootstrap.py", "setup"], cwd=folder, capture_output=True,
                         text=True, env=dead, timeout=300)
    assert run.returncode == 1 and "Traceback" not in run.stdout + run.stderr, run.stdout + run.stderr
    last = run.stdout.splitlines()[-1]
    assert last.startswith("bootstrap: wheelhouse/ has no wheels for this laptop (") and "no network either" in last
    doctor = subprocess.run([folder / ".venv" / "bin" / "python", "-m", "looplab", "doctor"], cwd=folder,
                            capture_output=True, text=True, env=dead)
    assert doctor.returncode == 1
    assert doctor.stderr.startswith("looplab is not installed in this .venv: the set-up stopped: wheelhouse/ has no")

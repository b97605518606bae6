"""The handout's wheelhouse: which laptops it serves, and how pip fills it for each of them.

Why one `pip download` per platform and per Python: given several `--platform` values, pip takes one
wheel per package, the best of those tags, so a single call for "Linux x86_64 and aarch64" leaves one
of the two without its compiled wheels (pydantic-core, pyzmq, rpds-py...). And why pip runs through
`authoring.pip_for_platform`: even with `--platform` and `--python-version`, pip reads a dependency's
environment markers (`pywinpty; os_name == 'nt'`, `appnope; platform_system == 'Darwin'`,
`overrides; python_version < '3.12'`) for the computer it runs on, so a Windows wheelhouse built on
Linux lacked pywinpty and colorama, and a dry run on Linux would not notice. That module gives pip the
target's markers (`marker_environment`).

What a wheelhouse serves is written into it, `wheelhouse/platforms.json` (`write_served`):
scripts/bootstrap.py reads it before calling pip, so a laptop it does not serve gets one line saying
so, and the handout's README lists the same platforms and Pythons.
"""

from __future__ import annotations

import json
import platform
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from . import ROOT

# The Pythons the course supports: from scripts/bootstrap.py's NEEDED (3.11) to the newest one it is
# tested on (pyproject's requires-python has no upper bound; add a version here once it is tested).
PYTHONS = ("3.11", "3.12", "3.13")
SERVED_FILE = "platforms.json"  # inside wheelhouse/, read by scripts/bootstrap.py
MACOS = "11_0"  # the oldest macOS a wheel may ask for: Big Sur, the first on Apple's own chips
# Linux wheels for glibc 2.17 (2014) up to 2.28 (2018: Debian 10, Ubuntu 20.04, RHEL 8), oldest first:
# pip prefers the first tag a package has, so a laptop with an old glibc gets the wheel it can run.
GLIBC = range(17, 29)


def manylinux(arch: str) -> tuple[str, ...]:
    return tuple(f"manylinux_2_{minor}_{arch}" for minor in GLIBC) + (f"manylinux2014_{arch}",)


@dataclass(frozen=True)
class Platform:
    """One kind of laptop: what `--for` calls it, what it says about itself, what wheels it takes."""

    name: str  # what `--for` takes, and what bootstrap tells a learner to ask for: "linux-aarch64"
    label: str  # for people: "Linux aarch64"
    system: str  # platform.system() on it
    machines: tuple[str, ...]  # platform.machine() on it, lower-cased (Windows says AMD64)
    tags: tuple[str, ...]  # pip's --platform values, in the order pip should prefer them
    markers: dict  # sys_platform, os_name, platform_system, platform_machine as the laptop has them


def _markers(sys_platform: str, os_name: str, system: str, machine: str) -> dict:
    return {"sys_platform": sys_platform, "os_name": os_name, "platform_system": system,
            "platform_machine": machine}


PLATFORMS = {platform_.name: platform_ for platform_ in (
    Platform("windows-x86_64", "Windows x86_64", "Windows", ("amd64", "x86_64"), ("win_amd64",),
             _markers("win32", "nt", "Windows", "AMD64")),
    Platform("macos-arm64", "macOS arm64", "Darwin", ("arm64",), (f"macosx_{MACOS}_arm64",),
             _markers("darwin", "posix", "Darwin", "arm64")),
    Platform("macos-x86_64", "macOS x86_64", "Darwin", ("x86_64",), (f"macosx_{MACOS}_x86_64",),
             _markers("darwin", "posix", "Darwin", "x86_64")),
    Platform("linux-x86_64", "Linux x86_64", "Linux", ("x86_64", "amd64"), manylinux("x86_64"),
             _markers("linux", "posix", "Linux", "x86_64")),
    Platform("linux-aarch64", "Linux aarch64", "Linux", ("aarch64", "arm64"), manylinux("aarch64"),
             _markers("linux", "posix", "Linux", "aarch64")),
    # Not in the room's usual mix, but a handout can be built for it when a learner has one.
    Platform("windows-arm64", "Windows arm64", "Windows", ("arm64",), ("win_arm64",),
             _markers("win32", "nt", "Windows", "ARM64")),
)}
SYSTEMS = {"windows": ("windows-x86_64",), "macos": ("macos-arm64", "macos-x86_64"),
           "linux": ("linux-x86_64", "linux-aarch64")}
ROOM = SYSTEMS["windows"] + SYSTEMS["macos"] + SYSTEMS["linux"]  # the default: the usual mix of a room
HERE = "here"  # this computer, with the Python running the build: the quick local handout


def platforms_named(names: list[str]) -> list[str]:
    """`--for` values to platform names: a system stands for its platforms, "all" for the room's mix."""
    chosen = []
    for name in names:
        expanded = ROOM if name == "all" else SYSTEMS.get(name, (name,))
        for one in expanded:
            if one != HERE and one not in PLATFORMS:
                known = ", ".join([HERE, "all", *SYSTEMS, *PLATFORMS])
                raise ValueError(f"--for takes {known}; got {name}")
            if one not in chosen:
                chosen.append(one)
    return chosen


def marker_environment(platform_: Platform, python: str) -> dict:
    """The environment markers pip should read for this laptop and Python (`pip_for_platform`)."""
    return {**platform_.markers, "python_version": python, "python_full_version": f"{python}.0",
            "implementation_name": "cpython", "platform_python_implementation": "CPython",
            "implementation_version": f"{python}.0"}


def pip_runner(platform_: Platform | None, python: str | None) -> list[str]:
    """pip, run by this Python; for another laptop, reading that laptop's environment markers."""
    if platform_ is None:
        return [sys.executable, "-m", "pip"]
    return [sys.executable, "-m", "authoring.pip_for_platform", json.dumps(marker_environment(platform_, python))]


def target_options(platform_: Platform, python: str) -> list[str]:
    """pip's options for the wheels of another laptop: its tags, its Python, CPython, wheels only."""
    tags = [arg for tag in platform_.tags for arg in ("--platform", tag)]
    return ["--only-binary", ":all:", *tags, "--python-version", python, "--implementation", "cp"]


def download_plan(wheelhouse: Path, requirements: Path, names: list[str], pythons: list[str]) -> list[list[str]]:
    """The `pip download` commands that fill a wheelhouse: one per platform and Python (module docstring)."""
    wheels = ["--find-links", str(wheelhouse), "--dest", str(wheelhouse), "--only-binary", ":all:",
              "-r", str(requirements)]
    plan = []
    for name in names:
        if name == HERE:
            plan.append([*pip_runner(None, None), "download", "--quiet", *wheels])
            continue
        for python in pythons:
            one = PLATFORMS[name]
            plan.append([*pip_runner(one, python), "download", "--quiet", *target_options(one, python), *wheels])
    return plan


def this_computer() -> dict:
    """What `--for here` serves: this computer's system and machine, and the Python running the build."""
    system, machine = platform.system(), platform.machine().lower()
    known = next((p for p in PLATFORMS.values() if p.system == system and machine in p.machines), None)
    name = known.name if known else f"{system.lower()}-{machine}"
    return {"name": name, "label": known.label if known else f"{system} {machine}", "system": system,
            "machines": list(known.machines if known else (machine,)),
            "pythons": [f"{sys.version_info[0]}.{sys.version_info[1]}"]}


def served(names: list[str], pythons: list[str]) -> list[dict]:
    """What a wheelhouse filled for these platforms serves, as platforms.json lists it."""
    entries = []
    for name in names:
        if name == HERE:
            entries.append(this_computer())
        else:
            one = PLATFORMS[name]
            entries.append({"name": one.name, "label": one.label, "system": one.system,
                            "machines": list(one.machines), "pythons": list(pythons)})
    return entries


def write_served(wheelhouse: Path, entries: list[dict]) -> Path:
    """wheelhouse/platforms.json: what scripts/bootstrap.py checks a laptop against before calling pip."""
    path = wheelhouse / SERVED_FILE
    document = {"about": "the laptops this wheelhouse serves (authoring/wheelhouse.py); scripts/bootstrap.py "
                         "reads it. No platforms: the course's wheel only, the rest comes from the network.",
                "platforms": entries}
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return path


def read_served(wheelhouse: Path) -> list[dict]:
    return json.loads((wheelhouse / SERVED_FILE).read_text(encoding="utf-8"))["platforms"]


def describe(entries: list[dict]) -> str:
    """"Windows x86_64, macOS arm64, ... on Python 3.11, 3.12 and 3.13": the README's sentence."""
    if not entries:
        return "no platform: it holds the course's wheel only, the rest comes from the network"
    groups: dict[tuple, list[str]] = {}
    for entry in entries:
        groups.setdefault(tuple(entry["pythons"]), []).append(entry["label"])
    return "; ".join(f"{', '.join(labels)} on Python {', '.join(pythons)}" for pythons, labels in groups.items())


def fill(wheelhouse: Path, requirements: Path, names: list[str], pythons: list[str], run=subprocess.run) -> None:
    """Download every wheel the course needs for these platforms and Pythons, then say what it serves."""
    for command in download_plan(wheelhouse, requirements, names, pythons):
        run(command, check=True, cwd=ROOT)  # where `-m authoring.pip_for_platform` is found
    write_served(wheelhouse, served(names, pythons))

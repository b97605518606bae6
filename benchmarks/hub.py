"""How long from the class link to a learner's first check on a JupyterHub, and how much memory does a learner take?

Why this exists
---------------
A room of 30 or 300 learners on a hub all click the link at the start of a session. The instructor, or whoever
sizes the machine, wants two numbers: how long the room waits from the link to its first check, and how much
memory each learner's server and kernel hold, so that the hub's machine (The Littlest JupyterHub) or its nodes
(Zero to JupyterHub on Kubernetes) can be sized. docs/WORKSHOP.md states the sizes these figures imply.

How it measures
---------------
- The real thing, as tests/hub/test_hub.py runs it (tests/hub/hub.py): JupyterHub, configurable-http-proxy, the
  simple local-process spawner; a bare clone of this repository as the course's remote.
- Link to first check, for one learner: the learner created and their server started through the REST API, login,
  the class link (nbgitpuller's clone), the answers written, and notebook 1 run in their kernel over the proxy up to
  its first check cell. Timed for one learner alone (the baseline), then for N learners at once (default 8), side by
  side in each round; printed: the median per learner alone, the median and the slowest of the N, and the ratio of
  the room's slowest to the one alone.
- Memory per learner: after the N have run, the resident size (VmRSS, /proc) of each learner's Jupyter server and of
  its kernel, and of the hub with its proxy; the median learner's sum is what each more learner costs.

The figures are printed, never asserted: they depend on the machine. `python benchmarks/hub.py [--learners 8]
[--rounds 2]`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from authoring.hub_link import FOLDER, hub_link  # noqa: E402
from tests.hub.hub import Hub, descendants, why_no_hub  # noqa: E402
from tests.hub.test_hub import PATH, answered  # noqa: E402

BRANCH = "course"


def remote(folder: Path) -> Path:
    """This repository's committed state, as the class's bare remote."""
    bare = folder / "course.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(ROOT), str(bare)], check=True)
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], check=True, capture_output=True,
                          text=True).stdout.strip()
    subprocess.run(["git", "--git-dir", str(bare), "update-ref", f"refs/heads/{BRANCH}", head], check=True)
    return bare


def to_first_check(hub: Hub, link: str, name: str) -> float:
    """Seconds from the learner's creation to their first check's output."""
    started = time.monotonic()
    learner = hub.add_learner(name)
    learner.open_link(link)
    learner.write(PATH, answered(learner.read(PATH)))
    learner.run(PATH, stop_at=lambda cell, outputs: "check(" in cell.source)
    return time.monotonic() - started


def resident_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def memory(hub: Hub, names: list[str]) -> tuple[list[int], int]:
    """Each learner's server and kernel together (KiB), and the hub with its proxy (KiB)."""
    learners = []
    servers = set()
    for name in names:
        pid = hub.api("GET", f"/users/{name}").json()["servers"][""]["state"]["pid"]
        tree = descendants(pid)
        servers.update(tree)
        learners.append(sum(resident_kib(each) for each in tree))
    rest = [each for each in descendants(hub.process.pid) if each not in servers]
    return learners, sum(resident_kib(each) for each in rest)


def one_round(folder: Path, bare: Path, count: int, number: int) -> tuple[float, list[float], list[int], int]:
    hub = Hub(folder / f"hub{number}")
    try:
        link = hub_link(hub.url, str(bare), BRANCH)
        alone = to_first_check(hub, link, "alone")
        names = [f"learner{index}" for index in range(count)]
        with ThreadPoolExecutor(count) as pool:
            room = list(pool.map(lambda name: to_first_check(hub, link, name), names))
        learners, hub_kib = memory(hub, names)
    finally:
        hub.stop()
    return alone, room, learners, hub_kib


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--learners", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    missing = why_no_hub()
    if missing:
        print(f"benchmarks/hub.py: {missing}")
        return 0
    alone, slowest, each, learners_kib, hubs_kib = [], [], [], [], []
    with tempfile.TemporaryDirectory() as scratch:
        bare = remote(Path(scratch))
        for number in range(args.rounds):
            one, room, learners, hub_kib = one_round(Path(scratch), bare, args.learners, number)
            alone.append(one)
            slowest.append(max(room))
            each += room
            learners_kib += learners
            hubs_kib.append(hub_kib)
            print(f"round {number + 1}: one learner alone {one:.1f} s; {args.learners} at once: median "
                  f"{statistics.median(room):.1f} s, slowest {max(room):.1f} s")
    median_alone, median_slowest = statistics.median(alone), statistics.median(slowest)
    per_learner = statistics.median(learners_kib) / 1024
    print(f"\nlink to first check ({args.rounds} rounds, medians; {FOLDER}/notebooks/, notebook 1):")
    print(f"  one learner alone           {median_alone:6.1f} s   (baseline)")
    print(f"  {args.learners} at once, per learner     {statistics.median(each):6.1f} s   "
          f"({statistics.median(each) / median_alone:.2f}x)")
    print(f"  {args.learners} at once, the slowest     {median_slowest:6.1f} s   "
          f"({median_slowest / median_alone:.2f}x)")
    print("\nmemory (resident, after the first check):")
    print(f"  per learner (server + kernel) {per_learner:6.0f} MiB  (median; min {min(learners_kib) / 1024:.0f}, "
          f"max {max(learners_kib) / 1024:.0f})")
    print(f"  the hub and its proxy         {statistics.median(hubs_kib) / 1024:6.0f} MiB")
    cpu = os.cpu_count() or 1
    seconds = median_slowest * cpu / args.learners  # CPU-seconds one learner's start takes, the cores shared
    print(f"\none learner's start to the first check: about {seconds:.1f} CPU-seconds ({args.learners} at once on "
          f"{cpu} cores, the slowest)")
    for room in (30, 300):
        print(f"  a room of {room:>3}: {room * per_learner / 1024 + statistics.median(hubs_kib) / 1024 ** 2:5.1f} GiB "
              f"(learners and hub); all at once: {room * seconds / 60:.0f} CPU-minutes to their first checks")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""How long does `python -m looplab.grade` take per notebook, against a bare fresh kernel?

Why this exists
---------------
In a workshop the instructor grades ~30 learners' notebooks at once and wants the gradebook in
minutes. Every notebook must run in a fresh kernel, so the floor for one notebook is what it costs
to start a fresh kernel, run a trivial cell and stop it: that is the baseline here. Targets from
the issue:

    - grading costs at most 1.5x the floor per notebook (with --jobs 1);
    - --jobs 2 is at least 1.6x faster than --jobs 1;
    - isolation (every kernel in its own bubblewrap sandbox, the default where bwrap works) costs at
      most 1.25x grading without it (--isolation none), per notebook at --jobs 1.

How it measures
---------------
- The submissions: N learners (default 30), each a folder holding a copy of every solution
  notebook in solutions/ (four once the course is complete: 120 notebooks).
- The floor: `nbclient.NotebookClient(trivial notebook).execute()` in this process, as any tool
  running notebooks does; kernel output to /dev/null. The median of runs taken before and after
  each round's grading runs, so a machine that speeds up or slows down shows in both.
- Grading: the real command, `python -m looplab.grade FOLDER --jobs J --out CSV --quiet`, in a
  subprocess, timed from outside: interpreter start, imports and the kernel template are all
  included. Time per notebook = wall time / number of notebooks. The gradebook is then read back:
  every row must be "solved", or the figures mean nothing and the script says so. The CPU time of
  the whole run (grader, template, kernels, what the notebooks start) is reported too: on a machine
  with C cores, --jobs C can never beat CPU time / C. Not for isolated runs (the CPU time of the
  processes in a bubblewrap sandbox never reaches the grader's own accounts) nor for plain kernels
  (killed with the small parent that started them, before it could collect their time): n/a.
- Isolated and not: every round grades with `--isolation bwrap` (when bubblewrap works here; else
  the script says so and times without) and `--isolation none`, side by side; the targets on the
  floor and on --jobs 2 are the isolated figures (what the default does).
- Rounds: --jobs 1 and --jobs 2 alternate (their order swapped every round), with floor runs in
  between, so a machine whose load changes affects both sides; the figures are medians over rounds.
- Per course notebook: the median time the grader spent on each (kernel start to kernel stop, from
  the --jobs 1 runs, via LOOPLAB_GRADE_TIMINGS), next to what running that notebook alone takes
  with nbclient in a fresh kernel (no grading: the way the test suite runs notebooks).
- The second baseline: `--plain-kernels --isolation none --jobs 1` on a few learners, a fresh kernel
  started from scratch for every notebook, which is how nbgrader and otter grade: what the template saves.

- Runaway loops: what one notebook whose loop never ends costs, at the grader's default limits
  (`--jobs 1`), against the same notebook solved, graded the same way (the baseline, side by side):
  the fixtures tests/test_grade.py grades, built from the first solution notebook. `endless_loop`:
  1.3's function spins forever, and a cell after its check calls it once more; `swallowed_interrupt`:
  1.3's function retries forever in bare `try/except:`s, which catch the grader's interrupt too;
  `growing_loop`: 1.1's function fills a list forever. Time: the grader's own per-notebook time (LOOPLAB_GRADE_TIMINGS).
  Memory: the peak resident size of the biggest process under the grader (its kernel), read from
  /proc every 20 ms (Linux; "n/a" elsewhere).

The figures are printed, never asserted: timings depend on the machine. The script always exits
with 0. `--quick` grades 1 learner's first notebook once, isolated at --jobs 1 and 2 and not
isolated at --jobs 1, without the warm-up kernel, the second baseline or the notebooks run alone, and only the
solved notebook and the growing list of the runaway loops, to prove the script works (the test suite runs it).
That one notebook is the runaway loops' solved baseline too, graded the same way, so --quick takes the baseline's
figures from its isolated --jobs 1 run (watched for memory) rather than grading it again. One notebook is graded
in one slot whatever --jobs says (the grader never starts more slots than notebooks), so --quick's isolated
--jobs 2 row is that same run, said so on its line, rather than the same command once more; and it takes the
floor once: three grader runs.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from looplab.client import offline_environment

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions"
TARGET_FLOOR_RATIO = 1.5  # per notebook, at --jobs 1
TARGET_SPEEDUP = 1.6  # --jobs 2 against --jobs 1
TARGET_ISOLATION = 1.25  # isolated against not isolated, per notebook at --jobs 1


def make_submissions(folder: Path, learners: int, solutions: list[Path]) -> int:
    for number in range(1, learners + 1):
        learner = folder / f"learner{number:02d}"
        learner.mkdir(parents=True)
        for path in solutions:
            shutil.copyfile(path, learner / path.name)
    return learners * len(solutions)


def floor_once(workdir: Path) -> float:
    """Start a fresh kernel, run `1 + 1`, stop it: what every graded notebook costs at least."""
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 + 1")])
    started = time.perf_counter()
    NotebookClient(notebook, kernel_name="python3", timeout=60).execute(
        cwd=str(workdir), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def notebook_alone(path: Path, workdir: Path) -> float:
    """Run a notebook with nbclient in a fresh kernel, no grading: the notebook's own cost."""
    notebook = nbformat.read(path, as_version=4)
    started = time.perf_counter()
    NotebookClient(notebook, kernel_name="python3", timeout=120, allow_errors=True).execute(
        cwd=str(workdir), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def grader(folder: Path, jobs: int, out: Path, extra: tuple, timings: Path | None) -> tuple[list[str], dict]:
    """The real command line, and its environment (offline; LOOPLAB_GRADE_TIMINGS if timings are wanted)."""
    command = [sys.executable, "-m", "looplab.grade", str(folder), "--jobs", str(jobs), "--out", str(out),
               "--quiet", *extra]
    env = offline_environment()
    if timings is not None:
        env["LOOPLAB_GRADE_TIMINGS"] = str(timings)
    return command, env


def grade(folder: Path, jobs: int, out: Path, *extra: str, timings: Path | None = None) -> tuple[float, float]:
    """Wall time and CPU time (the grader and every process under it) of one grading run."""
    command, env = grader(folder, jobs, out, extra, timings)
    cpu = children_cpu()
    started = time.perf_counter()
    run = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if run.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{run.stderr}")
    return elapsed, children_cpu() - cpu


def descendants(root: int) -> list[int]:
    """The processes under `root` (sandboxed ones too: a PID namespace hides nothing from outside it)."""
    parents: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        parent = int(text[text.rindex(")") + 2:].split()[1])  # after "pid (name) state"
        parents.setdefault(parent, []).append(int(stat.parent.name))
    found, todo = [], [root]
    while todo:
        children = parents.get(todo.pop(), [])
        found += children
        todo += children
    return found


def peak_resident(pid: int) -> int:
    """A process's peak resident size in bytes (VmHWM), 0 once it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0


def run_watched(command: list[str], env: dict) -> tuple[float, float, float | None]:
    """Run the grader as grade() does, sampling every 20 ms the peak resident size of the biggest process under it
    (its kernel): wall time, CPU time, and that peak in MB (None where there is no /proc)."""
    cpu = children_cpu()
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True)
    watch = Path("/proc").is_dir()
    peak = 0
    while process.poll() is None:
        if watch:
            peak = max([peak] + [peak_resident(pid) for pid in descendants(process.pid)])
        time.sleep(0.02)
    elapsed = time.perf_counter() - started
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{process.stderr.read()}")
    return elapsed, children_cpu() - cpu, (peak / 2**20 if watch else None)


def grader_seconds(timings: Path) -> float:
    """The grader's own seconds for the notebooks it graded (LOOPLAB_GRADE_TIMINGS)."""
    return sum(json.loads(line)["seconds"] for line in timings.read_text().splitlines())


def status_in(out: Path, exercise: str) -> str:
    with open(out, newline="", encoding="utf-8") as handle:
        return next(r["status"] for r in csv.DictReader(handle) if r["exercise"] == exercise)


def grade_watched(folder: Path, out: Path, timings: Path, *extra: str) -> tuple[float, float | None]:
    """Grade at --jobs 1: the grader's seconds for the notebook, and the peak resident MB of the biggest
    process under it (sampled every 20 ms; None where there is no /proc)."""
    command, env = grader(folder, 1, out, extra, timings)
    timings.unlink(missing_ok=True)
    _, _, peak = run_watched(command, env)
    return grader_seconds(timings), peak


Runaway = tuple[str, float, float | None, str]  # (fixture, seconds, peak MB, status of its looping exercise)


def runaway_loops(tmp_path: Path, isolation: str, quick: bool, solved: Runaway | None = None) -> list[Runaway]:
    """(fixture, seconds, peak MB, status of its looping exercise) for the solved notebook and each runaway loop.
    `solved`: the solved notebook's row, when a run graded it already with the same options (--quick's round)."""
    sys.path.insert(0, str(ROOT / "tests" / "grading_fixtures"))
    import make_fixtures

    cases = [("solved (baseline)", make_fixtures.solution(make_fixtures.NB1), "1.3"),
             ("endless_loop", make_fixtures.endless_loop(), "1.3"),
             ("swallowed_interrupt", make_fixtures.swallowed_interrupt(), "1.3"),
             ("growing_loop", make_fixtures.growing_loop(), "1.1")]
    if quick:  # the one that costs seconds, not the cell limit
        cases = [cases[0], cases[-1]]
    extra = ["--isolation", isolation]
    results = []
    if solved is not None:
        cases, results = cases[1:], [solved]
    for name, notebook, exercise in cases:
        folder = tmp_path / "runaway" / name.split()[0]
        folder.mkdir(parents=True)
        nbformat.write(notebook, folder / f"{make_fixtures.NB1}.ipynb")
        out = tmp_path / f"grades-{name.split()[0]}.csv"
        seconds, peak = grade_watched(folder, out, tmp_path / "timings-runaway.jsonl", *extra)
        results.append((name, seconds, peak, f"{exercise}: {status_in(out, exercise)}"))
    return results


def print_runaway(runaway: list[Runaway], isolation: str, quick: bool) -> None:
    print(f"runaway loops, one notebook graded alone at --jobs 1, isolation {isolation}, "
          + "the default limits" + (" (--quick: two of them)" if quick else ""))
    print(f"{'notebook':<20}  {'graded s':>8}  {'x solved':>8}  {'peak MB':>7}  {'x solved':>8}  status")
    base_seconds, base_peak = runaway[0][1], runaway[0][2]
    for name, seconds, peak, status in runaway:
        memory = (f"{peak:>7.0f}  {peak / base_peak:>7.2f}x" if peak and base_peak else f"{'n/a':>7}  {'n/a':>8}")
        print(f"{name:<20}  {seconds:>8.2f}  {seconds / base_seconds:>7.2f}x  {memory}  {status}")


def unsolved(out: Path, expected_notebooks: int) -> list[str]:
    with open(out, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    problems = [f"{r['learner']} {r['notebook']} {r['exercise']}: {r['status']} {r['message']}"
                for r in rows if r["status"] != "solved"]
    files = {r["file"] for r in rows}
    if len(files) != expected_notebooks:
        problems.append(f"{len(files)} notebooks in the gradebook, expected {expected_notebooks}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--learners", type=int, default=30, help="learners, each with every solution notebook")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of --jobs 1 and --jobs 2 (medians)")
    parser.add_argument("--quick", action="store_true", help="1 learner, one round: proves the script runs")
    parser.add_argument("--runaway-only", action="store_true",
                        help="only the runaway loops, at the default limits (under a minute)")
    args = parser.parse_args(argv)
    if args.runaway_only:
        sys.path.insert(0, str(ROOT))
        from looplab.grade.kernels.sandbox import probe

        isolation = "bwrap" if probe() is None else "none"
        with tempfile.TemporaryDirectory(prefix="looplab-bench-") as tmp:
            print_runaway(runaway_loops(Path(tmp), isolation, quick=False), isolation, quick=False)
        return 0
    learners, rounds = (1, 1) if args.quick else (args.learners, max(1, args.rounds))
    solutions = sorted(SOLUTIONS.glob("*.ipynb"))[:1 if args.quick else None]
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    sys.path.insert(0, str(ROOT))
    from looplab.grade.kernels.sandbox import probe

    why_not = probe()
    isolated = "bwrap" if why_not is None else "none"
    # (isolation, jobs) -> [(wall, cpu)]; at --jobs 2 only in full runs (--quick's isolated row: its --jobs 1 run)
    runs: dict[tuple[str, str], list[tuple[float, float]]] = {(isolated, "1"): [], ("none", "1"): []}
    if not args.quick:
        runs[(isolated, "2")], runs[("none", "2")] = [], []
    floors: list[float] = []
    problems: list[str] = []
    plain = None
    solved = None  # --quick: the runaway loops' baseline, from the round's isolated --jobs 1 run
    with tempfile.TemporaryDirectory(prefix="looplab-bench-") as tmp:
        tmp_path = Path(tmp)
        notebooks = make_submissions(tmp_path / "submissions", learners, solutions)
        workdir = tmp_path / "floor"
        workdir.mkdir()
        if not args.quick:
            floor_once(workdir)  # warm-up: the first kernel of a session pays for cold disk caches
        for number in range(rounds):
            floors += [floor_once(workdir) for _ in range(1 if args.quick else 2)]
            order = sorted(runs, key=lambda key: (key[1], key[0] != isolated))
            for isolation, jobs in (order if number % 2 == 0 else order[::-1]):
                out = tmp_path / f"grades-{number}-{isolation}-{jobs}.csv"
                timings = tmp_path / f"timings-{isolation}.jsonl" if jobs == "1" else None
                if args.quick and (isolation, jobs) == (isolated, "1"):
                    # The solved first notebook, alone, isolated at --jobs 1: what the runaway loops' baseline
                    # grades, with the same options. --quick's one round makes this run that baseline too
                    # (watched for its memory), rather than grading the same notebook the same way again.
                    wall, cpu, peak = run_watched(*grader(tmp_path / "submissions", 1, out,
                                                          ("--isolation", isolation), timings))
                    runs[(isolation, jobs)].append((wall, cpu))
                    solved = ("solved (baseline)", grader_seconds(timings), peak, f"1.3: {status_in(out, '1.3')}")
                else:
                    runs[(isolation, jobs)].append(grade(tmp_path / "submissions", int(jobs), out, "--isolation",
                                                         isolation, timings=timings))
                problems += unsolved(out, notebooks)
            floors += [floor_once(workdir) for _ in range(0 if args.quick else 2)]
        if args.quick:  # one notebook takes one slot whatever --jobs says: --jobs 2 grades it as --jobs 1 did
            runs[(isolated, "2")] = runs[(isolated, "1")]
        graded: dict[str, dict[str, list[float]]] = {}  # isolation -> course notebook -> seconds
        for isolation in {isolated, "none"}:
            for line in (tmp_path / f"timings-{isolation}.jsonl").read_text().splitlines():
                record = json.loads(line)
                graded.setdefault(isolation, {}).setdefault(record["notebook"], []).append(record["seconds"])
        alone = {} if args.quick else {
            path.stem: statistics.median(notebook_alone(path, workdir) for _ in range(3))
            for path in solutions}
        runaway = runaway_loops(tmp_path, isolated, args.quick, solved)
        if not args.quick:
            plain_folder = tmp_path / "plain"
            plain_notebooks = make_submissions(plain_folder, min(learners, 3), solutions)
            out = tmp_path / "grades-plain.csv"
            plain = (plain_notebooks, *grade(plain_folder, 1, out, "--plain-kernels", "--isolation", "none"))
            problems += unsolved(out, plain_notebooks)

    floor = statistics.median(floors)
    print(f"Grading: time per notebook against a fresh kernel running one trivial cell"
          f"{' (--quick: rough figures)' if args.quick else ''}")
    print(f"python {sys.version.split()[0]}, {cores} cores; {learners} learners x "
          f"{len(solutions)} solution notebooks = {notebooks} notebooks; {rounds} round(s)")
    print()
    print(f"floor: trivial notebook in a fresh kernel (nbclient): {floor:.3f} s "
          f"(median of {len(floors)}, from {min(floors):.3f} to {max(floors):.3f})")
    print()
    if why_not:
        print(f"bubblewrap cannot run here ({why_not}): the isolated figures could not be taken")
        print()
    print(f"{'kernels':<8}  {'isolation':<9}  {'jobs':>4}  {'notebooks':>9}  {'wall s':>7}  {'per notebook s':>14}"
          f"  {'x floor':>7}  {'CPU s per notebook':>18}  {'cores busy':>10}")
    per_notebook = {}
    for (isolation, jobs), measured in sorted(runs.items(), key=lambda item: (item[0][0] != isolated, item[0][1])):
        for wall, cpu in measured:
            cpu_figures = (f"{cpu / notebooks:>18.3f}  {cpu / wall:>10.2f}" if isolation == "none"
                           else f"{'n/a':>18}  {'n/a':>10}")  # a sandbox's CPU time never reaches this process
            same = "   (--quick: the --jobs 1 run; one notebook, one slot)" if args.quick and jobs == "2" else ""
            print(f"{'forked':<8}  {isolation:<9}  {jobs:>4}  {notebooks:>9}  {wall:>7.1f}  {wall / notebooks:>14.3f}  "
                  f"{wall / notebooks / floor:>6.2f}x  {cpu_figures}{same}")
        per_notebook[isolation, jobs] = statistics.median(wall for wall, _ in measured) / notebooks
    if plain:
        count, wall, cpu = plain
        print(f"{'plain':<8}  {'none':<9}  {1:>4}  {count:>9}  {wall:>7.1f}  {wall / count:>14.3f}  "
              f"{wall / count / floor:>6.2f}x  {'n/a':>18}  {'n/a':>10}   (a fresh kernel per notebook, "
              f"as nbgrader and otter grade)")
    print()
    print(f"{'per course notebook (--jobs 1)':<32}  {'run alone, nbclient s':>21}  {'graded s, ' + isolated:>15}  "
          f"{'graded s, none':>14}  {'x floor':>7}")
    for stem, seconds in sorted(graded[isolated].items()):
        median = statistics.median(seconds)
        bare = statistics.median(graded["none"].get(stem, [float("nan")]))
        print(f"{stem:<32}  {alone.get(stem, float('nan')):>21.3f}  {median:>15.3f}  {bare:>14.3f}  "
              f"{median / floor:>6.2f}x")
    print()
    print_runaway(runaway, isolated, args.quick)
    print()
    ratio = per_notebook[isolated, "1"] / floor
    print(f"target: at most {TARGET_FLOOR_RATIO:g}x the floor per notebook at --jobs 1: {ratio:.2f}x "
          f"(median {per_notebook[isolated, '1']:.3f} s, isolation {isolated}), "
          f"{'met' if ratio <= TARGET_FLOOR_RATIO else 'NOT met'}")
    speedup = per_notebook[isolated, "1"] / per_notebook[isolated, "2"]
    print(f"target: --jobs 2 at least {TARGET_SPEEDUP:g}x faster than --jobs 1: {speedup:.2f}x "
          f"(median {per_notebook[isolated, '2']:.3f} s, isolation {isolated}), "
          f"{'met' if speedup >= TARGET_SPEEDUP else 'NOT met'}")
    cost = per_notebook[isolated, "1"] / per_notebook["none", "1"]
    print(f"target: isolation costs at most {TARGET_ISOLATION:g}x per notebook at --jobs 1: {cost:.2f}x "
          f"({per_notebook[isolated, '1']:.3f} s isolated ({isolated}), {per_notebook['none', '1']:.3f} s not), "
          + ("not measured: bubblewrap cannot run here" if why_not else 'met' if cost <= TARGET_ISOLATION else 'NOT met'))
    if problems:
        print()
        print(f"WARNING: {len(problems)} gradebook problem(s), the figures above are not valid:")
        for problem in problems[:10]:
            print(f"  {problem}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A JupyterHub's homes graded as a class (`--homes`, looplab/grade/submissions/homes.py; issue 39, "Collecting").

Fake homes, as two spawners lay them out: the simple local-process spawner's `/tmp/NAME` and The Littlest
JupyterHub's `/home/jupyter-NAME`, each holding the course where the class link clones it (`looplab-course/`, as
`python -m authoring hub-link` names it), the learner's copies of notebook 1 from `notebooks/` and the answers from
`solutions/`. Around the notebooks the grader must grade lie answers it must never grade: Jupyter's
`.ipynb_checkpoints` copies, a "Copy1", the clone's `solutions/`, a notebook loose in the home, a course folder under a
hidden one, a system user's home. The homes are made read-only (`chmod -R a-w`) and graded; their every file and
folder, with its mode, size, times and bytes, is the same after. The grader runs as a user other than the homes'
owner, as a hub's admin grading other users' homes, so that a file or folder it may not read is one: when the tests
run as root (whom no mode stops), the grader runs as `nobody` (setpriv); otherwise as the test's user, for whom mode
000 is as closed. One real grading per layout, of notebook 1 only; the rest (names, the roster, refusals) without a
kernel.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
import unicodedata
from pathlib import Path
from types import SimpleNamespace

import pytest

from looplab.course import COURSE
from looplab.grade.__main__ import parser_for
from looplab.grade.rows.roster import read_roster
from looplab.grade.rows.unmatched import MatchError, read_matches
from looplab.grade.submissions.homes import (DEFAULT_FOLDER, Homes, HomesError, checked_folder, collect_homes,
                                             notebooks_folder, user_of)
from tests.test_grade import refused

ROOT = Path(__file__).resolve().parent.parent
NB1 = "01_one_tool_call"
STEMS = COURSE.stems
NB1_POINTS = sum(exercise.points for exercise in COURSE.notebooks[0].exercises)
ANSWERS, ANSWERS_FR = ROOT / "solutions" / f"{NB1}.ipynb", ROOT / "solutions" / "fr" / f"{NB1}.ipynb"
UNTOUCHED, UNTOUCHED_FR = ROOT / "notebooks" / f"{NB1}.ipynb", ROOT / "notebooks" / "fr" / f"{NB1}.ipynb"
CHLOE = "chloé"
ROSTER = ("id,name,email,username\n"
          "s01,Ada Lovelace,ada.lovelace@school.edu,ada\n"  # her hub user is her username, not her e-mail's first part
          "s02,Bob Brown,bob@school.edu,\n"  # by his e-mail's first part
          f"s03,Chloé Martin,chloe.martin@school.edu,{CHLOE}\n"  # by her username, her home's name unzipped in NFD
          "s04,Grace Hopper,grace@school.edu,\n"  # jupyter-grace on The Littlest JupyterHub
          "s05,Dan Diaz,dan@school.edu,\n"  # a hub whose users log in with their e-mail: his home is dan@school.edu
          "s06,Erin Park,erin@school.edu,\n"  # never opened the class link: not submitted
          "s07,Sam Lee,sam@school.edu,\n"  # two Sams: the hub user sam is either, so neither
          "s08,Sam Cho,sam@college.edu,\n"
          "s09,Frank Ng,frank@school.edu,\n"
          "s10,Gina Ro,gina@school.edu,\n")


def put(path: Path, source: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(source, path)


def course_in(home: Path, english: Path | None = UNTOUCHED, french: Path | None = UNTOUCHED_FR) -> Path:
    """A home where the class link cloned the course: notebook 1 in English and French, as given."""
    course = home / DEFAULT_FOLDER
    (course / "notebooks" / "fr").mkdir(parents=True, exist_ok=True)
    if english:
        put(course / "notebooks" / f"{NB1}.ipynb", english)
    if french:
        put(course / "notebooks" / "fr" / f"{NB1}.ipynb", french)
    return course


def answers_around(home: Path) -> None:
    """Answers where a learner's home may hold them, none of them the learner's notebook: never graded."""
    course = home / DEFAULT_FOLDER
    for where in (course / "notebooks" / ".ipynb_checkpoints" / f"{NB1}-checkpoint.ipynb",
                  course / "notebooks" / ".ipynb_checkpoints" / f"{NB1}.ipynb",
                  course / "notebooks" / "fr" / ".ipynb_checkpoints" / f"{NB1}-checkpoint.ipynb",
                  course / "notebooks" / f"{NB1}-Copy1.ipynb",
                  course / "solutions" / f"{NB1}.ipynb",
                  home / f"{NB1}.ipynb",
                  home / ".ipynb_checkpoints" / f"{NB1}.ipynb",
                  home / ".local" / DEFAULT_FOLDER / "notebooks" / f"{NB1}.ipynb"):
        put(where, ANSWERS)


def simple_spawner_homes(root: Path) -> None:
    """/tmp/NAME: ada and chloé answered (in English, in French), bob did not start; dan's course has no notebook;
    erin never opened the link; frank's notebook and gina's notebooks folder are closed to the grader; sam is two
    students of the roster; and what else /tmp holds."""
    course_in(root / "ada", english=ANSWERS)
    course_in(root / "bob")
    answers_around(root / "bob")
    course_in(root / unicodedata.normalize("NFD", CHLOE), french=ANSWERS_FR)
    (root / "dan@school.edu" / DEFAULT_FOLDER / "notebooks").mkdir(parents=True)
    (root / "erin" / "work").mkdir(parents=True)
    put(root / "erin" / f"{NB1}.ipynb", ANSWERS)  # not where the link puts it: not graded
    course_in(root / "frank", english=ANSWERS)
    course_in(root / "gina", english=ANSWERS)
    (root / "sam" / DEFAULT_FOLDER).mkdir(parents=True)
    (root / "systemd-private-1234").mkdir()  # /tmp holds much else
    put(root / ".hidden" / DEFAULT_FOLDER / "notebooks" / f"{NB1}.ipynb", ANSWERS)


def tljh_homes(root: Path) -> None:
    """/home/jupyter-NAME, and the machine's own user, whose clone holds answers."""
    course_in(root / "jupyter-grace", english=ANSWERS)
    course_in(root / "ubuntu", english=ANSWERS)


def tree(root: Path) -> dict[str, tuple]:
    """Every file and folder under root (root too): its type, mode, size, times of change and bytes' digest."""
    found = {}
    for folder, folders, files in os.walk(root):
        for path in [Path(folder)] + [Path(folder, name) for name in folders + files]:
            info = path.lstat()
            digest = ""
            if stat.S_ISREG(info.st_mode):
                try:
                    digest = hashlib.sha256(path.read_bytes()).hexdigest()
                except PermissionError:  # closed to the test's own user too (not root)
                    digest = "closed"
            found[str(path.relative_to(root))] = (info.st_mode, info.st_size, info.st_mtime_ns, info.st_ctime_ns,
                                                  digest)
    return found


def grader_user() -> list[str]:
    """The command prefix that runs the grader as a user who does not own the homes (see the module docstring)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: no other user to grade as")
    return [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]


def read(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8-sig") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def hub_class():
    """Both layouts built, made read-only, graded (the simple spawner's with the roster), and compared."""
    prefix = grader_user()
    base = Path(tempfile.mkdtemp(prefix="looplab-homes-"))
    base.chmod(0o755)  # the grader's user reaches it (pytest's own temporary folders are the test user's alone)
    simple, tljh, graded = base / "tmp", base / "home", base / "graded"
    try:
        simple_spawner_homes(simple)
        tljh_homes(tljh)
        (base / "class.csv").write_text(ROSTER, encoding="utf-8")
        graded.mkdir(mode=0o777)
        graded.chmod(0o777)
        for homes in (simple, tljh):
            subprocess.run(["chmod", "-R", "a-w", str(homes)], check=True)
        (simple / "frank" / DEFAULT_FOLDER / "notebooks" / f"{NB1}.ipynb").chmod(0)  # closed to the grader
        (simple / "gina" / DEFAULT_FOLDER / "notebooks").chmod(0)
        before = tree(simple) | {f"home/{path}": what for path, what in tree(tljh).items()}
        env = {**os.environ, "HOME": str(graded)}  # the admin's own home: where Jupyter keeps its files

        def grade(*arguments: str) -> subprocess.CompletedProcess:
            return subprocess.run([*prefix, sys.executable, "-m", "looplab.grade", *arguments, "--jobs", "2",
                                   "--cell-timeout", "30", "--quiet"], cwd=base, env=env, capture_output=True,
                                  text=True, timeout=600)

        run = grade("--homes", str(simple), "--roster", str(base / "class.csv"), "--out", str(graded / "grades.csv"),
                    "--wide", str(graded / "wide.csv"), "--feedback", str(graded / "feedback"))
        assert run.returncode == 0, run.stderr
        tljh_run = grade("--homes", str(tljh), "--user-prefix", "jupyter-", "--roster", str(base / "class.csv"),
                         "--out", str(graded / "tljh" / "grades.csv"))
        assert tljh_run.returncode == 0, tljh_run.stderr
        after = tree(simple) | {f"home/{path}": what for path, what in tree(tljh).items()}
        yield SimpleNamespace(base=base, simple=simple, tljh=tljh, graded=graded, run=run, tljh_run=tljh_run,
                              before=before, after=after, rows=read(graded / "grades.csv"))
    finally:
        subprocess.run(["chmod", "-R", "u+rwx", str(base)], check=False)
        shutil.rmtree(base, ignore_errors=True)


def rows_of(hub_class, learner: str) -> list[dict[str, str]]:
    return [row for row in hub_class.rows if row["learner"] == learner]


# --- graded for real ---------------------------------------------------------------------------------------------


def test_nothing_in_a_home_changed_and_every_output_is_under_the_folder_asked_for(hub_class):
    assert hub_class.after == hub_class.before
    assert len(hub_class.before) > 60  # the homes were walked, closed folders and all
    written = {path.relative_to(hub_class.graded).parts[0] for path in hub_class.graded.rglob("*")}
    assert {"grades.csv", "unmatched.csv", "wide.csv", "feedback", "tljh"} <= written
    assert not [path for path in hub_class.base.iterdir() if path.name not in ("tmp", "home", "graded", "class.csv")]


def test_each_learner_is_named_by_their_hub_user_and_matched_to_the_roster(hub_class):
    handed = {row["learner"]: row["file"] for row in hub_class.rows if row["status"] != "not submitted"}
    assert set(handed) == {"ada.lovelace@school.edu", "bob@school.edu", "chloe.martin@school.edu", "dan@school.edu",
                           "frank@school.edu", "gina@school.edu", "sam"}
    assert handed["ada.lovelace@school.edu"] == f"tmp/ada/{DEFAULT_FOLDER}/notebooks/{NB1}.ipynb"  # by her username
    on_disk = unicodedata.normalize("NFD", CHLOE)  # the file column names the folder as it is; the learner in NFC
    assert handed["chloe.martin@school.edu"] == f"tmp/{on_disk}/{DEFAULT_FOLDER}/notebooks/fr/{NB1}.ipynb"
    wide = {row["learner"]: row for row in read(hub_class.graded / "wide.csv")}
    assert wide["ada.lovelace@school.edu"]["name"] == "Ada Lovelace" and wide["sam"]["notes"].startswith("not on the")
    not_submitted = {row["learner"] for row in hub_class.rows
                     if row["status"] == "not submitted" and row["notebook"] == NB1}
    # erin never opened the link, the Sams are not told apart, grace is on the other hub; dan's and gina's rows name
    # no notebook (none in dan's course folder, gina's closed).
    assert not_submitted == {"erin@school.edu", "sam@school.edu", "sam@college.edu", "grace@school.edu",
                             "dan@school.edu", "gina@school.edu"}
    assert "sam matches 2 students of the roster (sam@school.edu, sam@college.edu), so none" in hub_class.run.stderr
    assert [row["learner"] for row in read(hub_class.graded / "unmatched.csv")] == ["sam"]
    assert (hub_class.graded / "feedback" / "ada" / f"{NB1}.ipynb").exists()


def test_only_the_course_notebook_the_learner_worked_in_is_graded(hub_class):
    points = {}
    for row in hub_class.rows:
        if row["notebook"] == NB1 and row["status"] != "not submitted":
            points.setdefault((row["learner"], row["file"]), 0)
            points[row["learner"], row["file"]] += int(row["points"])
    assert points[("ada.lovelace@school.edu", f"tmp/ada/{DEFAULT_FOLDER}/notebooks/{NB1}.ipynb")] == NB1_POINTS
    chloe = f"tmp/{unicodedata.normalize('NFD', CHLOE)}/{DEFAULT_FOLDER}/notebooks/fr/{NB1}.ipynb"  # the name on disk
    assert points[("chloe.martin@school.edu", chloe)] == NB1_POINTS
    # bob never started: his English copy, untouched, and not one of the answers lying around it.
    assert points == {**points, ("bob@school.edu", f"tmp/bob/{DEFAULT_FOLDER}/notebooks/{NB1}.ipynb"): 0}
    assert [row["status"] for row in rows_of(hub_class, "bob@school.edu") if row["notebook"] == NB1] == [
        "not written yet"] * len(COURSE.notebooks[0].exercises)
    files = " ".join(row["file"] for row in hub_class.rows)
    for never in (".ipynb_checkpoints", "Copy1", "solutions/", ".local", ".hidden", "systemd", "erin"):
        assert never not in files, never
    assert len(points) == len({learner for learner, _ in points}) == 4  # one file each: no twin graded beside another


def test_a_home_without_the_course_or_its_notebooks_is_said(hub_class):
    [dan] = [row for row in rows_of(hub_class, "dan@school.edu") if row["status"] != "not submitted"]
    assert dan["status"] == "no notebook found" and dan["file"] == f"tmp/dan@school.edu/{DEFAULT_FOLDER}/notebooks"
    assert dan["message"] == (f"no course notebook in {DEFAULT_FOLDER}/notebooks/ (the notebooks are graded where the "
                              "class link put them, under their own names)")
    said = hub_class.run.stderr
    assert re.search(rf"2 folder\(s\) in \S+/tmp hold no {DEFAULT_FOLDER}/ \(the class link was never opened there, "
                     r"or it is not a learner's home\), not graded: erin, systemd-private-1234", said), said


def test_what_the_grader_cannot_read_is_its_own_row_and_no_one_else_s(hub_class):
    [frank] = [row for row in rows_of(hub_class, "frank@school.edu") if row["status"] != "not submitted"]
    assert frank["status"] == "cannot be read" and frank["message"] == "Permission denied"
    assert frank["file"] == f"tmp/frank/{DEFAULT_FOLDER}/notebooks/{NB1}.ipynb" and frank["notebook"] == NB1
    [gina] = [row for row in rows_of(hub_class, "gina@school.edu") if row["status"] != "not submitted"]
    assert gina["status"] == "cannot be read" and gina["file"] == f"tmp/gina/{DEFAULT_FOLDER}/notebooks"
    assert gina["message"] == (f"the grader cannot read tmp/gina/{DEFAULT_FOLDER}/notebooks (Permission denied): run "
                               "it as the hub's admin (root), who can read every home")
    solved = [row for row in hub_class.rows if row["status"] == "solved"]
    assert {row["learner"] for row in solved} == {"ada.lovelace@school.edu", "chloe.martin@school.edu"}


def test_the_littlest_jupyterhub_s_homes_name_their_learner_without_the_prefix(hub_class):
    rows = read(hub_class.graded / "tljh" / "grades.csv")
    handed = {(row["learner"], row["file"]) for row in rows if row["status"] != "not submitted"}
    assert handed == {("grace@school.edu", f"home/jupyter-grace/{DEFAULT_FOLDER}/notebooks/{NB1}.ipynb")}
    assert sum(int(row["points"]) for row in rows if row["learner"] == "grace@school.edu") == NB1_POINTS
    assert "ubuntu" not in hub_class.tljh_run.stderr + hub_class.tljh_run.stdout  # not a hub user: not even named


# --- what the homes hold, without a kernel -------------------------------------------------------------------------


def test_the_course_s_own_copies_carry_no_sign_of_a_run():
    """The rule that tells a learner's notebook from its untouched twin reads a run's traces (homes._ran): the
    learner copies the class link clones must carry none, in every language."""
    for lang in ("en", "fr"):
        for path in sorted((ROOT / notebooks_folder(lang)).glob("*.ipynb")):
            cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
            ran = [cell for cell in cells if cell["cell_type"] == "code"
                   and (cell.get("execution_count") is not None or cell.get("outputs"))]
            assert not ran, f"{path.relative_to(ROOT)} carries outputs: a clone of it would look worked in"


def test_a_home_s_name_is_its_hub_user_s(tmp_path):
    assert user_of("jupyter-ada", "jupyter-") == "ada" and user_of("ada", "") == "ada"
    assert user_of("ubuntu", "jupyter-") is None and user_of("jupyter-", "jupyter-") is None
    assert user_of(".ipynb_checkpoints", "") is None and user_of(".cache", "") is None
    assert user_of(unicodedata.normalize("NFD", CHLOE), "") == CHLOE
    for folder in ("/abs", "../up", "a/../b", ".hidden", "x/.ipynb_checkpoints", ""):
        with pytest.raises(HomesError):
            checked_folder(folder)
    assert checked_folder("courses/looplab").as_posix() == "courses/looplab"
    homes = Homes((tmp_path,))  # where an output may go: beside the homes, never in one (made yet or not)
    assert homes.home_holding(tmp_path / "grades.csv") is None
    assert homes.home_holding(tmp_path / "graded" / "grades.csv") == tmp_path / "graded"
    assert homes.home_holding(tmp_path / "feedback", folder=True) == tmp_path / "feedback"
    assert homes.home_holding(tmp_path / ".graded" / "grades.csv") is None  # hidden: no hub user's
    assert Homes((tmp_path,), "jupyter-").home_holding(tmp_path / "graded" / "grades.csv") is None


def test_a_link_anywhere_in_a_home_is_its_own_row_never_followed(tmp_path):
    homes = tmp_path / "homes"
    course_in(tmp_path / "elsewhere", english=ANSWERS)
    (homes / "linked").parent.mkdir(parents=True)
    (homes / "linked").symlink_to(tmp_path / "elsewhere")
    course_in(homes / "ann")
    (homes / "ann" / DEFAULT_FOLDER / "notebooks" / f"{NB1}.ipynb").unlink()
    (homes / "ann" / DEFAULT_FOLDER / "notebooks" / f"{NB1}.ipynb").symlink_to(ANSWERS)
    (homes / "cid").mkdir()
    (homes / "cid" / DEFAULT_FOLDER).symlink_to(tmp_path / "elsewhere" / DEFAULT_FOLDER)
    found = collect_homes(Homes((homes,)), STEMS).submissions
    linked = {(s.learner, s.file) for s in found if s.linked}
    assert linked == {("linked", "homes/linked"), ("ann", f"homes/ann/{DEFAULT_FOLDER}/notebooks/{NB1}.ipynb"),
                      ("cid", f"homes/cid/{DEFAULT_FOLDER}")}
    # ann's English notebook is a link (its own row, never read): her French one, the only one read, is graded.
    assert [s.file for s in found if not s.linked] == [f"homes/ann/{DEFAULT_FOLDER}/notebooks/fr/{NB1}.ipynb"]


def test_twins_both_run_are_both_graded_and_neither_run_the_home_s_language(tmp_path):
    homes = tmp_path / "homes"
    course_in(homes / "both", english=ANSWERS, french=ANSWERS_FR)
    course_in(homes / "neither")
    course_in(homes / "french", english=UNTOUCHED, french=ANSWERS_FR)  # notebook 1 in French...
    put(homes / "french" / DEFAULT_FOLDER / "notebooks" / f"{STEMS[1]}.ipynb", ROOT / "notebooks" / f"{STEMS[1]}.ipynb")
    put(homes / "french" / DEFAULT_FOLDER / "notebooks" / "fr" / f"{STEMS[1]}.ipynb",
        ROOT / "notebooks" / "fr" / f"{STEMS[1]}.ipynb")  # ... so notebook 2, not started, in French too
    found = {}
    for submission in collect_homes(Homes((homes,)), STEMS).submissions:
        found.setdefault(submission.learner, []).append(submission.file.split("/notebooks/")[1])
    assert found == {"both": [f"{NB1}.ipynb", f"fr/{NB1}.ipynb"], "neither": [f"{NB1}.ipynb"],
                     "french": [f"fr/{NB1}.ipynb", f"fr/{STEMS[1]}.ipynb"]}


# --- the roster: hub users by username or e-mail ------------------------------------------------------------------


def test_a_hub_user_is_matched_by_username_or_e_mail_and_never_guessed_between_two(tmp_path):
    path = tmp_path / "class.csv"
    path.write_text(ROSTER, encoding="utf-8")
    roster = read_roster(path)
    assert roster.student("ada")["ID"] == "s01"  # the username column
    assert roster.student("ada.lovelace")["ID"] == "s01"  # her e-mail's first part still
    assert roster.student("bob")["ID"] == "s02" and roster.student("BOB@school.edu")["ID"] == "s02"  # whole address
    assert roster.student(unicodedata.normalize("NFD", CHLOE))["ID"] == "s03"
    assert roster.student("sam") is None and [s["ID"] for s in roster.ambiguous("sam")] == ["s07", "s08"]
    assert roster.student("sam@college.edu")["ID"] == "s08" and roster.ambiguous("sam@college.edu") == []
    filled = tmp_path / "unmatched.csv"
    filled.write_text("learner,files,points,student\nsam,x.ipynb,0,sam\n", encoding="utf-8")
    with pytest.raises(MatchError, match="'sam' is 2 students of the roster \\(sam@school.edu, sam@college.edu\\)"):
        read_matches(filled, roster)
    filled.write_text("learner,files,points,student\nsam,x.ipynb,0,sam@college.edu\n", encoding="utf-8")
    assert read_matches(filled, roster) == {"sam": roster.students[7]}


def test_a_username_takes_precedence_over_another_student_s_e_mail(tmp_path):
    path = tmp_path / "class.csv"
    path.write_text("name,email,username\nAlice Smith,alice@school.edu,asmith\nAl Ice,al@school.edu,alice\n",
                    encoding="utf-8")
    roster = read_roster(path)
    assert roster.student("alice")["Student"] == "Al Ice"  # the username, before another's e-mail's first part
    assert roster.student("asmith")["Student"] == "Alice Smith"


def test_a_hub_s_user_list_is_a_roster_on_its_own(tmp_path):
    path = tmp_path / "users.csv"
    path.write_text("nom d'utilisateur\nada\nbob\n", encoding="utf-8")
    roster = read_roster(path)
    assert [roster.key(student) for student in roster.students] == ["ada", "bob"]
    assert roster.student("ada") is roster.students[0]


# --- the command line ------------------------------------------------------------------------------------------


def test_the_command_line_refuses_what_cannot_be_graded_as_asked(tmp_path):
    homes = tmp_path / "homes"
    course_in(homes / "ada")
    (homes / "bob").mkdir()
    (tmp_path / "x.ipynb").write_text("{}")
    assert "the following arguments are required: submissions (or --homes)" in refused(cwd=tmp_path)
    assert "--user-prefix needs --homes" in refused("x.ipynb", "--user-prefix", "jupyter-", cwd=tmp_path)
    assert "--folder needs --homes" in refused("x.ipynb", "--folder", "course", cwd=tmp_path)
    assert "--folder .hidden/course: give the course's folder" in refused(
        "--homes", str(homes), "--folder", ".hidden/course", cwd=tmp_path)
    said = refused("--homes", str(homes), "--feedback", str(homes / "bob" / "feedback"), cwd=tmp_path)
    assert f"lies in {homes / 'bob'}, a hub user's home: the grader never writes into a learner's home" in said
    said = refused("--homes", str(homes), "--out", str(homes / "ada" / "grades.csv"), cwd=tmp_path)
    assert "a hub user's home" in said
    assert "no folder in" in refused("--homes", str(homes), "--user-prefix", "jupyter-", cwd=tmp_path)
    assert "is --user-prefix jupyter- the prefix of this hub's homes?" in refused(
        "--homes", str(homes), "--user-prefix", "jupyter-", cwd=tmp_path)
    assert "none of the 2 homes in" in refused("--homes", str(homes), "--folder", "elsewhere", cwd=tmp_path)
    assert "--one-submission is one learner's upload, --homes a class" in refused(
        "--homes", str(homes), "--one-submission", cwd=tmp_path)


def test_the_command_line_refuses_in_french_for_a_french_class(tmp_path):
    (tmp_path / "x.ipynb").write_text("{}")
    said = refused("--lang", "fr", cwd=tmp_path)
    assert "ces arguments sont obligatoires\u00a0: rendus (ou --homes)" in said
    assert "--user-prefix demande --homes" in refused("--lang", "fr", "x.ipynb", "--user-prefix", "j-", cwd=tmp_path)


GUIDES = [ROOT / "README.md", ROOT / "README.fr.md", ROOT / "docs" / "WORKSHOP.md", ROOT / "docs" / "WORKSHOP.fr.md",
          ROOT / "docs" / "GRADING.md"]


@pytest.mark.parametrize("guide", GUIDES, ids=lambda path: path.name)
def test_every_hub_command_in_the_guides_is_one_the_grader_takes(guide):
    """Each `python -m looplab.grade ... --homes ...` line the pages show parses as written (a hub's homes are not
    on this machine: what the grader does with them is graded above)."""
    text = re.sub(r"\\\n\s*", " ", guide.read_text(encoding="utf-8"))
    commands = [line.strip() for line in text.splitlines() if "-m looplab.grade" in line and "--homes" in line]
    commands = [re.search(r"(?:sudo (?:-E )?)?\.venv/bin/python -m looplab\.grade[^`]*", line)[0] for line in commands]
    assert commands, f"{guide.name} shows no command grading a hub's homes"
    for command in commands:
        argv = shlex.split(command.split("-m looplab.grade", 1)[1])
        assert parser_for(None).parse_args(argv).homes, command

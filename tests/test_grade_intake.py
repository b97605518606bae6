"""What the grader takes in and clears away, without a kernel: links and oversized files get their own row
unread, and the folders a notebook wrote are emptied whatever tree it left.

The same attacks graded for real, beside honest learners, are in tests/test_grade_isolation.py.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import nbformat
import pytest

from looplab import grade
from looplab.grade.exports.class_report import write_report
from looplab.grade.kernels.emptying import disk_use, empty_folder, remove_tree
from looplab.grade.rows.class_results import counted, duplicates
from looplab.grade.shared.limits import SUBMISSION_LIMIT
from looplab.grade.shared.status import Status
from looplab.grade.submissions.finding import identical, not_theirs
from tests.test_grade import NB1, STEMS, SUBMISSIONS


def deep_tree(root: Path, depth: int) -> None:
    """`depth` nested folders made through folder descriptors, as a notebook can (no path is ever that long)."""
    root.mkdir()
    fd = os.open(root, os.O_RDONLY)
    for level in range(depth):
        os.mkdir("d", dir_fd=fd)
        inner = os.open("d", os.O_RDONLY, dir_fd=fd)
        if level % 500 == 0:
            with open(os.open("file", os.O_WRONLY | os.O_CREAT, 0o400, dir_fd=inner), "w") as handle:
                handle.write("x")
        os.close(fd)
        fd = inner
    os.close(fd)


def test_a_tree_too_deep_for_rmtree_is_removed(tmp_path):
    root = tmp_path / "work"
    deep_tree(root, 3_000)
    with pytest.raises((RecursionError, OSError)):
        shutil.rmtree(root)  # what the grader used: RecursionError (or a path too long, on another Python)
    remove_tree(root)
    assert not root.exists()


def test_folders_made_unreadable_and_links_out_are_handled(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("the instructor's")
    work = tmp_path / "work"
    (work / "a" / "b").mkdir(parents=True)
    (work / "a" / "b" / "f").write_text("x")
    (work / "link").symlink_to(outside)
    (work / "a" / "b" / "link").symlink_to(outside / "keep.txt")
    (work / "a" / "b").chmod(0)
    (work / "a").chmod(0)
    empty_folder(work)
    assert work.is_dir() and list(work.iterdir()) == []
    assert (outside / "keep.txt").read_text() == "the instructor's"  # a link is removed, never followed


def test_a_linked_notebook_or_folder_is_its_own_row_and_never_read(tmp_path):
    submissions = tmp_path / "submissions"
    shutil.copytree(SUBMISSIONS / "partial", submissions / "alice")
    (submissions / "bob").mkdir()
    (submissions / "bob" / f"{NB1}.ipynb").symlink_to(Path("..") / "alice" / f"{NB1}.ipynb")
    (submissions / "carol").mkdir()
    (submissions / "carol" / "mine").symlink_to(submissions / "alice")
    (submissions / "dave").symlink_to(submissions / "alice")
    (submissions / f"erin-{NB1}.ipynb").symlink_to("/etc/passwd")
    found = {(s.learner, s.path.name): s for s in grade.collect([str(submissions)], STEMS)}
    linked = {key for key, s in found.items() if s.linked}
    assert linked == {("bob", f"{NB1}.ipynb"), ("carol", "mine"), ("dave", "dave"), ("erin", f"erin-{NB1}.ipynb")}
    assert not found["alice", f"{NB1}.ipynb"].linked
    course = grade.load_course()
    for key in linked:
        with pytest.raises(grade.Ungradable) as raised:
            grade.read_submission(found[key], course)
        assert raised.value.status is Status.LINKED and "symbolic link" in raised.value.message
    assert found["bob", f"{NB1}.ipynb"].file == f"submissions/bob/{NB1}.ipynb"


def test_a_file_that_became_a_link_after_it_was_listed_is_not_read(tmp_path):
    folder = tmp_path / "submissions" / "bob"
    folder.mkdir(parents=True)
    notebook = folder / f"{NB1}.ipynb"
    notebook.write_text("{}")
    [submission] = grade.collect([str(tmp_path / "submissions")], STEMS)
    notebook.unlink()
    notebook.symlink_to(SUBMISSIONS / "complete" / f"{NB1}.ipynb")
    with pytest.raises(grade.Ungradable) as raised:
        grade.read_submission(submission, grade.load_course())
    assert raised.value.status is Status.LINKED


def test_a_submission_over_the_size_limit_is_its_own_row_and_never_read(tmp_path):
    notebook = nbformat.read(SUBMISSIONS / "complete" / f"{NB1}.ipynb", as_version=4)
    notebook.cells[0]["attachments"] = {"big.png": {"image/png": "A" * SUBMISSION_LIMIT}}
    path = tmp_path / f"{NB1}.ipynb"
    nbformat.write(notebook, path)
    with pytest.raises(grade.Ungradable) as raised:
        grade.read_submission(grade.Submission(path, "zoe"), grade.load_course())
    assert raised.value.status is Status.TOO_LARGE and raised.value.notebook == NB1
    assert f"the grader reads notebooks of up to {SUBMISSION_LIMIT:,} bytes ({SUBMISSION_LIMIT >> 20} MB)" \
        in raised.value.message


def test_what_a_notebook_wrote_is_counted_in_bytes_and_in_files_and_the_count_stops_at_its_limit(tmp_path):
    deep_tree(tmp_path / "work", 50)
    (tmp_path / "work" / "big").write_bytes(bytes(1 << 20))
    (tmp_path / "work" / "link").symlink_to("/usr")  # never followed
    used, entries = disk_use([tmp_path / "work"], 1 << 30, 10_000)
    assert used >= 1 << 20 and entries == 50 + 1 + 1 + 1  # the folders, the one file in them, big, link
    assert disk_use([tmp_path / "work"], 1000, 10_000)[0] > 1000
    assert disk_use([tmp_path / "work"], 1 << 30, 10)[1] == 11  # stopped at the limit, not counted to the end


# --- a learner's folder is theirs -------------------------------------------------------------------------


def class_with_loose_files(root: Path) -> Path:
    """alice and bob hand in folders; beside them, loose files named after them (one dated 2100, so that it
    would "come last"), a link, and erin's loose file (erin has no folder: hers)."""
    submissions = root / "class"
    for learner, handed_in in (("alice", "partial"), ("Bob", "complete")):
        (submissions / learner).mkdir(parents=True)
        shutil.copy(SUBMISSIONS / handed_in / f"{NB1}.ipynb", submissions / learner / f"{NB1}.ipynb")
    stub = SUBMISSIONS / "stub" / f"{NB1}.ipynb"
    shutil.copy(stub, submissions / f"alice_{NB1}.ipynb")
    shutil.copy(stub, submissions / f"bob-{NB1} (1).ipynb")  # another case, and a browser's "later" copy
    os.utime(submissions / f"bob-{NB1} (1).ipynb", (4102444800, 4102444800))  # 2100-01-01
    (submissions / f"alice-{NB1} (2).ipynb").symlink_to("/etc/passwd")
    shutil.copy(stub, submissions / f"erin-{NB1}.ipynb")
    return submissions


@pytest.mark.parametrize("given", ["the class folder", "each file and folder"])
def test_a_loose_file_named_after_a_learner_with_a_folder_is_never_counted_for_them(tmp_path, given):
    submissions = class_with_loose_files(tmp_path)
    paths = [str(submissions)] if given == "the class folder" else [str(p) for p in sorted(submissions.iterdir())]
    found = not_theirs(grade.collect(paths, STEMS))
    loose = {s.path.name: s for s in found if s.named_after}
    assert {name: (s.learner, s.named_after) for name, s in loose.items()} == {
        f"alice_{NB1}.ipynb": (f"alice_{NB1}.ipynb", "alice"),
        f"bob-{NB1} (1).ipynb": (f"bob-{NB1} (1).ipynb", "bob"),
        f"alice-{NB1} (2).ipynb": (f"alice-{NB1} (2).ipynb", "alice")}
    assert {s.learner for s in found if not s.named_after} == {"alice", "Bob", "erin"}  # erin's loose file is hers
    course = grade.load_course()
    rows = []
    for submission in found:
        if submission.named_after:
            with pytest.raises(grade.Ungradable) as raised:
                grade.read_submission(submission, course)
            assert raised.value.status is Status.NOT_THEIRS and raised.value.notebook == ""  # counts for no notebook
            assert raised.value.message == (f"a loose file named after {submission.named_after}, who has a folder: "
                                            "not counted; move it into the folder if it is theirs")
            rows.append(grade.one_row(submission, raised.value.status, raised.value.message))
        else:
            rows.append(grade.Row(submission.learner, NB1, "1.1", 2, 2, "solved", "", submission.file))
    counts = counted(rows)
    assert counts["alice"][NB1].file.endswith(f"alice/{NB1}.ipynb")
    assert counts["Bob"][NB1].file.endswith(f"Bob/{NB1}.ipynb")
    assert duplicates(rows) == []  # no learner has a second set of rows


def test_a_copy_dated_in_the_future_wins_nothing_the_copies_rule_reads_names_only(tmp_path):
    folder = tmp_path / "class" / "alice"
    folder.mkdir(parents=True)
    for name in (f"{NB1}.ipynb", f"{NB1} (1).ipynb"):
        shutil.copy(SUBMISSIONS / "stub" / f"{NB1}.ipynb", folder / name)
    os.utime(folder / f"{NB1}.ipynb", (4102444800, 4102444800))  # 2100: "handed in last", if a date were read
    rows = [grade.Row(s.learner, NB1, "1.1", 0, 2, "not written yet", "", s.file)
            for s in grade.collect([str(tmp_path / "class")], STEMS)]
    assert counted(rows)["alice"][NB1].file == f"class/alice/{NB1} (1).ipynb"


def test_a_loose_file_in_the_learner_s_own_folder_given_is_still_theirs(tmp_path):
    folder = tmp_path / "alice"
    folder.mkdir()
    shutil.copy(SUBMISSIONS / "partial" / f"{NB1}.ipynb", folder / f"{NB1}.ipynb")
    shutil.copy(SUBMISSIONS / "stub" / f"{NB1}.ipynb", folder / f"alice-{NB1} (1).ipynb")
    found = not_theirs(grade.collect([str(folder)], STEMS))
    assert [(s.learner, bool(s.named_after)) for s in found] == [("alice", False), ("alice", False)]


# --- identical submissions ----------------------------------------------------------------------------------


def test_byte_identical_submissions_of_different_learners_are_named_once_and_graded_alike(tmp_path):
    """A hard link and a copy of alice's notebook: no grader can tell who copied whom, so every row stays as
    earned; the group is named, in the output and the class report. The untouched notebook several
    learners hand in earned nothing: not named."""
    submissions = tmp_path / "class"
    (submissions / "alice").mkdir(parents=True)
    shutil.copy(SUBMISSIONS / "complete" / f"{NB1}.ipynb", submissions / "alice" / f"{NB1}.ipynb")
    for learner in ("bob", "carol", "dave", "erin"):
        (submissions / learner).mkdir()
    os.link(submissions / "alice" / f"{NB1}.ipynb", submissions / "bob" / f"{NB1}.ipynb")  # the same inode
    shutil.copy(submissions / "alice" / f"{NB1}.ipynb", submissions / "carol" / f"{NB1}.ipynb")
    for learner in ("dave", "erin"):
        shutil.copy(SUBMISSIONS / "stub" / f"{NB1}.ipynb", submissions / learner / f"{NB1}.ipynb")
    found = grade.collect([str(submissions)], STEMS)
    course = grade.load_course()
    for submission in found:
        grade.read_submission(submission, course)
    earned = {s.file for s in found if s.learner in ("alice", "bob", "carol")}
    [group] = identical(found, earned)
    assert group.copies == [(learner, f"class/{learner}/{NB1}.ipynb") for learner in ("alice", "bob", "carol")]
    assert group.note().startswith("identical files from 3 learners (the grader cannot tell who copied whom")
    rows = [grade.Row(s.learner, NB1, "1.1", 2 if s.file in earned else 0, 2, "solved", "", s.file) for s in found]
    page = tmp_path / "report.html"
    write_report(rows, page, identical=[group])
    html = page.read_text(encoding="utf-8")
    assert html.count('id="identical"') == 1 and f"class/carol/{NB1}.ipynb" in html.split('id="identical"')[1]
    write_report(rows, page)
    assert 'id="identical"' not in page.read_text(encoding="utf-8")  # only when there are some


# --- what the kernel sends back -------------------------------------------------------------------------------
# A kernel whose messages cannot be read (the garbled_messages fixture) gets its own status, not a grader error:
# tests/test_grade.py's run of the whole set proves its rows (forgery_rows), so no run of its own here.

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
from looplab.grade.kernels.emptying import disk_use, empty_folder, remove_tree
from looplab.grade.shared.limits import SUBMISSION_LIMIT
from looplab.grade.shared.status import Status
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

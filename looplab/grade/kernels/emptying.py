"""Removing whatever tree a notebook left in the folders it could write, without recursion.

Why its own code: a notebook can make any tree in its work folder. `shutil.rmtree` walks it by
recursion (3,000 nested folders raise RecursionError), by paths (past 4,096 characters every call
fails with "File name too long") or with one open folder per level (past the open-files limit it
fails too). A slot that cannot be emptied would hand the next learner the last one's files, so
here a tree is taken apart from the top, two folders open at a time: each folder's files are
removed and its subfolders moved up to the top folder (a rename, which any depth allows), then
the folder, now empty, is removed. Folders the notebook made unreadable or unwritable (chmod
000) are given their permissions back first. Symbolic links are removed, never followed.
"""

from __future__ import annotations

import itertools
import os
import stat
from pathlib import Path

_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_names = itertools.count()


def remove_tree(path: Path | str) -> None:
    """Remove `path`: a file, a link, or a folder with everything in it, whatever its depth or permissions.

    Raises OSError only if something is left (a file system that refuses, a mount point)."""
    path = Path(path)
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(mode):
        path.unlink()
        return
    empty_folder(path)
    path.rmdir()


def empty_folder(folder: Path | str) -> None:
    """Remove everything inside `folder`, keeping the folder itself."""
    folder = Path(folder)
    _allow(folder)
    top = os.open(folder, _FOLDER)
    try:
        while True:
            inner = [entry.name for entry in os.scandir(top) if entry.is_dir(follow_symlinks=False)]
            for entry in os.scandir(top):
                if not entry.is_dir(follow_symlinks=False):
                    os.unlink(entry.name, dir_fd=top)
            if not inner:
                return
            for name in inner:
                _flatten(top, name)
    finally:
        os.close(top)


def _flatten(top: int, name: str) -> None:
    """Empty the folder `name` of `top` by one level: its files removed, its folders moved up into `top`."""
    _allow(name, top)
    try:
        fd = os.open(name, _FOLDER, dir_fd=top)
    except NotADirectoryError:  # it was swapped for a link or a file meanwhile
        os.unlink(name, dir_fd=top)
        return
    try:
        for entry in list(os.scandir(fd)):
            if entry.is_dir(follow_symlinks=False):
                os.rename(entry.name, _free_name(top), src_dir_fd=fd, dst_dir_fd=top)
            else:
                os.unlink(entry.name, dir_fd=fd)
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=top)


def _free_name(top: int) -> str:
    """A name not taken in `top`, for a folder moved up."""
    while True:
        name = f".looplab-emptying-{next(_names)}"
        try:
            os.lstat(name, dir_fd=top)
        except FileNotFoundError:
            return name


def _allow(name: Path | str, dir_fd: int | None = None) -> None:
    """Read, write and enter a folder of ours again (a notebook may have chmod-ed it 000)."""
    try:
        if stat.S_IMODE(os.lstat(name, dir_fd=dir_fd).st_mode) & stat.S_IRWXU != stat.S_IRWXU:
            os.chmod(name, stat.S_IRWXU, dir_fd=dir_fd)
    except OSError:
        pass


def remove_ipc_objects() -> None:
    """Remove every System V shared memory segment, message queue and semaphore set this process can see.

    Run by a sandbox's template (fork_server._clear_namespace) once a notebook's processes are gone: the sandbox
    has an IPC namespace of its own, so these are all that notebook's, and they would otherwise outlive it
    (and hold memory) into the next notebook of the slot."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
    except (OSError, AttributeError):
        return
    remove = {"shm": lambda id_: libc.shmctl(id_, 0, None), "msg": lambda id_: libc.msgctl(id_, 0, None),
              "sem": lambda id_: libc.semctl(id_, 0, 0)}  # IPC_RMID is 0
    for kind, call in remove.items():
        try:
            lines = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) > 1 and fields[1].isdigit():
                call(int(fields[1]))


def disk_use(folders: list[Path], bytes_limit: int, entries_limit: int) -> tuple[int, int]:
    """(bytes on disk, files and folders) under `folders`, counted without recursion or links; the count stops
    as soon as either passes its limit, so a tree of any size costs at most `entries_limit` looks."""
    used = entries = 0
    pending = [str(folder) for folder in folders]
    while pending:
        try:
            listing = list(os.scandir(pending.pop()))
        except OSError:
            continue
        for entry in listing:
            entries += 1
            try:
                used += entry.stat(follow_symlinks=False).st_blocks * 512
            except OSError:
                pass
            if used > bytes_limit or entries > entries_limit:
                return used, entries
            if entry.is_dir(follow_symlinks=False):
                pending.append(entry.path)
    return used, entries

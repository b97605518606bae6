"""`python -m authoring hub-link --hub URL --repo URL [--branch main] [--lang fr] [--folder looplab-course]`: the
link a class clicks to open the course on a JupyterHub.

nbgitpuller, installed in the hub's user environment, serves `<hub>/hub/user-redirect/git-pull?...`. The hub sends
each learner to their own server, which clones the repository into their home on the first click and, on every
later one, pulls the course's updates into it: a file the learner changed keeps the learner's changes (git's
`-Xours`), a file they deleted comes back, and the rest takes the course's new version. Then JupyterLab opens the
notebooks' folder in the learner's language.

The repository is what learners will see: every file of it lands in their homes. Point the link at one that holds
the handout (`python -m authoring handout`, committed to a repository of its own), not at this one, whose
`solutions/` hold the answers.

Why the folder is `looplab-course` and not the repository's name: a folder named `looplab` in the home would be
imported as the package by a kernel started there (a namespace package, empty), hiding the installed course.
"""

from __future__ import annotations

import argparse
from urllib.parse import urlencode

from looplab import language
from looplab.grade.submissions.homes import DEFAULT_FOLDER as FOLDER  # the grader reads the homes where this clones
from looplab.grade.submissions.homes import notebooks_folder


def hub_link(hub: str, repo: str, branch: str = "main", lang: str = language.SOURCE, folder: str = FOLDER) -> str:
    """The nbgitpuller link for a class: clone or update `repo` at `branch` into `<home>/<folder>`, then open the
    notebooks of `lang` in JupyterLab."""
    if lang not in language.LANGUAGES:
        raise ValueError(f"no notebooks in {lang!r}: the course's languages are {', '.join(language.LANGUAGES)}")
    query = urlencode({"repo": repo, "branch": branch, "targetpath": folder,
                       "urlpath": f"lab/tree/{folder}/{notebooks_folder(lang).as_posix()}"})
    return f"{hub.rstrip('/')}/hub/user-redirect/git-pull?{query}"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m authoring hub-link",
                                     description="The link that opens the course for a class on a JupyterHub.")
    parser.add_argument("--hub", required=True, help="the hub's address, e.g. https://hub.example.org")
    parser.add_argument("--repo", required=True, help="the git repository learners get (a handout's, not this one)")
    parser.add_argument("--branch", default="main", help="its branch (default: main)")
    parser.add_argument("--lang", default=language.SOURCE, choices=language.LANGUAGES,
                        help="the notebooks' language (default: en)")
    parser.add_argument("--folder", default=FOLDER, help=f"the folder in each home (default: {FOLDER})")
    args = parser.parse_args(argv)
    print(hub_link(args.hub, args.repo, args.branch, args.lang, args.folder))
    return 0

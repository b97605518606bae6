"""`python -m authoring hub-link`: the class link nbgitpuller serves on a JupyterHub (issue 39).

tests/hub/test_hub.py clicks such a link on a real hub; here, what the link says for each option, and what it
refuses, without one.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest

from authoring.hub_link import FOLDER, hub_link, main


def asked(link: str) -> tuple[str, dict]:
    url = urlparse(link)
    return f"{url.scheme}://{url.netloc}{url.path}", {key: values[0] for key, values in parse_qs(url.query).items()}


def test_the_link_clones_the_repository_into_the_course_folder_and_opens_the_notebooks():
    where, query = asked(hub_link("https://hub.example.org/", "https://github.com/you/looplab-handout"))
    assert where == "https://hub.example.org/hub/user-redirect/git-pull"
    assert query == {"repo": "https://github.com/you/looplab-handout", "branch": "main", "targetpath": FOLDER,
                     "urlpath": f"lab/tree/{FOLDER}/notebooks"}


def test_a_french_class_opens_the_french_notebooks_and_a_folder_and_branch_of_its_own():
    _, query = asked(hub_link("https://hub.example.org", "/srv/course.git", "workshop", "fr", "cours"))
    assert query["urlpath"] == "lab/tree/cours/notebooks/fr"
    assert (query["branch"], query["targetpath"], query["repo"]) == ("workshop", "cours", "/srv/course.git")


def test_the_course_folder_is_not_an_importable_name():
    """A folder named `looplab` in a home would be imported by a kernel started there, hiding the course."""
    assert not FOLDER.isidentifier()


def test_the_command_prints_the_link_and_refuses_a_language_the_course_lacks(capsys):
    assert main(["--hub", "https://hub.example.org", "--repo", "https://github.com/you/h", "--lang", "fr"]) == 0
    assert capsys.readouterr().out.strip().endswith("notebooks%2Ffr")
    with pytest.raises(SystemExit):
        main(["--hub", "https://hub.example.org", "--repo", "r", "--lang", "de"])
    with pytest.raises(ValueError, match="no notebooks in 'de'"):
        hub_link("https://hub.example.org", "r", lang="de")

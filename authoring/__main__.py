"""`python -m authoring <command> [options]`: the one entry point of the maintainer's tools (see __init__.py)."""

from __future__ import annotations

import importlib
import sys

COMMANDS = {
    "notebooks": ("authoring.regenerate", "rebuild every derived file after an edit (`make notebooks`)"),
    "record": ("authoring.author_recordings", "re-author recordings, scripted or --live (`make record`)"),
    "handout": ("authoring.handout", "what an instructor sends learners (`make handout`)"),
    "guide": ("authoring.workshop_guide", "docs/WORKSHOP.md's generated half only"),
    "docs": ("authoring.course_pages", "the pages generated from the manifest only (README, DESIGN, audit)"),
    "translations": ("authoring.notebook_translations", "a translator's skeleton|status of the notebooks' words"),
    "catalogues": ("authoring.catalogue_translations", "the catalogues' French: what is missing, new or stale"),
    "stamp": ("authoring.fingerprints", "every French text's `of`: list them; --new; or FILE KEY... once re-read"),
    "typography": ("authoring.typography", "French no-break spaces before : ; ! ? and inside « » (--check: list)"),
    "hub-link": ("authoring.hub_link", "the nbgitpuller link that opens the course for a class on a JupyterHub"),
}


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in COMMANDS:
        lines = [f"  {name:<10} {what}" for name, (_, what) in COMMANDS.items()]
        print("usage: python -m authoring <command> [options]\n" + "\n".join(lines), file=sys.stderr)
        return 2
    from looplab.quick_jsonschema import import_jsonschema

    import_jsonschema()  # before nbformat imports it: 1.5 to 2 s of CPU less for every command
    module = importlib.import_module(COMMANDS[argv[0]][0])
    from .audit import Incomplete

    try:
        return module.main(argv[1:]) or 0
    except Incomplete as error:  # a page or the audit lacks a part: one line saying which, no traceback
        print(f"authoring {argv[0]}: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""`python -m authoring.pip_for_platform MARKERS_JSON <pip arguments>`: pip, reading another laptop's markers.

pip evaluates a dependency's environment markers (`pywinpty; os_name == 'nt'`) for the computer it runs
on, even when `--platform` and `--python-version` name another one, so a wheelhouse for Windows built
on Linux would lack pywinpty and colorama. pip has no option for the target's markers; its markers come
from its bundled `packaging`, whose `Marker.evaluate` asks `default_environment()` each time. This
replaces that one function with the target's values (authoring/wheelhouse.py `marker_environment`),
then runs pip's own command line unchanged. Used by the handout's downloads and by its verification;
if a pip release moves that function, this stops with one line instead of building a wrong wheelhouse.
"""

from __future__ import annotations

import json
import runpy
import sys


def main(argv: list[str]) -> None:
    target = json.loads(argv[0])
    try:
        from pip._vendor.packaging import markers
        host = markers.default_environment
    except (ImportError, AttributeError) as error:
        sys.exit(f"pip_for_platform: this pip has no packaging.markers.default_environment to set ({error})")
    markers.default_environment = lambda: {**host(), **target}
    sys.argv = ["pip", *argv[1:]]
    runpy.run_module("pip", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])

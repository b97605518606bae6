"""looplab uses nbclient and jupyter_client through their public interfaces only.

Their private attributes change without notice between releases; the grader used to override
nbclient's `_async_handle_timeout` and set a kernel manager's provisioner by hand. This reads every
module of the package (its syntax tree, not its text) for the ways that creeps back in.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "looplab"
LIBRARIES = ("nbclient", "jupyter_client")
# Underscore names that are public protocols or documented functions, not private attributes.
ALLOWED = {("os", "_exit")}
PROTOCOLS = ("_repr_", "_render_traceback_", "_ipython_")
# Attributes a kernel manager owns: set by it, never by us.
MANAGED = {"provisioner", "kernel_id", "kernel_spec", "connection_file", "session"}


def modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path.relative_to(PACKAGE.parent), ast.parse(path.read_text(encoding="utf-8"))


def private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__") and not name.startswith(PROTOCOLS)


def library_names(tree) -> set[str]:
    """The names this module binds to nbclient or jupyter_client things."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in LIBRARIES:
            names |= {alias.asname or alias.name for alias in node.names}
        elif isinstance(node, ast.Import):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names
                      if alias.name.split(".")[0] in LIBRARIES}
    return names


def test_no_private_attribute_is_read_or_written_on_another_object():
    found = []
    for path, tree in modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and private(node.attr):
                owner = ast.unparse(node.value)
                if owner not in ("self", "cls") and (owner, node.attr) not in ALLOWED:
                    found.append(f"{path}:{node.lineno}: {owner}.{node.attr}")
    assert not found, "private attributes used:\n" + "\n".join(found)


def test_no_private_name_is_imported_from_the_libraries():
    found = [f"{path}:{node.lineno}: {alias.name}" for path, tree in modules() for node in ast.walk(tree)
             if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in LIBRARIES
             for alias in node.names if private(alias.name)]
    assert not found, found


def test_no_private_method_of_the_libraries_is_overridden():
    found = []
    for path, tree in modules():
        ours = library_names(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and any(ast.unparse(base).split(".")[0] in ours for base in node.bases):
                found += [f"{path}:{item.lineno}: {node.name}.{item.name}" for item in node.body
                          if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and private(item.name)]
    assert not found, found


def test_no_kernel_manager_attribute_is_set_by_hand():
    found = []
    for path, tree in modules():
        for node in ast.walk(tree):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
                node, (ast.AugAssign, ast.AnnAssign)) else []
            for target in targets:
                for part in ast.walk(target):
                    if isinstance(part, ast.Attribute) and part.attr in MANAGED and ast.unparse(part.value) != "self":
                        found.append(f"{path}:{node.lineno}: {ast.unparse(part)} =")
    assert not found, found


def test_the_rules_catch_what_the_grader_used_to_do():
    """The checks above would have failed on the old grader's code."""
    old = ast.parse("from nbclient import NotebookClient\n"
                    "class GraderClient(NotebookClient):\n"
                    "    async def _async_handle_timeout(self, timeout, cell=None): pass\n"
                    "km.kernel_id = 'x'\nkm.provisioner = p\nkm.provisioner.server = s\n")
    overridden = [item.name for node in ast.walk(old) if isinstance(node, ast.ClassDef) for item in node.body
                  if private(item.name)]
    assigned = [ast.unparse(part) for node in ast.walk(old) if isinstance(node, ast.Assign)
                for target in node.targets for part in ast.walk(target)
                if isinstance(part, ast.Attribute) and part.attr in MANAGED]
    assert overridden == ["_async_handle_timeout"]
    assert set(assigned) == {"km.kernel_id", "km.provisioner"}


# --- the two places outside the package that knowingly use a library's private part -------------------------
# Each is one adapter, in one place, named here: when a release of the library moves what it uses, this test
# fails naming the adapter and the private part, instead of the suite scheduling wrongly or a handout lacking wheels.
KNOWN_PRIVATE_USES = {
    # conftest.py's LoadFileSharingFolders: the browser tests' files on one worker (one JupyterLab, one Chromium).
    "conftest.py": ("xdist.scheduler", "LoadFileScheduling", "_split_scope"),
    # authoring/pip_for_platform.py: pip reading the target laptop's environment markers (handout wheelhouses).
    "authoring/pip_for_platform.py": ("pip._vendor.packaging.markers", None, "default_environment"),
}


def test_each_known_private_use_is_one_adapter_and_the_library_still_has_it():
    import importlib

    root = PACKAGE.parent
    for adapter, (module, owner, name) in KNOWN_PRIVATE_USES.items():
        assert name in (root / adapter).read_text(encoding="utf-8"), f"{adapter} no longer uses {name}: update this list"
        found = importlib.import_module(module)
        if owner:
            found = getattr(found, owner)
        assert hasattr(found, name), f"{module}{'.' + owner if owner else ''} has no {name} any more: fix {adapter}"

"""jsonschema, imported without the grammars no check of the course uses.

When the optional package rfc3987_syntax is installed (JupyterLab's jupyter-events brings it),
`import jsonschema` imports it to check the "iri" formats, and that import builds some forty lark
grammars: 1.5 to 2 s of CPU in every process that imports jsonschema, or nbformat, which imports it
(each kernel whose tool schema is checked, each grader run, each template kernel). The only schemas
the course checks are the metaschemas (api_shape.schema_error), whose formats are uri, uri-reference
and regex, never iri; so jsonschema is imported with rfc3987_syntax hidden for that moment, and
checks exactly what it checked before. A later `import rfc3987_syntax` still works.
"""

from __future__ import annotations

import sys
from types import ModuleType

HIDDEN = "rfc3987_syntax"


def import_jsonschema() -> ModuleType:
    """jsonschema, imported now without rfc3987_syntax unless something imported either already."""
    if "jsonschema" in sys.modules or HIDDEN in sys.modules:
        import jsonschema
        return jsonschema
    sys.modules[HIDDEN] = None  # `import` of a name mapped to None raises ImportError, which jsonschema expects
    try:
        import jsonschema
    finally:
        if sys.modules.get(HIDDEN, ...) is None:
            del sys.modules[HIDDEN]
    return jsonschema

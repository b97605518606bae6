"""A pytest plugin loaded before every other (pyproject.toml's addopts: `-p tests.jsonschema_first`).

nbval's plugin imports nbformat, which imports jsonschema, which imports rfc3987_syntax when it is installed
and builds its grammars: about 1.1 s of CPU in each of the test command's pytest processes (one per worker and
the one handing out the tests), spent while they all start together. Imported first, here, jsonschema comes
without them, as in the course's own processes (looplab/quick_jsonschema.py says why no test needs them)."""

from looplab.quick_jsonschema import import_jsonschema

import_jsonschema()

"""The request's shape, read from the SDK's own types.

The anthropic SDK describes the body of `client.messages.create(...)` as TypedDicts
(`MessageCreateParamsNonStreaming` and everything it references: `MessageParam`, the content
block params, the tool union, `ToolChoice*`, `cache_control`, `metadata`...). The API validates
the same body with pydantic and refuses any field it does not define ("Extra inputs are not
permitted"), a wrong JSON type, or a missing required field. This module turns the SDK's types
into a small tree once per process (`request()`), and walks a request body against it
(`problem()`), so the course can refuse offline what the API refuses live.

Why derive, and not copy the fields by hand: the SDK is the one description of the API the
course installs (and pins, in requirements.txt), so the validator and the SDK cannot drift apart.
The list of fields it knows is committed beside it (`api_fields.txt`, `field_list()` writes it):
tests/test_api_shape.py derives it again from the installed SDK and fails, naming what was added
or dropped, when a new SDK version changes it, so a maintainer reviews the change before the
course follows it. The runtime reads the derivation, not the file: requirements.txt pins the SDK
the course installs, so both say the same there, and the derivation also knows the types and the
tags the file only names; the derivation costs about 20 ms, once per process (`request()` is cached).

How the types are read:
- a TypedDict is a record: its fields, which are required (`Required[...]`, or `total=True`),
  and nothing else (an unknown key is an extra input);
- a `Union` of records that each fix `type` (or, for messages, `role`) with a `Literal` is a tagged
  union: the tag picks the record, and the API names it in its locations, as in
  `messages.1.content.0.tool_use.text` (a custom tool, whose `type` may be left out, is `custom`);
- the SDK also accepts its own response blocks (`reply.content`) in a message: their pydantic
  models join the record of the same tag, so a block sent back as the API returned it passes;
- `Iterable`/`List`/`Sequence` are lists, `Dict[str, object]` any JSON object, `Literal` a choice,
  `Optional` allows null, `str`/`int`/`float`/`bool` their JSON types; other unions try each side.

Two course choices sit on top of the SDK (docs/API_RULES.md says why): a message's role is `user`
or `assistant` (the SDK's `system` role is left out: the course teaches the top-level `system`
field), and `model` and `max_tokens`, which the SDK itself requires before sending anything, are
not required here, so that a history alone (`{"messages": [...]}`) can be checked as well.
"""

from __future__ import annotations

import collections.abc
import functools
import json
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path

import typing_extensions
from pydantic import BaseModel

# --- the tree --------------------------------------------------------------------------------


class Node:
    """One JSON value the API expects."""


@dataclass(eq=False)
class Scalar(Node):
    kind: str  # "string", "integer", "number", "boolean", "object" (any JSON object) or "any"


@dataclass(eq=False)
class Choice(Node):
    values: tuple  # the Literal's values


@dataclass(eq=False)
class ListOf(Node):
    item: Node


@dataclass(eq=False)
class Record(Node):
    name: str
    fields: dict = field(default_factory=dict)  # name -> Node, in the SDK's order
    required: tuple = ()


@dataclass(eq=False)
class Tagged(Node):
    key: str  # "type", or "role" for messages
    members: dict  # tag -> Record
    default: str | None  # the tag of a record whose key may be left out (a custom tool)
    in_loc: bool  # whether the API names the tag in its locations (blocks and tools, not messages)


@dataclass(eq=False)
class OneOf(Node):
    options: tuple
    by_kind: dict | None = None  # JSON kind -> the options that take it (see _by_kind)


@dataclass(eq=False)
class Nullable(Node):
    inner: Node


# --- reading the SDK's types -----------------------------------------------------------------

_REQUIRED = {typing.Required, typing_extensions.Required}
_NOT_REQUIRED = {typing.NotRequired, typing_extensions.NotRequired}
_LISTS = {list, tuple, collections.abc.Iterable, collections.abc.Sequence, collections.abc.Iterator}
_DICTS = {dict, collections.abc.Mapping}
_SCALARS = {str: "string", int: "integer", float: "number", bool: "boolean", object: "any"}
# The course's choice on top of the SDK: see the module docstring.
_ROLES = ("user", "assistant")


def _unwrap(tp):
    """(type without Required/NotRequired/Annotated, True/False/None for required/not/unsaid)."""
    required = None
    while True:
        origin = typing.get_origin(tp)
        if origin in _REQUIRED or origin in _NOT_REQUIRED:
            required = origin in _REQUIRED
            tp = typing.get_args(tp)[0]
        elif origin is typing.Annotated:
            tp = typing.get_args(tp)[0]
        else:
            return tp, required


def _is_typeddict(tp) -> bool:
    return isinstance(tp, type) and typing_extensions.is_typeddict(tp)


def _is_model(tp) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


class _Reader:
    """Builds the tree; one Record per class, made before its fields so that cycles close."""

    def __init__(self):
        self.records: dict[type, Record] = {}
        self.nodes: dict = {}  # one node per type, so a union met twice is the same node

    def node(self, tp) -> Node:
        tp, _ = _unwrap(tp)
        try:
            return self.nodes[tp]
        except KeyError:
            node = self.nodes[tp] = self.build(tp)
            return node
        except TypeError:  # an unhashable type: build it each time
            return self.build(tp)

    def build(self, tp) -> Node:
        origin = typing.get_origin(tp)
        if tp in _SCALARS:
            return Scalar(_SCALARS[tp])
        if origin is typing.Literal:
            # Sorted: typing treats Literal['a', 'b'] and Literal['b', 'a'] as one cached type,
            # so the SDK's order may come back either way, depending on what was imported first.
            return Choice(tuple(sorted(typing.get_args(tp), key=repr)))
        if origin in (typing.Union, types.UnionType):
            return self.union(typing.get_args(tp))
        if origin in _LISTS or tp in _LISTS:
            args = typing.get_args(tp)
            return ListOf(self.node(args[0]) if args else Scalar("any"))
        if origin in _DICTS or tp in _DICTS:
            return Scalar("object")
        if _is_typeddict(tp) or _is_model(tp):
            return self.record(tp)
        if isinstance(tp, type) and issubclass(tp, str):  # SequenceNotStr's str, enums of str
            return Scalar("string")
        if getattr(origin, "__name__", "") == "SequenceNotStr":  # the SDK's list of strings
            return ListOf(self.node(typing.get_args(tp)[0]))
        return Scalar("any")  # file inputs and the like: the SDK turns them into JSON itself

    def record(self, cls) -> Record:
        if cls in self.records:
            return self.records[cls]
        record = self.records[cls] = Record(cls.__name__)
        if _is_model(cls):
            for name, info in cls.model_fields.items():
                record.fields[info.alias or name] = self.node(info.annotation)
            return record  # a response model: nothing is required when it comes back as a param
        hints = typing.get_type_hints(cls, include_extras=True)
        total = getattr(cls, "__total__", True)
        required = []
        for name, tp in hints.items():
            _, said = _unwrap(tp)
            if said or (said is None and total):
                required.append(name)
            record.fields[name] = self.node(tp)
        record.required = tuple(required)
        return record

    def union(self, args) -> Node:
        nullable = type(None) in args
        options = [arg for arg in _flatten(args) if arg is not type(None)]
        if str in options and all(o is str or typing.get_origin(o) is typing.Literal for o in options):
            options = [str]  # a model id: any string, the Literal only lists the known ones
        node = self.tagged(options) or (self.node(options[0]) if len(options) == 1 else None)
        if node is None:
            node = _simplest(OneOf(tuple(self.node(option) for option in options)))
        return Nullable(node) if nullable else node

    def tagged(self, options) -> Tagged | None:
        """A union of records that each fix `type` (or `role`) to one Literal value."""
        classes = [_unwrap(option)[0] for option in options]
        if len(classes) < 2 or not all(_is_typeddict(c) or _is_model(c) for c in classes):
            return None
        for key in ("type", "role"):
            tags = [_tag(cls, key) for cls in classes]
            if all(tag is not None for tag in tags):
                break
        else:
            return None
        members: dict[str, Record] = {}
        default = None
        for cls, (names, optional) in zip(classes, tags):
            for tag in names:  # a tool may answer to two names (tool_search_tool_bm25 and its dated one)
                if key == "role" and tag not in _ROLES:
                    continue
                record = self.record(cls)
                members[tag] = _merge(members[tag], record) if tag in members else record
                if optional:
                    default = tag
        return Tagged(key, members, default, in_loc=key == "type")


def _simplest(node: OneOf) -> Node:
    """A union that accepts anything is `any`; one that accepts any JSON object drops its
    records (a tool's `input_schema` is a typed dict OR any dict: any dict will do)."""
    kinds = [(type(option), getattr(option, "kind", None)) for option in node.options]
    if (Scalar, "any") in kinds:
        return Scalar("any")
    if (Scalar, "object") in kinds:
        kept = tuple(o for o in node.options if type(o) not in (Record, Tagged))
        return kept[0] if len(kept) == 1 else OneOf(kept)
    return node


def _flatten(args) -> list:
    """A union's members, with the unions inside it (the SDK's `ContentBlock`) spread out."""
    flat = []
    for arg in args:
        arg, _ = _unwrap(arg)
        if typing.get_origin(arg) in (typing.Union, types.UnionType):
            flat.extend(_flatten(typing.get_args(arg)))
        else:
            flat.append(arg)
    return flat


def _tag(cls, key: str):
    """(the Literal values cls allows for key, whether key may be left out), or None."""
    if _is_model(cls):
        hints = {name: info.annotation for name, info in cls.model_fields.items()}
    else:
        hints = typing.get_type_hints(cls, include_extras=True)
    if key not in hints:
        return None
    tp, required = _unwrap(hints[key])
    optional = False
    if typing.get_origin(tp) is typing.Union:
        args = [arg for arg in typing.get_args(tp) if arg is not type(None)]
        optional = len(args) < len(typing.get_args(tp))
        tp = args[0] if len(args) == 1 else tp
    if typing.get_origin(tp) is not typing.Literal:
        return None
    if _is_typeddict(cls) and required is False:
        optional = True
    return typing.get_args(tp), optional and _is_typeddict(cls)


def _merge(param: Record, other: Record) -> Record:
    """A param TypedDict and the SDK's response model of the same tag: the fields of both, the
    param's required ones (a block sent back as `reply.content` may carry response-only fields)."""
    if other.required and not param.required:
        param, other = other, param
    merged = Record(param.name, dict(param.fields), param.required)
    for name, node in other.fields.items():
        merged.fields.setdefault(name, node)
    return merged


@functools.cache
def request() -> Record:
    """The request body's tree, read from the installed SDK once per process."""
    from anthropic.types import message_create_params as params

    reader = _Reader()
    base = reader.record(params.MessageCreateParamsBase)
    top = Record(base.name, dict(base.fields), base.required)
    # `stream` is False in one variant, True in the other: the course answers both (a stream as
    # not recorded, transport.py), so the request may say either.
    variants = [reader.record(params.MessageCreateParamsNonStreaming), reader.record(params.MessageCreateParamsStreaming)]
    top.fields["stream"] = Choice(tuple(value for variant in variants for value in variant.fields["stream"].values))
    # The SDK requires these before it sends anything (a TypeError); see the module docstring.
    top.required = tuple(name for name in top.required if name not in ("model", "max_tokens"))
    return top


@functools.cache
def top_level() -> Record:
    """The request without `messages` and `tools`, which rules.py checks first, one by one."""
    top = request()
    fields = {name: (Scalar("any") if name in ("messages", "tools") else node) for name, node in top.fields.items()}
    return Record(top.name, fields, tuple(name for name in top.required if name not in ("messages", "tools")))


def tool() -> Node:
    """One item of `tools`: a custom tool or one of the API's own (bash, web_search, ...)."""
    return request().fields["tools"].item


def messages() -> Node:
    return request().fields["messages"]


@functools.lru_cache(maxsize=512)
def _schema_verdict(text: str) -> str | None:
    from .quick_jsonschema import import_jsonschema

    import_jsonschema()
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(json.loads(text))
    except SchemaError as error:
        return f"{error.message} (at {error.json_path})"
    return None


def schema_error(schema) -> str | None:
    """Why a tool's `input_schema` is not valid JSON Schema (draft 2020-12), as the API checks
    it, or None. The verdict is cached by schema: a loop sends the same tools on every call."""
    try:
        text = json.dumps(schema, sort_keys=True)
    except (TypeError, ValueError):  # not JSON at all: the shape check reports it first
        return "it is not JSON"
    return _schema_verdict(text)


def warm() -> None:
    """Pay now, once, what the first request would pay: the tree from the SDK's types, and jsonschema's
    import and metaschema (a few hundred ms, seconds on a loaded machine). A check's time limit, and
    the grader's kernel template, call it before the learner's code runs, so no answer is ever timed
    for the course's own first use."""
    request()
    schema_error({"type": "object", "properties": {"expression": {"type": "string"}}, "required": ["expression"]})


# --- walking a body --------------------------------------------------------------------------


@dataclass(frozen=True)
class Problem:
    """The first thing the API would refuse: what kind of error, where, and what to say."""

    kind: str  # a key of rules.FIELD_ERRORS / rules.API_MESSAGES
    loc: str  # where the API says it is, e.g. "messages.1.content.0.tool_use.text"
    path: str  # the message, block, tool or top-level field that holds it, e.g. "messages.1.content.0"
    values: dict = field(default_factory=dict)  # more to fill in the texts (expected, tags, field)


class _Found(Exception):
    """Raised where the walk finds a fault; each container it passes through on the way out adds
    its step to the location. Paths are only built for the one request that fails, which keeps a
    valid request (almost every one) cheap to check."""

    def __init__(self, kind: str, loc: tuple = (), body: tuple = (), **values):
        self.kind, self.values = kind, values
        self.loc, self.body = list(reversed(loc)), list(reversed(body))  # innermost first

    def at(self, loc_step, body_step=None) -> None:
        self.loc.append(loc_step)
        if body_step is not None:
            self.body.append(body_step)


def problem(value, node: Node, loc: tuple = (), body: tuple = ()) -> Problem | None:
    """The first thing in `value` the API would refuse, or None. `loc` is the API's location of
    `value` (with the tags of blocks and tools in it), `body` its path in the body itself."""
    try:
        _check(value, node)
    except _Found as found:
        full_loc = loc + tuple(reversed(found.loc))
        full_body = body + tuple(reversed(found.body))
        return Problem(found.kind, _dotted(full_loc), _holder(full_body) or _dotted(full_loc[:1]), found.values)
    return None


def _dotted(parts: tuple) -> str:
    return ".".join(str(part) for part in parts)


def _holder(body: tuple) -> str:
    """The innermost list item (a message, a block, a tool) that holds the fault, or the
    top-level field when no list item does: what a learner looks at to fix it."""
    for end in range(len(body), 0, -1):
        if isinstance(body[end - 1], int):
            return _dotted(body[:end])
    return _dotted(body[:1])


def _check(value, node: Node) -> None:
    kind = type(node)
    if kind is Record:
        _check_record(value, node)
    elif kind is Tagged:
        _check_tagged(value, node)
    elif kind is Scalar:
        if node.kind != "any" and _json_kind(value) not in _ACCEPTS[node.kind]:
            raise _Found(_SCALAR_ERRORS[node.kind])
    elif kind is ListOf:
        _check_list(value, node)
    elif kind is OneOf:
        _check_one_of(value, node)
    elif kind is Nullable:
        if value is not None:
            _check(value, node.inner)
    elif not any(value == option and type(value) is type(option) for option in node.values):  # a Choice
        raise _Found("choice", expected=_either([repr(v) for v in node.values]))


_ACCEPTS = {
    "string": {"string"},
    "integer": {"integer"},
    "number": {"integer", "number"},
    "boolean": {"boolean"},
    "object": {"object"},
}
_SCALAR_ERRORS = {"string": "string", "integer": "integer", "number": "number", "boolean": "boolean", "object": "dict"}
_KIND_OF = {str: "string", int: "integer", float: "number", bool: "boolean", dict: "object", list: "list", type(None): "null"}


def _json_kind(value) -> str:
    kind = _KIND_OF.get(type(value))
    if kind is not None:
        return kind
    for cls in (bool, int, float, str, dict, list):  # subclasses, in the order that tells bool from int
        if isinstance(value, cls):
            return _KIND_OF[cls]
    return "other"


def _check_list(value, node: ListOf) -> None:
    if not isinstance(value, list):
        raise _Found("list")
    item_node = node.item
    for index, item in enumerate(value):
        try:
            _check(item, item_node)
        except _Found as found:
            found.at(index, index)
            raise


def _check_record(value, node: Record) -> None:
    """Declared fields first, in the SDK's order (missing, then wrong), then extra inputs,
    in the body's order: pydantic's order, so a whole `Message` reports its `id` first."""
    if not isinstance(value, dict):
        raise _Found("dict")
    fields = node.fields
    for name in node.required:
        if name not in value:
            raise _Found("required", (name,), field=name)
    extra = None
    for name, item in value.items():
        field_node = fields.get(name)
        if field_node is None:
            extra = extra or name
            continue
        if _plainly_fine(item, field_node):  # most fields: no call, no try
            continue
        try:
            _check(item, field_node)
        except _Found as found:
            found.at(name, name)
            raise
    if extra is not None:
        raise _Found("extra", (extra,), field=extra)


def _plainly_fine(value, node: Node) -> bool:
    """A quick yes for a string, number or tag where one is wanted; anything else is walked."""
    kind = type(node)
    if kind is Scalar:
        return node.kind == "any" or _KIND_OF.get(type(value)) in _ACCEPTS[node.kind]
    return kind is Choice and type(value) is str and value in node.values


def _check_tagged(value, node: Tagged) -> None:
    if not isinstance(value, dict):
        raise _Found("dict")
    key = node.key
    tag = value.get(key)
    if tag is None and node.default is not None:  # a custom tool may leave its type out
        tag = node.default
    elif key not in value:
        raise _Found("required", (key,), field=key)
    member = node.members.get(tag) if isinstance(tag, str) else None
    if member is None:
        if node.in_loc and not isinstance(tag, str):
            raise _Found("string", (key,))
        tags = [repr(t) for t in node.members]
        if node.in_loc:
            raise _Found("tag", tag=repr(tag), key=key, expected=", ".join(tags))
        raise _Found("role", (key,), expected=_either(tags))
    if not node.in_loc:
        _check_record(value, member)
        return
    try:
        _check_record(value, member)
    except _Found as found:
        found.at(tag)
        raise


def _check_one_of(value, node: OneOf) -> None:
    """Any option will do. Only the options of the value's JSON kind are tried; when none does,
    the first one's fault is reported (a list of blocks reports its bad block); when no option
    takes that kind at all, the error says which kinds would do."""
    candidates = _by_kind(node).get(_json_kind(value), ())
    if len(candidates) == 1:
        _check(value, candidates[0])
        return
    first = None
    for option in candidates:
        try:
            _check(value, option)
            return
        except _Found as found:
            first = first or found
    if first is not None:
        raise first
    kinds = sorted({kind for option in node.options for kind in _kinds(option)})
    if kinds == ["list", "string"]:
        raise _Found("content")
    raise _Found("types", expected=_either([_KIND_NAMES[kind] for kind in kinds]))


def _by_kind(node: OneOf) -> dict:
    """The options of a union for each JSON kind, worked out once per union."""
    if node.by_kind is None:
        node.by_kind = {kind: tuple(o for o in node.options if kind in _kinds(o)) for kind in _KIND_NAMES}
    return node.by_kind


_KIND_NAMES = {
    "string": "a valid string", "integer": "a valid integer", "number": "a valid number",
    "boolean": "a valid boolean", "object": "a valid dictionary", "list": "a valid list", "null": "null",
}


def _kinds(node: Node) -> set:
    """The JSON kinds a node can accept at all."""
    kind = type(node)
    if kind is Nullable:
        return _kinds(node.inner) | {"null"}
    if kind is Scalar:
        return set(_KIND_NAMES) if node.kind == "any" else _ACCEPTS[node.kind]
    if kind is Choice:
        return {_json_kind(value) for value in node.values}
    if kind is ListOf:
        return {"list"}
    if kind in (Record, Tagged):
        return {"object"}
    return set().union(*(_kinds(option) for option in node.options))


def _either(names: list) -> str:
    """'a', 'a or b', 'a, b or c': pydantic's way of listing what would do."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


# --- the list of fields, for review ----------------------------------------------------------


def field_list() -> list[str]:
    """Every field the validator knows, one dotted path per line, as `api_fields.txt` holds it.

    `*` is any list item; a tag (`tool_use`, `custom`) is the record a `type` picks, as the API
    names it in its locations; `(required)` marks required fields. A record (a type of the
    SDK) is spelled out where it is first met; later, `<path>.* -> as <first path>` stands for
    its fields, which keeps the list short and closes cycles."""
    lines: list[str] = []
    _list_fields(request(), "", lines, {})
    return lines


def _list_fields(node: Node, path: str, lines: list, listed: dict) -> None:
    kind = type(node)
    if kind is Nullable:
        _list_fields(node.inner, path, lines, listed)
    elif kind is ListOf:
        _list_fields(node.item, f"{path}.*", lines, listed)
    elif kind is OneOf:
        for option in node.options:
            _list_fields(option, path, lines, listed)
    elif kind is Tagged:
        for tag, member in node.members.items():
            inner = f"{path}.{tag}" if node.in_loc else f"{path}.<{node.key}={tag}>"
            _list_fields(member, inner, lines, listed)
    elif kind is Record:
        if id(node) in listed:
            lines.append(f"{path}.* -> as {listed[id(node)]}")
            return
        listed[id(node)] = path or "(top)"
        for name, item in node.fields.items():
            here = f"{path}.{name}" if path else name
            lines.append(f"{here}: {_describe(item)}{' (required)' if name in node.required else ''}")
            _list_fields(item, here, lines, listed)


def _describe(node: Node) -> str:
    kind = type(node)
    if kind is Nullable:
        return _describe(node.inner) + " | null"
    if kind is Scalar:
        return node.kind
    if kind is Choice:
        return " | ".join(repr(value) for value in node.values)
    if kind is ListOf:
        item = node.item
        return "list" if type(item) in (Record, Tagged) else f"list of {_describe(item)}"
    if kind is Record:
        return "object"
    if kind is Tagged:
        return f"object by {node.key}"
    return " | ".join(_describe(option) for option in node.options)


FIELDS_FILE = Path(__file__).with_name("api_fields.txt")
FIELDS_HEADER = """\
# The fields of a Messages API request that the course's offline validator knows (looplab/api_shape.py),
# read from the installed SDK's request types. Reviewed by a maintainer; tests/test_api_shape.py fails
# when a new SDK version adds or drops a line. After reviewing the change (does the course teach or
# send anything it touches?), write it again with:
#     .venv/bin/python -c 'from looplab.api_shape import write_fields; write_fields()'
# `*` is any list item; `<role=user>` a message of that role; a tag (`tool_use`, `custom`) is the block or
# tool that `type` picks, as the API names it in its errors; `-> as <path>` stands for the same fields again.
# Course choices on top of the SDK: messages have role user or assistant only; model and max_tokens are
# required by the SDK before sending, not here (so a history alone can be checked).
"""


def committed_fields() -> list[str]:
    """The reviewed list, as committed (comments left out)."""
    lines = FIELDS_FILE.read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line and not line.startswith("#")]


def write_fields() -> None:
    """Write the list again, after review."""
    FIELDS_FILE.write_text(FIELDS_HEADER + "\n".join(field_list()) + "\n", encoding="utf-8")
    print(f"wrote {FIELDS_FILE} ({len(field_list())} fields)")

"""The one YAML front matter loader (wiki pages, ingested markdown, SKILL.md).

Front matter comes from files anyone can hand you, so the loader is strict about what it
expands and lenient about what it keeps:

- **No aliases.** ``*name`` is refused (an alias bomb of 397 bytes expands to 9**9 strings; a
  self-referencing ``r: &a [*a]`` never ends); write the values out instead.
- **Bounded.** At most :data:`MAX_FRONT_MATTER_CHARS` characters (256 KiB, over 100 times the
  largest front matter of the public skill collections) and :data:`MAX_FRONT_MATTER_DEPTH`
  levels of nesting; the size is checked before parsing.
- **Dates stay text.** ``2024-01-01`` and ``2024-01-01 10:00:00`` are kept as written (a date
  that does not exist, ``2024-02-30``, is text too), so metadata stays JSON.
- **JSON data only.** Mappings with string keys (other scalar keys are written as JSON writes
  them: ``1`` -> ``"1"``, ``true`` -> ``"true"``, ``null`` -> ``"null"``), lists, strings,
  finite numbers, booleans, null (a ``!!set`` becomes the sorted list of its members). A value
  YAML cannot turn into one of these (``!!int abc``, ``.inf``, ``!!binary``, an integer of 5,000
  digits) is kept as its text.
- **One error.** Anything wrong is a :class:`FrontMatterError` with a short reason and the
  line (within the front matter) where known; callers turn it into a warning for that one
  file, and the file is read without its front matter.

libyaml's C parser is used when PyYAML was built with it (about ten times faster).
"""

from __future__ import annotations

import math
from typing import Any

import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, Node, SequenceNode

from .errors import InvalidInput

__all__ = ["FrontMatterError", "load_front_matter", "MAX_FRONT_MATTER_CHARS", "MAX_FRONT_MATTER_DEPTH"]

MAX_FRONT_MATTER_CHARS = 256 * 1024
MAX_FRONT_MATTER_DEPTH = 50

_TIMESTAMP = "tag:yaml.org,2002:timestamp"


class FrontMatterError(InvalidInput):
    """A front matter graphmem does not read: ``reason`` says why, ``line`` (1-based, within the
    front matter text) where, when known."""

    def __init__(self, reason: str, line: int | None = None) -> None:
        self.reason = reason
        self.line = line
        where = f" (line {line})" if line is not None else ""
        super().__init__(f"front matter {reason}{where}")


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """The safe loader, minus implicit timestamps; fragile scalar constructors keep the text."""

    def construct_mapping(self, node: Node, deep: bool = False) -> dict[str, Any]:
        """Keys become strings as they are read: ``1`` and ``true`` are one key to Python (1 ==
        True) but two in the file, and a list as a key has no JSON form."""
        if not isinstance(node, MappingNode):
            raise ConstructorError(None, None, f"expected a mapping, found {node.id}", node.start_mark)
        self.flatten_mapping(node)
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key is not None and not isinstance(key, (str, int, float, bool)):
                raise ConstructorError("while reading a mapping", node.start_mark,
                                       "found a key that is not text or a number", key_node.start_mark)
            out[_json_key(key)] = self.construct_object(value_node, deep=deep)
        return out


# Plain scalars that look like dates are resolved as strings (the resolver table is per class).
_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != _TIMESTAMP]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _keep_text_on_error(construct: Any) -> Any:
    def constructor(loader: _Loader, node: Node) -> Any:
        try:
            value = construct(loader, node)
        except (ValueError, KeyError, TypeError):  # e.g. !!int abc, !!bool maybe, 5,000-digit ints
            return loader.construct_scalar(node)
        if isinstance(value, float) and not math.isfinite(value):
            return loader.construct_scalar(node)  # .inf / .nan are not JSON
        return value
    return constructor


for _tag, _construct in (("int", yaml.SafeLoader.construct_yaml_int),
                         ("float", yaml.SafeLoader.construct_yaml_float),
                         ("bool", yaml.SafeLoader.construct_yaml_bool)):
    _Loader.add_constructor(f"tag:yaml.org,2002:{_tag}", _keep_text_on_error(_construct))
# Explicit !!timestamp and !!binary: the text as written (no datetime, no bytes).
_Loader.add_constructor(_TIMESTAMP, yaml.SafeLoader.construct_yaml_str)
_Loader.add_constructor("tag:yaml.org,2002:binary", yaml.SafeLoader.construct_yaml_str)


def load_front_matter(text: str) -> dict[str, Any]:
    """The mapping a front matter's YAML ``text`` holds, as JSON-ready data (``{}`` for an empty
    one). Raises :class:`FrontMatterError` for anything else (see the module docstring)."""
    if len(text) > MAX_FRONT_MATTER_CHARS:
        raise FrontMatterError(f"is {len(text) / 1024:.0f} KB, over the {MAX_FRONT_MATTER_CHARS // 1024} KB limit")
    if not text.strip():
        return {}
    loader: _Loader | None = None
    try:
        loader = _Loader(text)
        node = loader.get_single_node()
        if node is None:
            return {}
        if not isinstance(node, MappingNode):
            raise FrontMatterError("is not a YAML mapping (write key: value lines)", node.start_mark.line + 1)
        _check_tree(node)
        data = loader.construct_document(node)
    except FrontMatterError:  # an InvalidInput, hence a ValueError: not to be wrapped below
        raise
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise FrontMatterError(f"is not valid YAML ({first})", mark.line + 1 if mark is not None else None) from None
    except (ValueError, TypeError, KeyError, RecursionError) as exc:  # UnicodeEncodeError (lone surrogates) too
        raise FrontMatterError(f"is not valid YAML ({type(exc).__name__}: {exc})") from None
    finally:
        if loader is not None:
            loader.dispose()
    return _json_ready(data)


def _check_tree(root: Node) -> None:
    """Refuse aliases (a node reached twice) and deep nesting, before anything is constructed.
    Iterative: a hostile depth must not exhaust the Python stack."""
    seen: set[int] = set()
    stack: list[tuple[Node, int]] = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if id(node) in seen:
            raise FrontMatterError("uses a YAML alias (*name), which graphmem does not expand; write the value "
                                   "out instead (the anchor is on this line)", node.start_mark.line + 1)
        seen.add(id(node))
        if depth > MAX_FRONT_MATTER_DEPTH:
            raise FrontMatterError(f"is nested more than {MAX_FRONT_MATTER_DEPTH} levels deep",
                                   node.start_mark.line + 1)
        if isinstance(node, SequenceNode):
            stack.extend((child, depth + 1) for child in node.value)
        elif isinstance(node, MappingNode):
            for key, value in node.value:
                stack.append((key, depth + 1))
                stack.append((value, depth + 1))


def _json_key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if key is None or isinstance(key, bool):
        return {None: "null", True: "true", False: "false"}[key]
    return str(key)


def _json_ready(value: Any) -> Any:
    """Constructed YAML as JSON data (depth is bounded by :func:`_check_tree`)."""
    if isinstance(value, dict):  # keys are strings already (see _Loader.construct_mapping)
        return {k: _json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_ready(v) for v in value]
    if isinstance(value, (set, frozenset)):  # !!set: its members, in a stable order
        return [_json_ready(v) for v in sorted(value, key=str)]
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    return str(value)

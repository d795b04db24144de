"""One check for everything that crosses the public API: text must be real Unicode.

``json.loads`` happily produces lone surrogates (``"\\ud800"``) that no file, socket or SQLite
column can hold: they used to fail deep inside a write with a UnicodeEncodeError. Mappings
passed in (metadata, filters, extractions, search configs) are JSON-shaped, so their keys must
be strings. :func:`checked_inputs` applies both rules to every argument of every public
method of a class, naming the method and the argument (``memory.add: metadata['k'][0]``)
before the method runs, so a rejected call has written nothing. Arguments named ``limit``,
``offset`` or ``after_id`` must also be whole numbers from 0 to 2**63 - 1 (what a store can page by).
"""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from .errors import InvalidInput

__all__ = ["check_input", "check_count", "check_query", "checked_inputs", "path_list", "MAX_NESTING", "MAX_COUNT"]

MAX_NESTING = 200  # deeper argument structures are refused (and this bounds the walk)
# Arguments that are file system paths: a path read from disk may carry surrogate escapes.
PATH_PARAMETERS = frozenset({"path", "paths", "dirs", "home"})
# Arguments that are row counts or positions in a list or in the change log: a store can only page by a
# 64-bit integer (a larger one used to fail in SQLite with OverflowError), and a negative one has no meaning.
COUNT_PARAMETERS = frozenset({"limit", "offset", "after_id"})
MAX_COUNT = 2**63 - 1

T = TypeVar("T", bound=type)


def _bad_text(text: str) -> int | None:
    """Index of the first character UTF-8 cannot encode (a lone surrogate), else None."""
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start
    return None


def _short(label: str) -> str:
    """A path into deeply nested data, cut in the middle so that the message stays one line."""
    return label if len(label) <= 80 else f"{label[:50]}…{label[-25:]}"


def check_input(where: str, name: str, value: Any) -> None:
    """Raise InvalidInput naming ``where`` and the part of ``name`` that holds invalid text or
    a non-string mapping key. Walks str, mappings, lists, tuples and sets; other objects are
    left to the callee."""
    stack: list[tuple[Any, str, int]] = [(value, name, 0)]
    while stack:
        item, label, depth = stack.pop()
        if isinstance(item, str):
            bad = _bad_text(item)
            if bad is not None:
                raise InvalidInput(
                    f"{where}: {label} holds a lone surrogate (U+{ord(item[bad]):04X}) at character {bad}; "
                    "pass valid Unicode text (half of a \\ud83d\\ude00-style pair is not a character)"
                )
            continue
        if depth >= MAX_NESTING and isinstance(item, (Mapping, list, tuple, set, frozenset)):
            raise InvalidInput(f"{where}: {_short(label)} is nested more than {MAX_NESTING} levels deep; "
                               "pass flatter data")
        if isinstance(item, Mapping):
            for key, sub in item.items():
                if not isinstance(key, str):
                    raise InvalidInput(f"{where}: {label} has the key {key!r} ({type(key).__name__}); "
                                       "keys must be strings")
                stack.append((key, f"{label} key {key[:40]!r}", depth + 1))
                stack.append((sub, f"{label}[{key[:40]!r}]", depth + 1))
        elif isinstance(item, (list, tuple)):
            stack.extend((sub, f"{label}[{i}]", depth + 1) for i, sub in enumerate(item))
        elif isinstance(item, (set, frozenset)):
            stack.extend((sub, f"{label} item", depth + 1) for sub in item)


def check_count(where: str, name: str, value: Any) -> None:
    """InvalidInput unless ``value`` is None or an integer from 0 to :data:`MAX_COUNT`."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(f"{where}: {name} must be a whole number, got {value!r} ({type(value).__name__})")
    if not 0 <= value <= MAX_COUNT:
        raise InvalidInput(f"{where}: {name} must be between 0 and {MAX_COUNT}, got {value}")


def check_query(query: Any, name: str = "query") -> str:
    """A query: a string with words in it. Blank was an error in memory and skills search but an empty
    answer in search, query, documents.search and wiki search; one rule for every face now."""
    if not isinstance(query, str):
        raise InvalidInput(f"{name}: expected a string, got {type(query).__name__}")
    if not query.strip():
        raise InvalidInput(f"{name}: expected a non-empty string; give the words to look for")
    return query


def path_list(where: str, name: str, value: Any) -> list[str | os.PathLike[str]]:
    """``value`` as a list of paths: one path (a string or ``Path``) is a list of one.

    A plain string is itself a sequence, of one-letter strings: ``ingest_paths("docs")`` used to walk
    the folders ``d``, ``o``, ``c`` and ``s`` (and ``"/data"`` the whole file system, from ``/``)."""
    one = isinstance(value, (str, os.PathLike))
    if not one and (isinstance(value, (bytes, bytearray)) or not isinstance(value, (list, tuple))):
        raise InvalidInput(f"{where}: {name} must be a path or a list of paths (str or pathlib.Path), "
                           f"got {type(value).__name__}")
    items = [value] if one else list(value)
    for i, item in enumerate(items):
        label = name if one else f"{name}[{i}]"
        if not isinstance(item, (str, os.PathLike)) or isinstance(item, (bytes, bytearray)):
            raise InvalidInput(f"{where}: {label} must be a path (str or pathlib.Path), got {item!r} "
                               f"({type(item).__name__})")
        text = os.fspath(item)
        if not isinstance(text, str):
            raise InvalidInput(f"{where}: {label} must be a text path, got bytes {text!r}")
        if not text.strip():  # Path("") is the current folder: never what an empty argument meant
            raise InvalidInput(f"{where}: {label} is an empty path; give a file or folder")
    return items


def _wrap(fn: Callable[..., Any], where: str) -> Callable[..., Any]:
    signature = inspect.signature(fn)

    closes = fn.__name__ == "close"

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        # A knowledge base used after close() (the faces hold it as ``_kb``): say so, not sqlite3's
        # "Cannot operate on a closed database" from deep inside the call.
        kb = getattr(args[0], "_kb", args[0]) if args else None
        if getattr(kb, "closed", False) is True and not closes:
            raise InvalidInput(f"{where}: the knowledge base {getattr(kb, 'home', '')} is closed; open it again "
                               "with graphmem.open(...)")
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError:
            return fn(*args, **kwargs)  # let Python report the wrong call as usual
        for name, value in bound.arguments.items():
            if name in ("self", "cls") or name in PATH_PARAMETERS:
                continue
            check_input(where, name, value)
            if name in COUNT_PARAMETERS:
                check_count(where, name, value)
        return fn(*args, **kwargs)

    wrapper._checks_inputs = True  # type: ignore[attr-defined]
    return wrapper


def checked_inputs(label: str) -> Callable[[T], T]:
    """Class decorator: every public method checks its arguments with :func:`check_input`
    (errors say ``<label>.<method>: <argument>...``)."""

    def decorate(cls: T) -> T:
        # The class's own methods and those it inherits from mixins (ContextGraphMaintenance's
        # backfill_context_graph used to reach SQLite unchecked): the nearest definition of each name.
        members: dict[str, Any] = {}
        for klass in reversed(cls.__mro__[:-1]):  # object last out
            members.update(vars(klass))
        for attr, value in members.items():
            if attr.startswith("_"):
                continue
            fn = value.__func__ if isinstance(value, staticmethod) else value
            if not inspect.isfunction(fn) or getattr(fn, "_checks_inputs", False):
                continue  # not a method, or checked already (a decorated base class)
            wrapped = _wrap(fn, f"{label}.{attr}")
            setattr(cls, attr, staticmethod(wrapped) if isinstance(value, staticmethod) else wrapped)
        return cls

    return decorate

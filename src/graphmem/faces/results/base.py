"""The base of the face results: typed fields, ``to_dict()``, and the dict they used to be."""

from __future__ import annotations

import dataclasses
from typing import Any, NoReturn

from ...models import Provenance

__all__ = ["Result", "evidence_dicts"]


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(cls: type) -> tuple[str, ...]:
    """A result class's field names, in declaration order (``dataclasses.fields`` rebuilt this tuple on
    every call: a memory search builds ~40 results)."""
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


class Result(dict[str, Any]):
    """Base of the face results (subclasses are frozen dataclasses declared with ``eq=False``).

    Faces returned plain dicts before, and callers index them, compare them with dicts, pass them
    to ``json.dumps`` and check ``isinstance(x, dict)``. So a result *is* that dict, read-only: it
    holds ``to_dict()`` from construction on (nested values as plain data), while its typed
    fields are what new code reads. Equality is the dict's; mutating it raises TypeError (take
    ``to_dict()`` for a copy to change).
    """

    def __post_init__(self) -> None:
        dict.update(self, self.to_dict())

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data, keys in the documented order (a new dict each call). By default
        the fields in declaration order; a result whose JSON differs from its fields overrides it."""
        return {name: getattr(self, name) for name in _field_names(type(self))}

    def _read_only(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError(f"{type(self).__name__} is read-only; change a copy: result.to_dict()")

    __setitem__ = __delitem__ = update = pop = popitem = clear = setdefault = __ior__ = _read_only


def evidence_dicts(records: list[Provenance]) -> list[dict[str, Any]]:
    """Provenance records as plain data."""
    return [p.to_dict() for p in records]

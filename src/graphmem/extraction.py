"""The extraction contract: entities and relations in the seed's JSON format.

Whatever produced them (the agent, an LLM, the offline extractor), extractions are parsed and
validated here, the same way. Malformed input (a missing name, a confidence that is not a
number in [0, 1], a wrong type) raises :class:`InvalidInput` naming the field, before anything
is written. Items that are well-formed but not acceptable (confidence below the minimum, an
endpoint that is unknown) are decided later, at ingest, and reported as warnings.
"""

from __future__ import annotations

import json
import math
import reprlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import InvalidInput

__all__ = ["EntitySpec", "RelationSpec", "Extraction", "parse_extraction", "load_extraction_file",
           "MAX_JSON_DEPTH", "check_json_depth", "check_json_text", "loads_json", "ENTITY_FIELDS",
           "RELATION_FIELDS"]

# Deepest nesting of lists/objects accepted in JSON that graphmem reads (extraction files, bulk
# records, LLM answers, document metadata). Real records nest 3-5 levels; a hostile file with
# 100k brackets made the parser raise RecursionError and abort a whole run.
MAX_JSON_DEPTH = 64


@dataclass(frozen=True)
class EntitySpec:
    """An entity as extracted: name, type, the text that supports it, optional aliases."""

    name: str
    type: str = "concept"
    supporting_text: str = ""
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class RelationSpec:
    """A relation as extracted: ``source --[type]--> target`` with confidence and support."""

    source: str
    target: str
    type: str
    confidence: float = 1.0
    supporting_text: str = ""


@dataclass(frozen=True)
class Extraction:
    """Entities and relations extracted from one document."""

    entities: tuple[EntitySpec, ...] = ()
    relations: tuple[RelationSpec, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The extraction in the seed's JSON format."""
        return {
            "entities": [
                {"name": e.name, "type": e.type, "supporting_text": e.supporting_text}
                | ({"aliases": list(e.aliases)} if e.aliases else {})
                for e in self.entities
            ],
            "relations": [
                {
                    "source": r.source,
                    "target": r.target,
                    "type": r.type,
                    "confidence": r.confidence,
                    "supporting_text": r.supporting_text,
                }
                for r in self.relations
            ],
        }


def check_json_depth(value: Any, where: str, max_depth: int = MAX_JSON_DEPTH) -> None:
    """Raise InvalidInput when ``value`` nests lists/dicts deeper than ``max_depth`` (iterative:
    a deep value cannot exhaust the stack here)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, Mapping):
            children: Any = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        if depth > max_depth:
            raise InvalidInput(f"{where}: nested deeper than {max_depth} levels of lists/objects; flatten it")
        stack.extend((child, depth + 1) for child in children)


def check_json_text(value: Any, where: str) -> None:
    """Raise InvalidInput when a string in ``value`` (parsed JSON) is not valid Unicode: JSON's
    ``"\\ud800"`` escapes decode to lone surrogates, which cannot be stored or hashed."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput(f"{where}: holds a lone surrogate (an escape such as \\ud800 that is not "
                           "half of a pair); not valid Unicode text") from None


def loads_json(text: str | bytes, where: str, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads`` with nesting bounded by ``max_depth``: InvalidInput (naming ``where``) for
    JSON nested deeper than that, whatever the depth; ``json.JSONDecodeError`` passes through so
    that callers can report its line and column."""
    try:
        data = json.loads(text)
    except RecursionError:
        raise InvalidInput(f"{where}: nested deeper than {max_depth} levels of lists/objects; flatten it") from None
    except json.JSONDecodeError:
        raise
    except ValueError as exc:  # a number of more than 4,300 digits: Python's int limit, not a JSONDecodeError
        raise InvalidInput(f"{where}: cannot be read ({exc})") from None
    check_json_depth(data, where, max_depth)
    return data


def _text(item: Mapping[str, Any], key: str, where: str, required: bool, default: str = "") -> str:
    if key not in item or item[key] is None:
        if required:
            raise InvalidInput(f"{where}.{key}: missing; every item needs a non-empty '{key}'")
        return default
    value = item[key]
    if not isinstance(value, str):
        raise InvalidInput(f"{where}.{key}: expected a string, got {type(value).__name__} {reprlib.repr(value)}")
    if required and not value.strip():
        raise InvalidInput(f"{where}.{key}: empty; give a non-empty '{key}'")
    return value.strip()


def _entity(item: Any, where: str) -> EntitySpec:
    if isinstance(item, str):  # a bare name is accepted as shorthand
        if not item.strip():
            raise InvalidInput(f"{where}: empty entity name")
        return EntitySpec(name=item.strip())
    if not isinstance(item, Mapping):
        raise InvalidInput(f"{where}: expected an object with name/type/supporting_text, got {type(item).__name__}")
    aliases = item.get("aliases") or []
    if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
        raise InvalidInput(f"{where}.aliases: expected a list of strings")
    return EntitySpec(
        name=_text(item, "name", where, required=True),
        type=_text(item, "type", where, required=False, default="concept") or "concept",
        supporting_text=_text(item, "supporting_text", where, required=False),
        aliases=tuple(a.strip() for a in aliases if a.strip()),
    )


def _confidence(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                raise InvalidInput(f"{where}.confidence: expected a number in [0, 1], "
                                   f"got {reprlib.repr(value)}") from None
        else:
            raise InvalidInput(f"{where}.confidence: expected a number in [0, 1], got {reprlib.repr(value)}")
    value = float(value)
    if math.isnan(value) or not 0.0 <= value <= 1.0:
        raise InvalidInput(f"{where}.confidence: {value} is outside [0, 1]")
    return value


def _relation(item: Any, where: str) -> RelationSpec:
    if not isinstance(item, Mapping):
        raise InvalidInput(f"{where}: expected an object with source/target/type/confidence, got {type(item).__name__}")
    return RelationSpec(
        source=_text(item, "source", where, required=True),
        target=_text(item, "target", where, required=True),
        type=_text(item, "type", where, required=True),
        confidence=_confidence(item.get("confidence", 1.0), where),
        supporting_text=_text(item, "supporting_text", where, required=False),
    )


def parse_extraction(
    entities: Sequence[Any] | None = None,
    relations: Sequence[Any] | None = None,
) -> Extraction:
    """Validate raw entity and relation lists (dicts in the seed's format) into an Extraction."""
    for name, value in (("entities", entities), ("relations", relations)):
        if value is not None and (isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence)):
            raise InvalidInput(f"{name}: expected a list, got {type(value).__name__}")
    ents = tuple(_entity(e, f"entities[{i}]") for i, e in enumerate(entities or []))
    rels = tuple(_relation(r, f"relations[{i}]") for i, r in enumerate(relations or []))
    warnings = [w for w in (_unknown_fields("entities", entities, ENTITY_FIELDS),
                            _unknown_fields("relations", relations, RELATION_FIELDS)) if w]
    return Extraction(ents, rels, {"warnings": warnings} if warnings else {})


ENTITY_FIELDS = ("name", "type", "supporting_text", "aliases")
RELATION_FIELDS = ("source", "target", "type", "confidence", "supporting_text")
# What agents and LLMs write instead of the contract's names (a misspelt field would otherwise drop the
# evidence of every item without a word: "quote" for supporting_text left each relation with no span).
_MEANT = {"quote": "supporting_text", "evidence": "supporting_text", "text": "supporting_text",
          "support": "supporting_text", "supporting_quote": "supporting_text", "supportingtext": "supporting_text",
          "supporting-text": "supporting_text", "span": "supporting_text", "label": "type",
          "relation": "type", "predicate": "type", "kind": "type", "subject": "source", "head": "source",
          "from": "source", "object": "target", "tail": "target", "to": "target", "alias": "aliases",
          "score": "confidence"}


_NAMED_AT_MOST = 10  # fields named in the warning (a hostile record may carry thousands)


def _unknown_fields(what: str, items: Sequence[Any] | None, known: tuple[str, ...]) -> str:
    """One warning naming the fields of ``items`` the contract does not read (they are ignored), with
    how many items carry each and the field probably meant; "" when there are none."""
    counts: dict[str, int] = {}
    for item in items or []:
        if isinstance(item, Mapping):
            for key in item:
                if key not in known:
                    counts[str(key)] = counts.get(str(key), 0) + 1
    if not counts:
        return ""
    parts = []
    by_lower = {k.lower(): k for k in known}
    for key in sorted(counts)[:_NAMED_AT_MOST]:
        n = counts[key]
        meant = by_lower.get(key.lower()) or _MEANT.get(key.lower())
        hint = f", did you mean '{meant}'?" if meant else ""
        parts.append(f"{reprlib.repr(key)} ({n} item{'s' if n != 1 else ''}{hint})")
    more = len(counts) - _NAMED_AT_MOST
    if more > 0:
        parts.append(f"and {more} more")
    return (f"{what}: unknown field(s) ignored: {'; '.join(parts)}; the fields read are "
            f"{', '.join(known)}")


def load_extraction_file(path: str | Path) -> Extraction:
    """Read an EXTRACTION.json file (``{"entities": [...], "relations": [...]}``)."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise InvalidInput(f"{p}: cannot read extraction file ({exc.strerror})") from None
    try:
        data = loads_json(raw.decode("utf-8"), str(p))
    except UnicodeDecodeError:
        raise InvalidInput(f"{p}: not UTF-8 text; save the extraction file as UTF-8 JSON") from None
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{p}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    if not isinstance(data, Mapping):
        raise InvalidInput(f"{p}: expected a JSON object with 'entities' and 'relations' lists")
    check_json_text(data, str(p))
    unknown = set(data) - {"entities", "relations"}
    if unknown:
        raise InvalidInput(
            f"{p}: unknown top-level key(s) {sorted(unknown)}; an extraction file has 'entities' and 'relations'"
        )
    try:
        return parse_extraction(data.get("entities"), data.get("relations"))
    except InvalidInput as exc:
        raise InvalidInput(f"{p}: {exc}") from None

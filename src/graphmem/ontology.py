"""Normalisation of entity types and relation types.

The rules are the Mini Context Graph ontology's: lowercase, trim, ``_`` and ``-`` to space,
then a synonym table (its two tables are the defaults here, extensible in ``config.toml``).
Two things are fixed on top of it:

* Inverse phrases keep their meaning. "wheel is part of car" normalises to
  ``car --[contains]--> wheel``: the phrase maps to ``contains`` *and* swaps the ends
  (the seed mapped the phrase without swapping, which reversed the fact).
* The number of distinct entity types is capped (default 50); past the cap a new type
  maps to the closest existing one, and the caller is told so.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

__all__ = [
    "GENERIC_TYPE",
    "DEFAULT_TYPE_SYNONYMS",
    "DEFAULT_RELATION_SYNONYMS",
    "DEFAULT_INVERSE_RELATIONS",
    "DEFAULT_OPPOSITE_RELATIONS",
    "Ontology",
    "RelationNorm",
    "normalize_label",
]

# The type of an entity nobody typed (the offline extractor's fallback, add_node's default): any
# other type given later replaces it, and it never replaces another type.
GENERIC_TYPE = "concept"

# The Mini Context Graph ontology's entity-type table (variant -> canonical type), with
# the extra variants its ontology_store carried.
DEFAULT_TYPE_SYNONYMS: dict[str, str] = {
    **dict.fromkeys(["component", "module", "class", "function", "method", "object"], "component"),
    **dict.fromkeys(["bug", "defect", "fault", "error", "failure", "problem", "crash"], "issue"),
    **dict.fromkeys(["server", "host", "machine", "node"], "infrastructure"),
    **dict.fromkeys(["user", "person", "operator", "admin", "administrator", "actor"], "actor"),
    **dict.fromkeys(
        ["app", "application", "service", "program", "software", "library", "package"], "software"
    ),
    **dict.fromkeys(["database", "datastore", "db", "storage"], "storage"),
    **dict.fromkeys(["api", "endpoint", "interface", "connection"], "interface"),
    **dict.fromkeys(["event", "incident", "occurrence", "trigger"], "event"),
    **dict.fromkeys(["concept", "idea", "principle", "theory"], "concept"),
    **dict.fromkeys(["process", "thread", "task", "job", "workflow"], "process"),
    **dict.fromkeys(["resource", "memory", "cpu"], "resource"),
    **dict.fromkeys(["system", "platform", "framework"], "system"),
}

# The ontology's relation table (variant -> canonical relation), forward phrases only.
DEFAULT_RELATION_SYNONYMS: dict[str, str] = {
    **dict.fromkeys(["causes", "triggers", "leads to", "results in", "produces"], "causes"),
    **dict.fromkeys(["contains", "includes", "has part", "consists of"], "contains"),
    **dict.fromkeys(["depends on", "requires", "needs"], "depends on"),
    **dict.fromkeys(["uses", "calls", "invokes", "consumes"], "uses"),
    **dict.fromkeys(["affects", "impacts", "influences"], "affects"),
    **dict.fromkeys(["creates", "instantiates", "spawns"], "creates"),
    **dict.fromkeys(["connects to", "links to", "references"], "connects to"),
    **dict.fromkeys(["extends", "inherits from", "subclasses"], "extends"),
    **dict.fromkeys(["reads from", "queries", "fetches"], "reads from"),
    **dict.fromkeys(["writes to", "stores in", "persists to"], "writes to"),
    **dict.fromkeys(["prevents", "stops", "blocks"], "prevents"),
    **dict.fromkeys(["is a", "is an", "is a kind of", "is a type of"], "is a"),
}

# Phrases whose subject is the canonical relation's *target*: "A is part of B" means
# "B contains A". The seed's table listed the first four under ``contains`` unswapped.
DEFAULT_INVERSE_RELATIONS: dict[str, str] = {
    **dict.fromkeys(
        ["is part of", "part of", "belongs to", "lives in", "sits in", "is contained in",
         "is included in", "is inside"],
        "contains",
    ),
    **dict.fromkeys(["is caused by", "caused by", "is triggered by", "results from",
                     "is produced by", "due to", "because of"], "causes"),
    **dict.fromkeys(["is required by", "is needed by", "is a dependency of"], "depends on"),
    **dict.fromkeys(["is used by", "is called by", "is invoked by", "is consumed by"], "uses"),
    **dict.fromkeys(["is affected by", "is impacted by", "is influenced by"], "affects"),
    **dict.fromkeys(["is created by", "is instantiated by", "is spawned by"], "creates"),
    **dict.fromkeys(["is extended by", "is inherited by"], "extends"),
    **dict.fromkeys(["is read by", "is queried by", "is fetched by"], "reads from"),
    **dict.fromkeys(["is written by", "is persisted by"], "writes to"),
    **dict.fromkeys(["is prevented by", "is stopped by", "is blocked by"], "prevents"),
}

# Relations that contradict each other for the same ordered pair (used by the wiki layer
# to flag contradictions).
DEFAULT_OPPOSITE_RELATIONS: dict[str, str] = {"causes": "prevents", "prevents": "causes"}

_SPACES = re.compile(r"\s+")


def normalize_label(label: str) -> str:
    """Lowercase, trim, turn ``_`` and ``-`` into spaces and collapse runs of spaces."""
    return _SPACES.sub(" ", label.replace("_", " ").replace("-", " ").strip().lower()).strip()


@dataclass(frozen=True)
class RelationNorm:
    """A normalised relation: canonical type and whether source and target swap."""

    type: str
    swapped: bool = False


class Ontology:
    """Synonym tables plus the entity-type cap. Pure: knows nothing about storage."""

    def __init__(
        self,
        type_synonyms: Mapping[str, str] | None = None,
        relation_synonyms: Mapping[str, str] | None = None,
        inverse_relations: Mapping[str, str] | None = None,
        opposite_relations: Mapping[str, str] | None = None,
        max_entity_types: int = 50,
    ) -> None:
        self.type_synonyms = {normalize_label(k): normalize_label(v) for k, v in DEFAULT_TYPE_SYNONYMS.items()}
        self.relation_synonyms = {
            normalize_label(k): normalize_label(v) for k, v in DEFAULT_RELATION_SYNONYMS.items()
        }
        self.inverse_relations = {
            normalize_label(k): normalize_label(v) for k, v in DEFAULT_INVERSE_RELATIONS.items()
        }
        self.opposite_relations = dict(DEFAULT_OPPOSITE_RELATIONS)
        # User tables extend and override the defaults; a user synonym for a phrase that
        # was an inverse replaces the inverse meaning (the user said what it means).
        for k, v in (type_synonyms or {}).items():
            self.type_synonyms[normalize_label(k)] = normalize_label(v)
        for k, v in (relation_synonyms or {}).items():
            key = normalize_label(k)
            self.relation_synonyms[key] = normalize_label(v)
            self.inverse_relations.pop(key, None)
        for k, v in (inverse_relations or {}).items():
            key = normalize_label(k)
            self.inverse_relations[key] = normalize_label(v)
            self.relation_synonyms.pop(key, None)
        for k, v in (opposite_relations or {}).items():
            a, b = normalize_label(k), normalize_label(v)
            self.opposite_relations[a] = b
            self.opposite_relations[b] = a
        if max_entity_types < 1:
            raise ValueError("ontology.max_entity_types must be at least 1")
        self.max_entity_types = max_entity_types

    def normalize_type(self, raw: str) -> str:
        """Canonical entity type for ``raw`` (``"Bug"`` -> ``"issue"``); empty -> ``"concept"``."""
        key = normalize_label(raw)
        if not key:
            return GENERIC_TYPE
        return self.type_synonyms.get(key, key)

    def normalize_relation(self, raw: str) -> RelationNorm:
        """Canonical relation for ``raw``, with ``swapped=True`` for inverse phrases."""
        key = normalize_label(raw)
        if key in self.inverse_relations:
            return RelationNorm(self.inverse_relations[key], swapped=True)
        return RelationNorm(self.relation_synonyms.get(key, key), swapped=False)

    def are_opposite(self, a: str, b: str) -> bool:
        """True when relations ``a`` and ``b`` contradict each other for the same pair."""
        return self.opposite_relations.get(a) == b

    def cap_type(self, canonical: str, existing: Iterable[str]) -> tuple[str, str | None]:
        """Apply the distinct-type cap.

        Returns ``(type_to_use, note)``; ``note`` is ``None`` unless the type was remapped.
        """
        known = list(existing)
        if canonical in known or len(known) < self.max_entity_types:
            return canonical, None
        closest = _closest(canonical, known)
        note = (
            f"entity type '{canonical}' would exceed the cap of {self.max_entity_types} distinct types; "
            f"mapped to the closest existing type '{closest}' (raise ontology.max_entity_types in config.toml "
            "or add a type synonym to change this)"
        )
        return closest, note


def _closest(word: str, candidates: list[str]) -> str:
    # Character similarity, with shared words counted as a strong hint ("network error"
    # is closer to "error" than to "network" only by characters; words settle it).
    words = set(word.split())

    def score(c: str) -> tuple[float, float, str]:
        shared = len(words & set(c.split()))
        return (shared, difflib.SequenceMatcher(None, word, c).ratio(), c)

    return max(candidates, key=score)

"""The extractor contract: ``extract(document) -> Extraction``, validated the same way
whatever produced it (the agent, an LLM, the offline rules)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ...errors import InvalidInput
from ...extraction import EntitySpec, Extraction, RelationSpec
from ...text import FoldedText, normalize_name

__all__ = ["SourceDocument", "Extractor", "ExtractionError", "validate_extraction", "require_names"]


@dataclass(frozen=True)
class SourceDocument:
    """A document as read from a file or a bulk record, before it is stored.

    ``extraction`` is set when the caller supplied entities/relations (agent extraction);
    ``pages`` maps character ranges to page numbers for paginated sources (PDF):
    ``[(start, end, page_number), ...]``.
    """

    doc_id: str
    title: str
    source: str
    text: str
    metadata: Mapping[str, Any] = field(default_factory=dict)
    extraction: Extraction | None = None
    pages: tuple[tuple[int, int, int], ...] = ()


class ExtractionError(Exception):
    """An extractor could not produce a valid extraction for one document (reported, not fatal)."""


@runtime_checkable
class Extractor(Protocol):
    """Turns one document into entities and relations in the seed's format."""

    name: str

    def extract(self, doc: SourceDocument) -> Extraction:
        """Entities and relations found in ``doc.text``; every item carries supporting text."""


def _empty_field(relation: RelationSpec) -> str | None:
    """The first of a relation's source, target and type that is empty once normalised, if any."""
    return next((name for name, value in (("source", relation.source), ("target", relation.target),
                                          ("type", relation.type)) if not normalize_name(value)), None)


def require_names(extraction: Extraction) -> None:
    """Raise InvalidInput naming the first entity with an empty name or relation with an empty
    source/target/type: for an extraction handed over as an object (``kb.ingest``), refused
    whole as ``parse_extraction`` refuses the same fault in raw lists, before anything is written."""
    for i, e in enumerate(extraction.entities):
        if not normalize_name(e.name):
            raise InvalidInput(f"entities[{i}].name: empty; give a non-empty 'name'")
    for i, r in enumerate(extraction.relations):
        empty = _empty_field(r)
        if empty is not None:
            raise InvalidInput(f"relations[{i}].{empty}: empty; give a non-empty '{empty}'")


def validate_extraction(
    extraction: Extraction, text: str, min_confidence: float = 0.6, source: str = "extractor"
) -> tuple[Extraction, list[str]]:
    """Keep only what the contract accepts; report every dropped item.

    Dropped: an entity with an empty (or whitespace-only) name; an entity whose supporting
    text is given but not in the document (case and whitespace folded) — nothing hallucinated
    is stored; a relation with an empty source, target or type; a relation below
    ``min_confidence``; a relation whose supporting text is not in the document; a relation
    whose endpoints are not both in the entity list. A bad item costs only itself: the rest of
    the document (and of its batch) is written.
    """
    folded: list[FoldedText] = []  # built on the first quote not found verbatim (a copy of the text)
    warnings: list[str] = []

    def present(quote: str) -> bool:
        if not quote or quote in text:
            return True
        if not folded:
            folded.append(FoldedText(text))
        return folded[0].find(quote) is not None

    entities: list[EntitySpec] = []
    names: set[str] = set()
    for i, e in enumerate(extraction.entities):
        if not normalize_name(e.name):
            # Every empty name keys the same node id but no name row, so two of them in one batch
            # collided at commit and lost the whole batch.
            warnings.append(f"{source}: entities[{i}].name: empty; dropped (an entity needs a name)")
            continue
        if not present(e.supporting_text):
            warnings.append(f"{source}: entities[{i}] '{e.name}': supporting_text not in the document; dropped")
            continue
        entities.append(e)
        names.add(normalize_name(e.name))
        names.update(normalize_name(a) for a in e.aliases)
    relations: list[RelationSpec] = []
    for i, r in enumerate(extraction.relations):
        label = f"{source}: relations[{i}] '{r.source} --[{r.type}]--> {r.target}'"
        empty = _empty_field(r)
        if empty is not None:
            warnings.append(f"{source}: relations[{i}].{empty}: empty; dropped (a relation needs a {empty})")
        elif r.confidence < min_confidence:
            warnings.append(f"{label}: confidence {r.confidence:g} below {min_confidence:g}; dropped")
        elif not present(r.supporting_text):
            warnings.append(f"{label}: supporting_text not in the document; dropped")
        elif normalize_name(r.source) not in names or normalize_name(r.target) not in names:
            warnings.append(f"{label}: an endpoint is not in the entity list; dropped")
        else:
            relations.append(r)
    return Extraction(tuple(entities), tuple(relations), dict(extraction.extra)), warnings

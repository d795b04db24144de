"""Evidence: the relations among the hits, and the best evidence packed into a token budget."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..errors import InvalidInput
from ..store import Store
from .hits import Hit

__all__ = ["subgraph_of", "estimate_tokens", "build_context"]


def subgraph_of(store: Store, hits: list[Hit], min_confidence: float, max_nodes: int = 200,
              max_edges: int = 50) -> list[dict[str, Any]]:
    """The strongest relations (at most ``max_edges``) among the entities of the hits: hit
    entities first, then those mentioned in hit chunks, best hit first, at most ``max_nodes``
    (bounded, so a page of hits over hub entities does not read every edge of every hub)."""
    ents: dict[str, None] = {h.id: None for h in hits if h.kind == "entity"}
    chunk_ids = [h.chunk_id for h in hits if h.kind in ("chunk", "document") and h.chunk_id]
    by_chunk = store.chunk_entities(chunk_ids)
    for cid in chunk_ids:
        for eid in by_chunk.get(cid, ()):
            ents.setdefault(eid, None)
    if not ents:
        return []
    edges = store.edges_among(list(ents)[:max_nodes], min_confidence, max_edges)
    names = store.node_names({e.source for e in edges} | {e.target for e in edges})
    return [{"src": e.source, "dst": e.target, "type": e.type, "weight": e.confidence,
             "src_name": names[e.source], "dst_name": names[e.target]} for e in edges]


def estimate_tokens(text: str) -> int:
    """Rough token count (about four characters per token for English)."""
    return (len(text) + 3) // 4


def build_context(hits: Iterable[Hit], subgraph: Sequence[Mapping[str, Any]], token_budget: int) -> str:
    """The best evidence as one text block with [n] citation markers, within ``token_budget``."""
    if token_budget < 20:
        raise InvalidInput("token_budget: at least 20 tokens")
    blocks: list[str] = []
    used = 0
    cited: list[str] = []
    for h in hits:
        for c in h.citations[:1] or [{"doc_id": h.doc_id, "chunk_id": h.chunk_id, "text": h.text}]:
            key = c.get("chunk_id") or h.id
            if key in cited:
                continue
            n = len(cited) + 1
            where = f"{c.get('doc_id') or c.get('path') or h.title}"
            if c.get("start") is not None:
                where += f", chars {c['start']}-{c['end']}"
            head = f"[{n}] {h.title} ({where})\n"
            body = " ".join(str(c.get("text") or h.text).split())
            room = token_budget - used - estimate_tokens(head) - 1
            if room <= 8:
                break
            if estimate_tokens(body) > room:
                body = _truncate(body, room * 4)
            blocks.append(head + body)
            used += estimate_tokens(head + body) + 1
            cited.append(key)
        if used >= token_budget - 8:
            break
    facts = []
    for e in subgraph:
        line = f"- {e['src_name']} --[{e['type']}]--> {e['dst_name']}"
        if used + estimate_tokens(line) + 1 > token_budget:
            break
        facts.append(line)
        used += estimate_tokens(line) + 1
    text = "\n\n".join(blocks)
    if facts:
        text += "\n\nRelations:\n" + "\n".join(facts)
    return text


def _truncate(text: str, max_chars: int) -> str:
    cut = text[: max(0, max_chars - 1)]
    space = cut.rfind(" ")
    if space > max_chars // 2:
        cut = cut[:space]
    return cut + "…"

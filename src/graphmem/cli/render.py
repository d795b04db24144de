"""Human-readable output for the CLI (plain text, readable in any terminal)."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import Any

from ..models import plain

__all__ = ["plain", "search", "ingest", "subgraph", "evidence", "documents", "document", "entity", "stats",
           "chunk_hits", "events", "relative_scores", "share_between_kinds"]


def _clip(text: str, n: int = 100) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def ingest(r: dict[str, Any]) -> str:
    """One ingest result."""
    head = {
        "added": f"added {r['doc_id']} (version {r['version']})",
        "new_version": f"new version {r['version']} of {r['doc_id']}",
        "unchanged": f"unchanged {r['doc_id']} (version {r['version']}): nothing added",
    }[r["status"]]
    lines = [head]
    if r["status"] != "unchanged":
        lines.append(
            f"  chunks {r['chunk_count']}, nodes added {r['nodes_added']}, edges added {r['edges_added']}, "
            f"evidence records {r['provenance_added']}"
        )
    for w in r["warnings"]:
        if r["status"] != "unchanged":
            lines.append(f"  warning: {w}")
    return "\n".join(lines)


def subgraph(sg: dict[str, Any]) -> str:
    """Nodes and edges of a query result."""
    if not sg["nodes"]:
        return "no matching entities"
    lines = [f"{len(sg['nodes'])} entities, {len(sg['edges'])} relations"]
    for n in sg["nodes"].values():
        mark = "*" if n.get("seed") else " "
        lines.append(f" {mark} {n['name']}  [{n['type']}]")
    if sg["edges"]:
        lines.append("relations:")
        for e in sg["edges"]:
            lines.append(f"   {e['source_name']} --[{e['type']}]--> {e['target_name']}  ({e['confidence']:g})")
    lines.append("(* = named in the query)")
    return "\n".join(lines)


def evidence(r: dict[str, Any]) -> str:
    """A query_with_evidence result: subgraph, paths, then the quoted evidence."""
    lines = [subgraph(r["subgraph"])]
    if r["evidence_paths"]:
        lines.append("")
        lines.append("evidence chain:")
        for p in r["evidence_paths"]:
            lines.append(f"  {p['text']}")
    if r["supporting_documents"]:
        lines.append("")
        lines.append("supporting documents:")
        for d in r["supporting_documents"]:
            version = "" if d["version"] == 1 else f" v{d['version']}"
            stale = "" if d.get("is_latest", True) else " (superseded version)"
            lines.append(f"  {d['doc_id']}{version} — {d['doc_title']}{stale}")
            for c in d["supporting_chunks"]:
                lines.append(f"    [{c['chunk_id']} chars {c['start']}-{c['end']}]")
                for q in c["quotes"]:
                    span = f"{q['start']}-{q['end']}" if q["start"] is not None else "no span"
                    lines.append(f"      “{_clip(q['text'], 90)}” ({span}) → {q['supports']}")
    return "\n".join(lines)


def documents(docs: Sequence[dict[str, Any]]) -> str:
    """A table of documents."""
    if not docs:
        return "no documents"
    w = max(len(d["doc_id"]) for d in docs)
    lines = [f"{'ID'.ljust(w)}  VER  CHUNKS  TITLE"]
    for d in docs:
        lines.append(f"{d['doc_id'].ljust(w)}  {d['version']:>3}  {d['chunk_count']:>6}  {_clip(d['title'], 60)}")
    return "\n".join(lines)


def document(d: dict[str, Any], chunks: Sequence[dict[str, Any]] | None, versions: Sequence[int]) -> str:
    """One document with its metadata and, optionally, chunks."""
    lines = [
        f"{d['doc_id']} — {d['title']}",
        f"  version {d['version']} of {versions}, source {d['source'] or '-'}, added {d['created_at']}",
        f"  content hash {d['content_hash'][:16]}…, {len(d['content'])} characters, {d['chunk_count']} chunks",
    ]
    if d["metadata"]:
        lines.append(f"  metadata {d['metadata']}")
    if chunks is None:
        lines.append("")
        lines.append(textwrap.indent(d["content"], "  "))
    else:
        for c in chunks:
            lines.append(f"  [{c['chunk_id']} chars {c['start']}-{c['end']}] {_clip(c['text'], 90)}")
    return "\n".join(lines)


def entity(e: dict[str, Any]) -> str:
    """An entity with relations and evidence."""
    lines = [f"{e['name']}  [{e['type']}]  id {e['id']}{'  (hand-made)' if e['manual'] else ''}"]
    if e["aliases"]:
        lines.append(f"  aliases: {', '.join(e['aliases'])}")
    lines.append(f"  evidence: {e['evidence_count']} record(s)")
    for p in e["evidence"][:5]:
        span = f"{p['start']}-{p['end']}" if p["start"] is not None else "no span"
        lines.append(f"    {p['doc_id']} v{p['version']} {span}: “{_clip(p['text'], 80)}”")
    if e["relations"]:
        lines.append("  relations:")
        for r in e["relations"]:
            lines.append(f"    {r['source']} --[{r['type']}]--> {r['target']}  ({r['confidence']:g}, "
                         f"{len(r['evidence'])} evidence{' , hand-made' if r['manual'] else ''})")
            for p in r["evidence"][:2]:
                lines.append(f"      {p['doc_id']}: “{_clip(p['text'], 80)}”")
    return "\n".join(lines)


def stats(s: dict[str, Any]) -> str:
    """Knowledge base counts."""
    size_mb = s["size_bytes"] / 1e6
    return "\n".join([
        f"knowledge base {s['home']} ({s['backend']}, {size_mb:.2f} MB)",
        f"  documents {s['documents']} ({s['document_versions']} versions), chunks {s['chunks']}",
        f"  entities {s['entities']} ({s['entity_types']} types), relations {s['edges']} "
        f"({s['relation_types']} types), evidence records {s['provenance']}",
        f"  events {s['events']}",
    ])


def relative_scores(hits: Sequence[dict[str, Any]]) -> list[float]:
    """Each hit's score as a share of the best one (1.00 = best hit).

    Raw BM25 scores depend on the corpus (on a small one they print as 2.75e-06): a share of the best
    hit is what a person can compare; the raw score stays in --json."""
    best = max((abs(float(h["score"])) for h in hits), default=0.0)
    return [abs(float(h["score"])) / best if best > 0 else 0.0 for h in hits]


def share_between_kinds(hits: Sequence[Any], k: int) -> list[Any]:
    """At most ``k`` hits in total, taken in turn from each kind's ranking (scores are per kind, so
    one kind's hits cannot be compared with another's), kept in the order they came."""
    by_kind: dict[str, list[int]] = {}
    for i, h in enumerate(hits):
        by_kind.setdefault(h.kind, []).append(i)
    chosen: set[int] = set()
    rank = 0
    while len(chosen) < k and any(rank < len(ix) for ix in by_kind.values()):
        for ix in by_kind.values():
            if rank < len(ix) and len(chosen) < k:
                chosen.add(ix[rank])
        rank += 1
    return [h for i, h in enumerate(hits) if i in chosen]


def chunk_hits(hits: Sequence[dict[str, Any]]) -> str:
    """Full-text search results, scores as a share of the best hit."""
    if not hits:
        return "no matches"
    return "\n".join(f"{rel:.2f}  {h['chunk_id']}  {h['title']}\n      {_clip(h['snippet'], 110)}"
                      for h, rel in zip(hits, relative_scores(hits)))


def events(evs: Sequence[dict[str, Any]]) -> str:
    """Change log entries."""
    if not evs:
        return "no events"
    return "\n".join(f"{e['id']:>6}  {e['timestamp']}  {e['type']:<18} {e['target']}" for e in evs)


def search(r: dict[str, Any]) -> str:
    """Search hits with their score parts, path and first citation."""
    lines = [f"note: {n}" for n in r["notes"]]
    if not r["hits"]:
        lines.append("no hits")
    for i, h in enumerate(r["hits"], start=1):
        p = h["parts"]
        via = "seed" if h["seed"] else "graph"
        rounds = f"; rounds {p['first_round']:.3f} + feedback {p['feedback']:.3f}" if "feedback" in p else ""
        if p.get("title_named"):  # the third term of the rounds' fusion: the query names the passage's title
            rounds += f" + title named {p['title_named']:.3f}"
        lines.append(f"{i:>2}. {h['score']:.3f}  [{h['kind']}] {h['title']}  ({h['id']}; {via}; dense {p['dense']:.2f} "
                     f"lexical {p['lexical']:.2f} graph {p['graph']:.2f}{rounds})")
        lines.append(f"      {_clip(h['text'], 110)}")
        if len(h["path"]) > 1:
            lines.append(f"      path: {' → '.join(h['path'])}")
    if r["subgraph"]:
        lines.append("relations among the hits:")
        for e in r["subgraph"][:10]:
            lines.append(f"   {e['src_name']} --[{e['type']}]--> {e['dst_name']}")
    return "\n".join(lines)

"""What the reliability suite (and bench/reliability.py) checks after a run of concurrent or
interrupted work: nothing acknowledged is lost, the store is sound, files and rows agree.

Every check reads the knowledge base from outside the processes that wrote it: through the public
API, plus ``sqlite3`` directly for SQLite's own integrity check.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from pathlib import Path
from typing import Any

from workers import CONFIG, document

import graphmem
from graphmem.errors import NotFound

TEMP_FILE = re.compile(r"^\..+\.tmp$|\.tmp$")


def integrity(home: Path) -> str:
    """SQLite's own verdict on the database file ('ok' when sound)."""
    conn = sqlite3.connect(home / "graph.db")
    try:
        return "; ".join(r[0] for r in conn.execute("PRAGMA integrity_check"))
    finally:
        conn.close()


def temp_files(home: Path) -> list[str]:
    """Temp files left anywhere under the knowledge base folder."""
    out = []
    for dirpath, _, files in os.walk(home):
        out += [os.path.join(dirpath, f) for f in files if TEMP_FILE.search(f)]
    return sorted(out)


def wiki_disagreements(kb: Any) -> dict[str, list[str]]:
    """Page files without a row and rows without a file (``wiki/<category>/<name>.md``)."""
    wiki = Path(kb.wiki.dir)
    files = {p.relative_to(wiki).as_posix() for p in wiki.glob("*/*.md") if not p.name.startswith(".")}
    files = {f for f in files if not f.startswith("_")}  # _index/ holds the index shards, not pages
    rows = {p["path"] for p in _all_pages(kb)}
    rows = {Path(r).relative_to(wiki).as_posix() for r in rows}
    return {"files_without_row": sorted(files - rows), "rows_without_file": sorted(rows - files)}


def _all_pages(kb: Any) -> list[dict[str, Any]]:
    return kb.wiki.list_pages()


def check_mixed(home: Path, ledgers: list[Path], reader_ledger: Path | None = None) -> dict[str, Any]:
    """Everything the writers acknowledged is in the final state; counts of what is not."""
    runs = [json.loads(p.read_text(encoding="utf-8")) for p in ledgers]
    out: dict[str, Any] = {"acknowledged": 0, "lost_documents": [], "lost_memories": [], "lost_pages": [],
                           "shared_page_mismatch": [], "missing_summaries": [], "unexpected_errors": [],
                           "busy": sum(r["busy"] for r in runs)}
    for r in runs:
        out["unexpected_errors"] += r["errors"]
    shared_tokens: dict[str, set[str]] = {}
    with graphmem.open(home, config=CONFIG) as kb:
        summaries = {p["title"] for p in kb.wiki.list_pages("summary")}
        for r in runs:
            a = r["acked"]
            out["acknowledged"] += sum(len(v) for v in a.values())
            for doc_id in a["documents"]:
                try:
                    kb.documents.get(doc_id)
                except NotFound:
                    out["lost_documents"].append(doc_id)
                    continue
                if kb.config["wiki"]["auto_pages"] and kb.documents.get(doc_id).title not in summaries:
                    out["missing_summaries"].append(doc_id)
            for mem_id in a["memories"]:
                try:
                    kb.memory.get(mem_id)
                except NotFound:
                    out["lost_memories"].append(mem_id)
            for title, token in a["own_pages"]:
                if not _page_has(kb, "note", title, token):
                    out["lost_pages"].append(title)
            for title, token in a["shared_pages"]:
                shared_tokens.setdefault(title, set()).add(token)
        for title, tokens in shared_tokens.items():
            # Overlapping writers: the page must exist and hold one of the acknowledged texts.
            if not any(_page_has(kb, "topic", title, t) for t in tokens):
                out["shared_page_mismatch"].append(title)
        out["wiki"] = wiki_disagreements(kb)
        out["stats"] = {k: v for k, v in kb.stats().items() if isinstance(v, int)}
    out["integrity"] = integrity(home)
    out["temp_files"] = temp_files(home)
    out["provenance"] = _provenance_against_serial(home.parent / (home.name + "-serial"), runs, out["stats"])
    if reader_ledger is not None:
        rd = json.loads(reader_ledger.read_text(encoding="utf-8"))
        out["reads"], out["read_failures"] = rd["reads"], rd["failures"]
    return out


def _page_has(kb: Any, category: str, title: str, token: str) -> bool:
    try:
        page = kb.wiki.read_page(category, title)
    except NotFound:
        return False
    return token in page["content"]


def _provenance_against_serial(ref_home: Path, runs: list[dict[str, Any]], stats: dict[str, int]
                               ) -> dict[str, Any]:
    """Replay the acknowledged documents in one process into a fresh knowledge base: entities,
    evidence and mentions must come out exactly as the concurrent run left them."""
    with graphmem.open(ref_home, config={**CONFIG, "wiki": {"auto_pages": False}}) as ref:
        for r in runs:
            for doc_id in r["acked"]["documents"]:
                tag, _, i = doc_id.rpartition("-doc-")
                ref.ingest_with_content(**document(tag, int(i)))
        want = ref.stats()
    keys = ("documents", "entities", "provenance", "mentions", "chunks")
    diff = {k: (stats.get(k), want[k]) for k in keys if stats.get(k) != want[k]}
    return {"consistent": not diff, "differences": diff}


def problems(result: dict[str, Any]) -> list[str]:
    """The failed checks of a :func:`check_mixed` result, as readable lines (empty: all hold)."""
    bad = []
    for key in ("lost_documents", "lost_memories", "lost_pages", "shared_page_mismatch", "missing_summaries",
                "unexpected_errors", "temp_files", "read_failures"):
        if result.get(key):
            bad.append(f"{key}: {len(result[key])}: {result[key][:5]}")
    for key, items in result["wiki"].items():
        if items:
            bad.append(f"wiki {key}: {len(items)}: {items[:5]}")
    if result["integrity"] != "ok":
        bad.append(f"integrity_check: {result['integrity']}")
    if not result["provenance"]["consistent"]:
        bad.append(f"provenance differs from a serial run: {result['provenance']['differences']}")
    return bad

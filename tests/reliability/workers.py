"""Worker processes for the reliability suite and bench/reliability.py.

Run as a script, one process per worker, all on one knowledge base:

    python workers.py mixed HOME TAG N SEED LEDGER   # N mixed writes; acknowledged ones go to LEDGER (JSON)
    python workers.py reader HOME STOPFILE LEDGER     # reads in a loop until STOPFILE exists

A write counts as *acknowledged* once its call returned; the ledger lists every acknowledged write
with what the final state must show for it, and every exception that was not a graphmem error
the caller should expect (StoreBusy is retried, a few times, as a caller would).
"""

from __future__ import annotations

import json
import random
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import graphmem
from graphmem.errors import NotFound, StoreBusy

VOCAB = [f"component {i}" for i in range(40)]
SHARED_TOPICS = 12  # page titles every worker overwrites
CONFIG = {"embeddings": {"model": "none"}}


def document(tag: str, i: int) -> dict[str, Any]:
    """A document naming two entities from the shared vocabulary and one relation between them."""
    a = VOCAB[(i * 7 + len(tag)) % len(VOCAB)]
    b = VOCAB[(i * 11 + 3) % len(VOCAB)]
    if a == b:
        b = VOCAB[(VOCAB.index(a) + 1) % len(VOCAB)]
    sentence = f"{a.capitalize()} depends on {b}."
    text = f"# Report {tag} {i}\n\n{sentence} The night shift of {tag} wrote this down.\n"
    return {"doc_id": f"{tag}-doc-{i}", "title": f"Report {tag} {i}", "source": "reliability", "raw_content": text,
            "entities": [{"name": a, "type": "component", "supporting_text": sentence},
                         {"name": b, "type": "component", "supporting_text": sentence}],
            "relations": [{"source": a, "target": b, "type": "depends on", "confidence": 0.9,
                           "supporting_text": sentence}]}


def _retry(call: Any, *args: Any, **kwargs: Any) -> Any:
    for attempt in range(5):
        try:
            return call(*args, **kwargs)
        except StoreBusy:
            if attempt == 4:
                raise
            time.sleep(0.05 * (attempt + 1))
    raise AssertionError("unreachable")


def mixed(home: str, tag: str, n: int, seed: int, ledger: str) -> int:
    """``n`` writes of four kinds, in a seeded random order."""
    rng = random.Random(seed)
    acked: dict[str, list[Any]] = {"documents": [], "memories": [], "own_pages": [], "shared_pages": []}
    errors: list[str] = []
    busy = 0
    with graphmem.open(home, config=CONFIG) as kb:
        for i in range(n):
            kind = rng.choice(("document", "memory", "own_page", "shared_page"))
            try:
                if kind == "document":
                    d = document(tag, i)
                    _retry(kb.ingest_with_content, **d)
                    acked["documents"].append(d["doc_id"])
                elif kind == "memory":
                    text = f"{tag} noted on turn {i} that {rng.choice(VOCAB)} was slow"
                    out = _retry(kb.memory.add, text, user_id="reliability")
                    acked["memories"] += [r["id"] for r in out["results"]]
                elif kind == "own_page":
                    title, token = f"Note {tag} {i}", f"tok-{tag}-{i}"
                    _retry(kb.wiki.write_page, "note", title, f"Written by {tag}: {token}.\n")
                    acked["own_pages"].append([title, token])
                else:
                    title, token = f"Shared topic {rng.randrange(SHARED_TOPICS)}", f"tok-{tag}-{i}"
                    _retry(kb.wiki.write_page, "topic", title, f"Last written by {tag}: {token}.\n")
                    acked["shared_pages"].append([title, token])
            except StoreBusy:
                busy += 1
            except Exception:  # noqa: BLE001 - the ledger reports every unexpected exception type
                errors.append(f"{kind} {i}: {traceback.format_exc(limit=3)}")
    Path(ledger).write_text(json.dumps({"tag": tag, "acked": acked, "errors": errors, "busy": busy}),
                            encoding="utf-8")
    return 0


def reader(home: str, stopfile: str, ledger: str) -> int:
    """Reads of every face in a loop; every failure (NotFound excepted) is recorded."""
    reads = 0
    failures: list[str] = []
    stop = Path(stopfile)
    with graphmem.open(home, config=CONFIG) as kb:
        while not stop.exists():
            for name, call in (("list_pages", lambda: kb.wiki.list_pages(limit=50)),
                               ("search", lambda: kb.search("component 3 depends", k=5)),
                               ("memory.search", lambda: kb.memory.search("slow", user_id="reliability", limit=5)),
                               ("wiki.search", lambda: kb.wiki.search_wiki("shared topic", k=5)),
                               ("read_page", lambda: kb.wiki.read_page("topic", "Shared topic 0"))):
                try:
                    call()
                except NotFound:
                    pass
                except Exception as exc:  # noqa: BLE001 - a read that fails is what this worker measures
                    failures.append(f"{name}: {type(exc).__name__}: {exc}")
                reads += 1
    Path(ledger).write_text(json.dumps({"reads": reads, "failures": failures}), encoding="utf-8")
    return 0


if __name__ == "__main__":
    role, *rest = sys.argv[1:]
    if role == "mixed":
        sys.exit(mixed(rest[0], rest[1], int(rest[2]), int(rest[3]), rest[4]))
    if role == "reader":
        sys.exit(reader(rest[0], rest[1], rest[2]))
    sys.exit(f"unknown role {role!r}")

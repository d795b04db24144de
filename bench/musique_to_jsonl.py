"""Turn HippoRAG's MuSiQue OpenIE file into graphmem JSONL with agent-supplied extraction.

Each corpus passage becomes one record ``{id, title, text, entities, relations}`` (the title a
field of its own, as a user's JSONL holds it, never glued into the text) where the
entities are GPT-3.5's ``extracted_entities`` plus every triple endpoint, and the relations are
its ``extracted_triples`` (confidence 1.0; the supporting text is the sentence that holds both
ends when there is one). Malformed triples (not three non-empty strings) are skipped and
counted, as the data README asks.

    python bench/musique_to_jsonl.py --data ../shared/data --out bench/results/musique.jsonl
    graphmem --home /tmp/musique ingest bench/results/musique.jsonl
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

OPENIE = "musique/openie_musique_train_results_ner_gpt-3.5-turbo-1106_1890.json"
_SENT = re.compile(r"[^.!?]+(?:[.!?]+|$)")


def passage_text(doc: dict[str, Any]) -> str:
    """The passage text alone: the title travels as the record's ``title`` field (as users ingest it)."""
    return str(doc["text"])


def _sentence_with(text: str, a: str, b: str) -> str:
    low_a, low_b = a.lower(), b.lower()
    for m in _SENT.finditer(text):
        s = m.group(0).strip()
        if low_a in s.lower() and low_b in s.lower():
            return s
    return ""


def convert(openie: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Records for graphmem plus counts (triples kept / malformed)."""
    records: list[dict[str, Any]] = []
    counts = {"passages": 0, "triples": 0, "malformed_triples": 0, "entities": 0}
    for i, doc in enumerate(openie["docs"]):
        text = passage_text(doc)
        names: dict[str, str] = {}
        for e in doc.get("extracted_entities") or []:
            if isinstance(e, str) and e.strip():
                names.setdefault(e.strip().lower(), e.strip())
        rels = []
        for t in doc.get("extracted_triples") or []:
            if not (isinstance(t, list) and len(t) == 3 and all(isinstance(x, str) and x.strip() for x in t)):
                counts["malformed_triples"] += 1
                continue
            s, r, o = (x.strip() for x in t)
            if s.lower() == o.lower():
                counts["malformed_triples"] += 1
                continue
            names.setdefault(s.lower(), s)
            names.setdefault(o.lower(), o)
            rels.append({"source": s, "target": o, "type": r, "confidence": 1.0,
                         "supporting_text": _sentence_with(text, s, o)})
        entities = [{"name": n, "type": "concept", "supporting_text": n if n.lower() in text.lower() else ""}
                    for n in names.values()]
        counts["passages"] += 1
        counts["triples"] += len(rels)
        counts["entities"] += len(entities)
        records.append({"id": f"musique-{i:04d}", "title": doc["title"], "text": text,
                        "metadata": {"corpus_index": i}, "entities": entities, "relations": rels})
    return records, counts


def main(argv: list[str] | None = None) -> int:
    """Write the JSONL file and print the counts."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="../shared/data", help="folder holding musique/ (default ../shared/data)")
    ap.add_argument("--out", default="bench/results/musique.jsonl")
    args = ap.parse_args(argv)
    path = Path(args.data) / OPENIE
    if not path.exists():
        print(f"error: {path} not found; pass --data pointing at the shared data folder", file=sys.stderr)
        return 2
    records, counts = convert(json.loads(path.read_text(encoding="utf-8")))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as fh:
        for r in records:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(json.dumps({**counts, "out": str(out)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

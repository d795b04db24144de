"""2WikiMultihopQA development questions over HippoRAG 2's 6,119-passage corpus (../shared/data/2wiki).

Gold passages are the corpus entries whose title is in a question's ``supporting_facts`` (titles are
unique in this corpus; see its README). Loaded as users would hold it: ``{id, title, text}`` records.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CORPUS = "2wiki/2wikimultihopqa_corpus.json"
QUESTIONS = "2wiki/2wikimultihopqa_dev100.json"


def load_2wiki(data: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[set[str]]]:
    """``(records, questions, gold)``: corpus records ``{id, title, text}``, the questions
    ``{id, question, type}`` in file order, and each question's gold record ids."""
    corpus = json.loads((data / CORPUS).read_text(encoding="utf-8"))
    raw = json.loads((data / QUESTIONS).read_text(encoding="utf-8"))
    records = [{"id": f"2wiki-{i:04d}", "title": d["title"], "text": d["text"]} for i, d in enumerate(corpus)]
    by_title = {r["title"]: r["id"] for r in records}
    if len(by_title) != len(records):
        raise SystemExit(f"{CORPUS}: titles are not unique; gold passages cannot be matched on title")
    questions, gold = [], []
    for q in raw:
        titles = {t for t, _ in q["supporting_facts"]}
        missing = sorted(t for t in titles if t not in by_title)
        if missing:
            raise SystemExit(f"question {q['_id']}: gold passage(s) {missing} not in the corpus")
        questions.append({"id": q["_id"], "question": q["question"], "type": q["type"]})
        gold.append({by_title[t] for t in titles})
    return records, questions, gold

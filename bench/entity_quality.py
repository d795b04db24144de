"""Precision and recall of the offline extractor's entities against GPT-3.5's, on MuSiQue's 1,890 passages.

The reference is the ``extracted_entities`` that HippoRAG published with GPT-3.5-turbo-1106
(``musique/openie_*.json``; GPT-3.5 read ``title\\ntext``, so titles are among them). The
offline extractor reads each passage as users ingest it: ``{title, text}`` as separate fields
(condition ``fields``); the condition ``glued`` gives it ``title\\ntext`` as one text, as the
old benchmarks did, to show what the title line does.

Matching, per passage, over the sets of distinct names:

* **strict**: equal after folding case and punctuation (every run of non-alphanumeric characters
  becomes one space; "U.S." == "u s", "Nolan's" != "Nolan");
* **lenient**: strict, or after also dropping a leading "the" and a trailing plural "s", one
  name's words are a contiguous run of the other's ("Christopher Nolan" ~ "director Christopher
  Nolan"; a one-word name matches only a one-word name, so "first" never matches "First Army").

Precision = matched extracted names / extracted names; recall = matched reference names /
reference names; both micro-averaged over passages. Also: entities per passage, the share of
entities (by normalised name) that occur in one passage only, the strict precision of the
*bridging* entities (those in two or more passages: the only ones a graph walk can cross; each
of their passage mentions counts once), and the largest hubs.

    python bench/entity_quality.py --data ../shared/data
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from graphmem.ingest.extractors.base import SourceDocument  # noqa: E402
from graphmem.ingest.extractors.offline import OfflineExtractor  # noqa: E402
from musique_to_jsonl import OPENIE  # noqa: E402

_NON_ALNUM = re.compile(r"[^\w]+|_+")


def fold(name: str) -> str:
    """Case- and punctuation-folded form of a name (the strict matching key)."""
    return " ".join(_NON_ALNUM.sub(" ", name.casefold()).split())


def _lenient_words(key: str) -> tuple[str, ...]:
    words = key.split()
    if len(words) > 1 and words[0] == "the":
        words = words[1:]
    if words and len(words[-1]) > 3 and words[-1].endswith("s") and not words[-1].endswith("ss"):
        words[-1] = words[-1][:-1]
    return tuple(words)


def _contains(big: tuple[str, ...], small: tuple[str, ...]) -> bool:
    if not small or len(small) > len(big) or (len(small) == 1) != (len(big) == 1):
        return False
    return any(big[i:i + len(small)] == small for i in range(len(big) - len(small) + 1))


def lenient_match(a: str, b: str) -> bool:
    """Do two folded names name the same thing by the lenient rule?"""
    if a == b:
        return True
    wa, wb = _lenient_words(a), _lenient_words(b)
    return wa == wb or _contains(wa, wb) or _contains(wb, wa)


def score(pred: set[str], ref: set[str]) -> dict[str, int]:
    """Matched counts of one passage under both rules (inputs are folded names)."""
    strict = pred & ref
    lp = sum(1 for p in pred if p in ref or any(lenient_match(p, r) for r in ref))
    lr = sum(1 for r in ref if r in pred or any(lenient_match(p, r) for p in pred))
    return {"pred": len(pred), "ref": len(ref), "strict": len(strict), "lenient_pred": lp, "lenient_ref": lr}


def evaluate(docs: list[dict[str, Any]], condition: str) -> dict[str, Any]:
    """Extract every passage under ``condition`` ('fields' or 'glued') and score it against the reference."""
    ex = OfflineExtractor()
    totals: Counter[str] = Counter()
    passages_of: Counter[str] = Counter()
    matched_in: Counter[str] = Counter()  # per name: passages where it matched the reference (strict)
    t = time.perf_counter()
    for i, d in enumerate(docs):
        text = d["text"] if condition == "fields" else f"{d['title']}\n{d['text']}"
        out = ex.extract(SourceDocument(f"musique-{i:04d}", d["title"], "", text))
        pred = {k for k in (fold(e.name) for e in out.entities) if k}
        ref = {k for k in (fold(e) for e in d.get("extracted_entities") or [] if isinstance(e, str)) if k}
        totals.update(score(pred, ref))
        passages_of.update(pred)
        matched_in.update(pred & ref)
    elapsed = time.perf_counter() - t
    n = len(docs)
    return {
        "condition": condition,
        "passages": n,
        "entities_per_passage": round(totals["pred"] / n, 2),
        "reference_per_passage": round(totals["ref"] / n, 2),
        "strict_precision": round(100 * totals["strict"] / max(totals["pred"], 1), 1),
        "strict_recall": round(100 * totals["strict"] / max(totals["ref"], 1), 1),
        "lenient_precision": round(100 * totals["lenient_pred"] / max(totals["pred"], 1), 1),
        "lenient_recall": round(100 * totals["lenient_ref"] / max(totals["ref"], 1), 1),
        "distinct_entities": len(passages_of),
        "single_passage_share": round(100 * sum(1 for c in passages_of.values() if c == 1) / max(len(passages_of), 1),
                                      1),
        # the entities that can bridge passages (in two or more): how many of their mentions GPT-3.5 also lists
        "bridging_mentions": sum(c for c in passages_of.values() if c > 1),
        "bridging_strict_precision": round(100 * sum(matched_in[k] for k, c in passages_of.items() if c > 1)
                                           / max(sum(c for c in passages_of.values() if c > 1), 1), 1),
        "top_hubs": passages_of.most_common(15),
        "extract_s": round(elapsed, 1),
    }


def main(argv: list[str] | None = None) -> int:
    """Score both conditions, print a table, write JSON."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="../shared/data", type=Path)
    ap.add_argument("--out", default="bench/results/entity_quality.json", type=Path)
    args = ap.parse_args(argv)
    path = args.data / OPENIE
    if not path.exists():
        print(f"error: {path} not found; pass --data pointing at the shared data folder", file=sys.stderr)
        return 2
    docs = json.loads(path.read_text(encoding="utf-8"))["docs"]
    results = [evaluate(docs, c) for c in ("fields", "glued")]
    print("| condition | entities / passage | strict P | strict R | lenient P | lenient R | in one passage only "
          "| strict P of bridging entities | top hubs (passages) |\n|---|---|---|---|---|---|---|---|---|")
    for r in results:
        hubs = ", ".join(f"{n} ({c})" for n, c in r["top_hubs"][:8])
        print(f"| {r['condition']} | {r['entities_per_passage']} | {r['strict_precision']} | {r['strict_recall']} "
              f"| {r['lenient_precision']} | {r['lenient_recall']} | {r['single_passage_share']}% "
              f"| {r['bridging_strict_precision']} | {hubs} |")
    print(f"reference: {results[0]['reference_per_passage']} GPT-3.5 entities per passage")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2), encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

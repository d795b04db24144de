"""Evidence recall of memory search on LoCoMo (long multi-session conversations).

Two memory stores are built per embedding model, through ``kb.memory.add`` as a user would:

* ``turns``: every dialogue turn is a memory ("Speaker: text", plus the caption of a shared
  image when there is one): user = the conversation's sample_id, run = the session,
  timestamp = the session's date, metadata = {dia_id};
* ``observations``: LoCoMo's ``observation`` facts, each citing the dia_id(s) it comes from.

Every question is searched within its conversation (user_id). Recall@k: the share of the
question's evidence dia_ids (regex ``D\\d+:\\d+``, which also reads malformed entries such as
"D8:6; D9:17") covered by the top k memories, averaged. Methods, side by side in ONE run on the
same store: BM25 (FTS5 over the conversation's memories), dense (cosine), RRF(BM25, dense) and
graphmem's memory search with the default configuration, BFS and PPR expansion.

Category 5 (adversarial: the question attributes something to the wrong speaker, or asks for
something never said) is reported in its own column and left out of the headline "overall"
(categories 1-4), as LoCoMo evaluations usually do; "all" includes it.

    python bench/locomo.py --data ../shared/data/locomo/locomo-dev.json                 # static model
    python bench/locomo.py --data ../shared/data/locomo/locomo-dev.json --models static minilm

``--set seed_top_k=20`` (repeatable) overrides memory.context_graph.retrieval keys for the
graphmem rows (for exploring; the defaults are what the table reports without it). To compare two
versions of the code: ``PYTHONHASHSEED=0 PYTHONPATH=<their src> python bench/locomo.py
--deterministic --rankings FILE.jsonl`` under each, then diff the files (seeded memory ids and a
frozen clock make rankings repeatable); ``cpu_p50_ms`` in the JSON is CPU time per search.
Prints tables and writes JSON (default bench/results/locomo.json).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import graphmem  # noqa: E402
from common import model_spec  # noqa: E402
from graphmem.memory.dense import dense_top  # noqa: E402
from graphmem.retrieval.fusion import rrf  # noqa: E402

KS = (5, 10, 20)
EVIDENCE = re.compile(r"D\d+:\d+")
RRF_DEPTH = 50  # each list RRF fuses


def session_date(text: str) -> datetime:
    """'1:56 pm on 8 May, 2023' -> an aware datetime."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc)


def sessions(sample: dict[str, Any]) -> list[tuple[int, datetime, list[dict[str, Any]]]]:
    """``(number, date, turns)`` of every session, in order."""
    conv = sample["conversation"]
    out = []
    for key, turns in conv.items():
        m = re.fullmatch(r"session_(\d+)", key)
        if m and isinstance(turns, list) and turns:
            out.append((int(m.group(1)), session_date(conv[f"{key}_date_time"]), turns))
    return sorted(out, key=lambda s: s[0])


def turn_text(turn: dict[str, Any]) -> str:
    text = f"{turn['speaker']}: {turn['text']}"
    if turn.get("blip_caption"):
        text += f" [shares {turn['blip_caption']}]"
    return text


def memories(sample: dict[str, Any], variant: str) -> list[tuple[int, datetime, list[str], str]]:
    """``(session, date, cited dia_ids, text)`` of the memories of one conversation, in order."""
    out: list[tuple[int, datetime, list[str], str]] = []
    if variant == "turns":
        for n, date, turns in sessions(sample):
            out += [(n, date, [t["dia_id"]], turn_text(t)) for t in turns]
        return out
    dates = {n: d for n, d, _ in sessions(sample)}
    for key, by_speaker in sample["observation"].items():
        n = int(re.fullmatch(r"session_(\d+)_observation", key).group(1))  # type: ignore[union-attr]
        for facts in by_speaker.values():
            for text, cites in facts:
                ids = EVIDENCE.findall(json.dumps(cites))
                out.append((n, dates[n], ids, text))
    return sorted(out, key=lambda m: m[0])


CLOCK: list[Callable[[], datetime] | None] = [None]  # --deterministic: a frozen clock


def make_deterministic() -> None:
    """Seeded memory ids and a frozen clock, so that two versions of the code can be compared
    ranking by ranking: ties are broken by memory id (random uuid4 otherwise) and relevance decays
    with the clock."""
    rng = random.Random(0)
    uuid.uuid4 = lambda: uuid.UUID(int=rng.getrandbits(128), version=4)
    frozen = datetime(2026, 1, 1, tzinfo=timezone.utc)
    CLOCK[0] = lambda: frozen


def build(home: Path, spec: str, data: list[dict[str, Any]], variant: str
          ) -> tuple[graphmem.KnowledgeBase, dict[str, list[str]], float, int]:
    """The store of one variant; memory id -> cited dia_ids; seconds; memory count."""
    kb = graphmem.open(home, config={"embeddings": {"model": spec}}, clock=CLOCK[0])
    cites: dict[str, list[str]] = {}
    t = time.perf_counter()
    for sample in data:
        for n, date, ids, text in memories(sample, variant):
            out = kb.memory.add(text, user_id=sample["sample_id"], run_id=f"session_{n}", timestamp=date,
                                metadata={"dia_id": ids[0] if ids else None, "cites": ids})
            cites[out["results"][0]["id"]] = ids
    return kb, cites, time.perf_counter() - t, len(cites)


def open_with(home: Path, spec: str, retrieval: dict[str, Any]) -> graphmem.KnowledgeBase:
    cfg: dict[str, Any] = {"embeddings": {"model": spec}}
    if retrieval:
        cfg["memory"] = {"context_graph": {"retrieval": retrieval}}
    return graphmem.open(home, config=cfg, clock=CLOCK[0])


def method_runs(kb: graphmem.KnowledgeBase, tuned: graphmem.KnowledgeBase,
                record: Callable[[str, str, list[dict[str, Any]]], None] | None = None) -> list[tuple[str, Any]]:
    """(label, fn(question, user) -> ranked memory ids) for every method; ``record(method,
    question, results)`` sees every graphmem result list as it is ranked."""
    store, k = kb.store, max(KS)
    filters = lambda user: {"user_id": user}  # noqa: E731

    def bm25(q: str, user: str) -> list[str]:
        return [i for i, _ in store.search_memories_fts(q, filters(user), False, k)]

    def dense(q: str, user: str) -> list[str]:
        return [i for i, _ in dense_top(kb.ctx, kb.embed_query(q), filters(user), False, k)]

    def fused(q: str, user: str) -> list[str]:
        lists = [[i for i, _ in store.search_memories_fts(q, filters(user), False, RRF_DEPTH)],
                 [i for i, _ in dense_top(kb.ctx, kb.embed_query(q), filters(user), False, RRF_DEPTH)]]
        return [i for i, _ in sorted(rrf(lists).items(), key=lambda kv: (-kv[1], kv[0]))][:k]

    def gm(strategy: str) -> Any:
        def run(q: str, user: str) -> list[str]:
            results = tuned.memory.search(q, user_id=user, limit=k, strategy=strategy)["results"]
            if record is not None:
                record(strategy, q, results)
            return [r["id"] for r in results]

        return run

    return [("BM25", bm25), ("dense", dense), ("RRF(BM25, dense)", fused),
            ("graphmem BFS", gm("bfs")), ("graphmem PPR", gm("ppr"))]


def evaluate(fn: Any, data: list[dict[str, Any]], cites: dict[str, list[str]]
             ) -> tuple[dict[str, Any], list[float], list[float]]:
    """Recall@k per category, overall (1-4) and all; per-query latencies and CPU times (ms; CPU
    time is what a before/after comparison on a busy machine can use)."""
    sums: dict[str, dict[int, float]] = {}
    counts: dict[str, int] = {}
    lat: list[float] = []
    cpu: list[float] = []
    for sample in data:
        for q in sample["qa"]:
            gold = set(EVIDENCE.findall(json.dumps(q.get("evidence", []))))
            if not gold:
                continue
            t, c = time.perf_counter(), time.process_time()
            ranked = fn(q["question"], sample["sample_id"])
            lat.append((time.perf_counter() - t) * 1000)
            cpu.append((time.process_time() - c) * 1000)
            groups = [f"cat{q['category']}", "all"] + (["overall"] if q["category"] != 5 else [])
            for k in KS:
                covered = {d for mid in ranked[:k] for d in cites.get(mid, ())}
                r = len(gold & covered) / len(gold)
                for g in groups:
                    sums.setdefault(g, {kk: 0.0 for kk in KS})[k] += r
            for g in groups:
                counts[g] = counts.get(g, 0) + 1
    out = {g: {f"R@{k}": round(100 * sums[g][k] / counts[g], 1) for k in KS} | {"n": counts[g]} for g in sums}
    return out, lat, cpu


def main(argv: list[str] | None = None) -> int:
    """Build, run every method, print the tables, write JSON."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="../shared/data/locomo/locomo-dev.json", type=Path)
    ap.add_argument("--models", nargs="+", default=["static"])
    ap.add_argument("--static-model", default="../shared/models/minilm-static-256", type=Path)
    ap.add_argument("--variants", nargs="+", default=["turns", "observations"])
    ap.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                    help="memory.context_graph.retrieval override for the graphmem rows")
    ap.add_argument("--out", default="bench/results/locomo.json", type=Path)
    ap.add_argument("--deterministic", action="store_true",
                    help="seeded memory ids and a frozen clock (with PYTHONHASHSEED=0: repeatable rankings)")
    ap.add_argument("--rankings", type=Path, default=None, metavar="JSONL",
                    help="also write the graphmem rows' ranked results (cited turns, score) per question, to "
                         "compare two versions of the code: run it under each (PYTHONPATH) and diff the files")
    args = ap.parse_args(argv)
    if args.deterministic:
        make_deterministic()
    rankings: list[dict[str, Any]] = []
    data = json.loads(args.data.read_text(encoding="utf-8"))
    retrieval: dict[str, Any] = {}
    for item in args.overrides:
        key, _, value = item.partition("=")
        retrieval[key] = json.loads(value) if value[:1].isdigit() or value in ("true", "false") else value
    print(f"LoCoMo: {len(data)} conversations, {sum(len(s['qa']) for s in data)} questions"
          + (f"; graphmem overrides {retrieval}" if retrieval else "; graphmem default configuration"))
    rows: list[dict[str, Any]] = []
    for model in args.models:
        spec = model_spec(model, args.static_model)
        if spec is None:
            print(f"model {model}: not installed here, skipped")
            continue
        for variant in args.variants:
            with tempfile.TemporaryDirectory() as tmp:
                kb, cites, secs, n = build(Path(tmp) / "kb", spec, data, variant)
                stats = kb.memory.stats()
                tuned = open_with(Path(tmp) / "kb", spec, retrieval)
                print(f"\n[{model} / {variant}] {n} memories added in {secs:.1f} s "
                      f"({1000 * secs / n:.1f} ms each); edges {stats['edge_types']}")
                def record(strategy: str, q: str, results: list[dict[str, Any]], model: str = model,
                           variant: str = variant, cites: dict[str, list[str]] = cites) -> None:
                    # memory ids are random: a result is named by the dialogue turns it cites
                    rankings.append({"model": model, "variant": variant, "method": strategy, "query": q,
                                     "hits": [[cites.get(r["id"]), r["score"]] for r in results]})

                for label, fn in method_runs(kb, tuned, record if args.rankings else None):
                    res, lat, cpu = evaluate(fn, data, cites)
                    row = {"model": model, "variant": variant, "method": label, "results": res,
                           "p50_ms": round(statistics.median(lat), 2), "cpu_p50_ms": round(statistics.median(cpu), 3)}
                    rows.append(row)
                    o = res["overall"]
                    print(f"  {label:<18} overall R@5 {o['R@5']:5.1f}  R@10 {o['R@10']:5.1f}  R@20 {o['R@20']:5.1f}"
                          f"   p50 {row['p50_ms']:.1f} ms")
                tuned.close()
                kb.close()
    cats = sorted({g for r in rows for g in r["results"] if g.startswith("cat")})
    for k in KS:
        print(f"\nRecall@{k} (%)\n\n| model | memories | method | overall (1-4) | "
              + " | ".join(cats) + " | all | x RRF |\n|---|---|---|---|" + "---|" * len(cats) + "---|---|")
        for row in rows:
            base = next(r for r in rows if r["model"] == row["model"] and r["variant"] == row["variant"]
                        and r["method"] == "RRF(BM25, dense)")
            res = row["results"]
            ratio = res['overall'][f'R@{k}'] / base['results']['overall'][f'R@{k}']
            print(f"| {row['model']} | {row['variant']} | {row['method']} | {res['overall'][f'R@{k}']} | "
                  + " | ".join(str(res[c][f"R@{k}"]) for c in cats)
                  + f" | {res['all'][f'R@{k}']} | {ratio:.2f} |")
    n_q = {c: rows[0]["results"][c]["n"] for c in [*cats, "overall", "all"]} if rows else {}
    print(f"\nquestions per group: {n_q}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"overrides": retrieval, "questions": n_q, "rows": rows}, indent=2),
                        encoding="utf-8")
    print(f"wrote {args.out}")
    if args.rankings:
        args.rankings.write_text("".join(json.dumps(r) + "\n" for r in rankings), encoding="utf-8")
        print(f"wrote {args.rankings} ({len(rankings)} rankings)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

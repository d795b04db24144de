"""The change feed and portability, measured side by side in one run.

1. Event append overhead on ingest: the same store-only ingest (agent-supplied entities and relations, no
   extractor, no embeddings, no wiki pages) with the events appended as usual, and with ``append_event``
   replaced by a no-op; runs alternate, and the least CPU time of each variant is compared (ratio = overhead /
   store-only time: on a shared machine the least CPU time is the one other processes disturbed least). A third
   variant also drops the replay log's triggers: what recording undo data for replay costs on top.
4. Replay time against the number of events undone, on histories of two lengths (it should follow the
   events undone, not the length of the history).
2. Subscribe latency: a writer commits one entity every ~10 ms; a subscriber (its own read connection,
   polling every 20 ms by default) records when each event reaches its callback; latency = callback time
   minus the moment the write returned (commit), p50 / p95.
3. Export / import throughput of the lossless JSONL format on the knowledge base of step 1.

    python bench/feed.py --docs 300 --runs 3
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import graphmem  # noqa: E402
from common import percentile  # noqa: E402
from graphmem.portability import export, import_jsonl  # noqa: E402

WORDS = ("cache", "queue", "ledger", "dispatch", "router", "shard", "replica", "index", "broker", "worker", "cluster",
         "gateway", "scheduler", "storage", "billing", "search", "session", "token", "metric", "alert")
CONFIG = {"embeddings": {"model": "none"}, "wiki": {"auto_pages": False}}


def documents(n: int, seed: int = 0) -> list[tuple[str, str, list[dict[str, Any]], list[dict[str, Any]]]]:
    """``n`` documents with 6 entities and 5 relations each, every one supported by a sentence."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        names = [f"{rng.choice(WORDS)} {rng.choice(WORDS)} {i % 97}-{j}" for j in range(6)]
        sentences = [f"The {a} depends on the {b}." for a, b in zip(names, names[1:])]
        text = " ".join(sentences) + " " + " ".join(f"{rng.choice(WORDS)}" for _ in range(120)) + "."
        ents = [{"name": n_, "type": "component", "supporting_text": s}
                for n_, s in zip(names, [*sentences, sentences[-1]])]
        rels = [{"source": a, "target": b, "type": "depends on", "confidence": 0.9, "supporting_text": s}
                for a, b, s in zip(names, names[1:], sentences)]
        out.append((f"doc-{i}", text, ents, rels))
    return out


def ingest(home: Path, docs: list[Any], events: bool, replay_log: bool = True) -> tuple[float, int]:
    """CPU seconds to ingest ``docs`` into a new knowledge base (``events=False``: append_event is a no-op;
    ``replay_log=False``: the replay log's triggers dropped)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kb = graphmem.open(home, config=CONFIG)
    if not events:
        kb.store.append_event = lambda *a, **k: 0  # type: ignore[method-assign]
    if not replay_log:
        conn = kb.store.conn  # type: ignore[attr-defined]  # the SQLite backend's connection (a bench only)
        for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'replay_%'"
                                    ).fetchall():
            conn.execute(f'DROP TRIGGER "{name}"')
    t0 = time.process_time()
    for doc_id, text, ents, rels in docs:
        kb.ingest_with_content(doc_id, doc_id, f"{doc_id}.txt", text, ents, rels)
    elapsed = time.process_time() - t0
    n_events = kb.store.last_event_id()
    kb.close()
    return elapsed, n_events


def subscribe_latency(home: Path, n: int, interval: float) -> list[float]:
    """Commit-to-callback latencies (seconds) of ``n`` writes."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kb = graphmem.open(home, config=CONFIG)
    committed: dict[str, float] = {}
    received: dict[str, float] = {}
    done = threading.Event()

    def on_event(event: Any) -> None:
        received[event.target] = time.perf_counter()
        if len(received) >= n:
            done.set()

    token = kb.events.subscribe(on_event, event_types=["node.added"])
    for i in range(n):
        node_id = kb.graph.add_node(f"latency probe {i}")
        committed[node_id] = time.perf_counter()
        time.sleep(interval)
    done.wait(30)
    kb.events.unsubscribe(token)
    kb.close()
    return [received[k] - committed[k] for k in committed if k in received]


def replay_times(home: Path, history: int, depths: list[int]) -> dict[int, float]:
    """Seconds to replay back ``depth`` events on a history of ``history`` events (entities and memories)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kb = graphmem.open(home, config=CONFIG)
        for i in range(history // 2):
            kb.graph.add_node(f"entity {i}", "component")
            kb.memory.add(f"memory number {i} about the {WORDS[i % len(WORDS)]}", user_id="u")
        last = kb.events.last_id()
        out = {}
        for depth in depths:
            t0 = time.perf_counter()
            with kb.events.replay(last - depth) as view:
                assert view.until == last - depth
            out[depth] = time.perf_counter() - t0
        kb.close()
    return out


def main(argv: list[str] | None = None) -> int:
    """Run, print the table, write JSON."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=300)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--writes", type=int, default=200)
    ap.add_argument("--interval", type=float, default=0.01)
    ap.add_argument("--histories", type=int, nargs="+", default=[2000, 8000])
    ap.add_argument("--depths", type=int, nargs="+", default=[10, 100, 1000])
    ap.add_argument("--out", default="bench/results/feed.json", type=Path)
    args = ap.parse_args(argv)
    docs = documents(args.docs)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        with_ev: list[float] = []
        without: list[float] = []
        bare: list[float] = []
        n_events = 0
        ingest(root / "warmup", docs[: max(1, len(docs) // 5)], True)  # imports, caches: paid by neither side
        for r in range(args.runs):
            variants = [(True, True), (False, True), (False, False)]
            for events, log in (variants if r % 2 == 0 else variants[::-1]):
                secs, count = ingest(root / f"ingest-{r}-{events}-{log}", docs, events, log)
                (with_ev if events else without if log else bare).append(secs)
                n_events = max(n_events, count)
        t_with, t_without, t_bare = min(with_ev), min(without), min(bare)
        overhead = (t_with - t_without) / t_without
        log_overhead = (t_without - t_bare) / t_bare
        replays = {h: replay_times(root / f"replay-{h}", h, args.depths) for h in args.histories}
        lat = subscribe_latency(root / "latency", args.writes, args.interval)
        src = root / "ingest-0-True-True"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            kb = graphmem.open(src, config=CONFIG)
            t0 = time.perf_counter()
            out = export(kb.ctx, "jsonl", root / "kb.jsonl")
            t_export = time.perf_counter() - t0
            kb.close()
            rows = sum(v for k, v in out["counts"].items() if k != "files")
            size = (root / "kb.jsonl").stat().st_size
            fresh = graphmem.open(root / "imported", config=CONFIG)
            t0 = time.perf_counter()
            import_jsonl(fresh.ctx, root / "kb.jsonl")
            t_import = time.perf_counter() - t0
            fresh.close()
    result = {
        "docs": args.docs, "runs": args.runs, "events_per_ingest": n_events,
        "ingest_cpu_s_with_events": round(t_with, 4), "ingest_cpu_s_without_events": round(t_without, 4),
        "event_overhead_pct": round(100 * overhead, 2),
        "ingest_cpu_s_without_events_and_replay_log": round(t_bare, 4),
        "replay_log_overhead_pct": round(100 * log_overhead, 2),
        "replay_s": {str(h): {str(d): round(t, 4) for d, t in times.items()} for h, times in replays.items()},
        "subscribe_latency_ms": {"n": len(lat), "p50": round(1000 * percentile(lat, 50), 2),
                                 "p95": round(1000 * percentile(lat, 95), 2), "max": round(1000 * max(lat), 2)},
        "export": {"rows": rows, "bytes": size, "seconds": round(t_export, 4),
                   "rows_per_s": round(rows / t_export), "mb_per_s": round(size / t_export / 1e6, 2)},
        "import": {"rows": rows, "seconds": round(t_import, 4), "rows_per_s": round(rows / t_import)},
    }
    print(f"ingest {args.docs} docs ({n_events} events), least CPU time of {args.runs}: with events {t_with:.3f} s, "
          f"store only {t_without:.3f} s -> overhead {100 * overhead:+.1f} %")
    print(f"replay log on top: store only without it {t_bare:.3f} s -> {100 * log_overhead:+.1f} %")
    for h, times in replays.items():
        steps = ", ".join(f"{d} back {t * 1000:.0f} ms" for d, t in times.items())
        print(f"replay on a history of {h} events: {steps}")
    print(f"subscribe latency over {len(lat)} writes: p50 {result['subscribe_latency_ms']['p50']} ms, "
          f"p95 {result['subscribe_latency_ms']['p95']} ms")
    print(f"export jsonl: {rows} rows, {size / 1e6:.1f} MB in {t_export:.2f} s "
          f"({result['export']['rows_per_s']} rows/s); "
          f"import: {t_import:.2f} s ({result['import']['rows_per_s']} rows/s)")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Foundation benchmark: ingest scaling and query_with_evidence latency.

What it measures
----------------
The seed's scaling workload, on a fresh knowledge base in a temporary folder:

* N synthetic documents of about 1,500 characters, each with 10 entities and 12 relations
  in the seed's extraction format. Entity names come from a shared vocabulary (a few
  thousand two-word names built deterministically from word lists) drawn with Zipf-like
  popularity, so the same entities recur across many documents and the graph grows hubs.
  Every entity's and every relation's ``supporting_text`` is a sentence that really occurs
  in the document (e.g. "The thermal valve causes the backup pump."); filler sentences pad
  the document to about 1,500 characters. Relation types come from a small set (causes,
  depends on, uses, contains, affects, is part of, ...); confidences lie in [0.6, 1.0].
* Every ``kb.ingest_with_content(...)`` call is timed. Reported: total ingest seconds,
  documents per second, mean per-document ms of the first 10% and of the last 10% of the
  documents and their ratio (last / first; ~1.0 means ingest cost does not grow with the
  size of the knowledge base).
* Then 1 warm-up query (not counted) and 50 ``kb.query_with_evidence(q)`` calls whose text
  names vocabulary entities that were ingested (half picked by popularity, so hubs are
  asked about, half uniformly), each timed: p50 and p95 ms.
* ``kb.stats()``: size on disk (``size_bytes``, database + WAL) and counts of entities,
  edges and provenance records.

The corpus is a deterministic function of ``--seed``; the corpus for a smaller N is a prefix
of the corpus for a larger N.

How to run
----------
From the repository root, with the project's virtualenv active::

    python bench/ingest_query.py                      # N = 1000 and 10000
    python bench/ingest_query.py --n 1000 10000 --seed 0 --out bench/results/ingest_query.json
    python bench/ingest_query.py --n 100000 --n-max-seconds 900 --out bench/results/ingest_query_100k.json

Options: ``--config SECTION.KEY=VALUE`` (repeatable) overrides the knowledge base's config,
e.g. ``--config wiki.auto_pages=false --config embeddings.model=none`` to time the graph and
evidence store without the wiki pages written on every ingest; ``--keep DIR`` builds the
knowledge bases in ``DIR/n<N>`` and keeps them for profiling. The JSON records the load
average before and after each N (other processes on the machine skew timings) and a digest
of graphmem's sources (the code measured).

It prints an aligned table and writes JSON (default ``bench/results/ingest_query.json``,
rewritten after each N so partial results survive). N = 100,000 is supported but only run
when asked for. ``--n-max-seconds`` caps the ingest time of each N: past it, ingestion stops,
the run is marked ``truncated`` and the figures cover the documents ingested so far.
Standard library only (plus graphmem).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import random
import sqlite3
import sys
import tempfile
import time
from bisect import bisect_left
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import graphmem
from common import percentile

DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "ingest_query.json"

ENTITIES_PER_DOC = 10
RELATIONS_PER_DOC = 12
DOC_CHARS = 1500
N_QUERIES = 50

# -- vocabulary -----------------------------------------------------------------------------

QUALIFIERS = ["primary", "secondary", "auxiliary", "backup", "main", "remote", "local", "central", "external", "internal", "thermal", "hydraulic", "electric", "magnetic", "optical", "acoustic", "digital", "analog", "static", "dynamic", "upstream", "downstream", "inbound", "outbound", "northern", "southern", "eastern", "western", "legacy", "modern", "shared", "private", "public", "regional", "global", "nightly", "hourly", "adaptive", "passive", "active", "redundant", "spare", "manual", "automatic", "distributed", "embedded", "portable", "compact", "heavy", "light", "rapid", "slow", "high", "low"]

# Nouns grouped by the entity type they get (a name's type never changes).
NOUNS_BY_TYPE = {
    "component": """valve pump bearing gasket rotor stator gearbox piston impeller sensor
        actuator relay coupling flange manifold nozzle turbine compressor filter regulator""",
    "software": """scheduler cache parser compiler indexer crawler renderer router balancer
        gateway resolver dispatcher tokenizer serializer planner optimizer profiler""",
    "process": """rollout migration backup restore rebuild calibration inspection audit
        deployment shutdown startup failover reconciliation replication""",
    "resource": """memory bandwidth quota buffer pool budget reserve allowance capacity""",
    "system": """grid network cluster pipeline platform controller framework plant array""",
    "storage": """database ledger archive registry warehouse journal index catalog""",
    "issue": """leak outage fault crash overload drift stall corruption timeout""",
}

RELATION_PHRASES = ["causes", "depends on", "uses", "contains", "affects", "is part of",
                    "requires", "triggers", "reads from", "writes to"]

ENTITY_SENTENCES = [
    "The {name} is a {type} described in this report.",
    "Engineers inspected the {name} during the review.",
    "The {name} was mentioned by the on-call team.",
    "Records show the {name} in service since spring.",
    "The {name} appears in the maintenance log.",
]

FILLER_SUBJECTS = ["Operators", "Engineers", "Auditors", "Technicians", "Analysts", "Reviewers", "Planners", "Inspectors", "Contractors", "Supervisors"]
FILLER_VERBS = ["reviewed", "summarised", "checked", "archived", "discussed", "annotated", "compared", "verified", "circulated", "revised"]
FILLER_OBJECTS = ["the weekly notes", "the shift handover", "the quarterly figures", "the incident\n    timeline", "the draft procedure", "the site photographs", "the vendor letter", "the training\n    material", "the budget sheet", "the meeting minutes"]
FILLER_TAILS = ["before the deadline", "after the morning briefing", "with the regional office", "in\n    the shared folder", "during the night shift", "at the end of the month", "without further\n    comment", "for the steering group", "as agreed last week", "on the second floor"]

QUERY_TEMPLATES = [
    "Why does the {name} fail?",
    "What does the {name} depend on?",
    "What is affected by the {name}?",
    "What causes problems in the {name}?",
    "Explain how the {name} is used.",
]


def _clean(s: str) -> str:
    return " ".join(s.split())


class Corpus:
    """Deterministic synthetic documents with their extractions."""

    def __init__(self, seed: int, vocab_size: int, zipf_s: float) -> None:
        rng = random.Random(f"vocab:{seed}")
        names: list[tuple[str, str]] = []
        for etype, nouns in NOUNS_BY_TYPE.items():
            for noun in nouns.split():
                for q in QUALIFIERS:
                    names.append((f"{q} {noun}", etype))
        rng.shuffle(names)
        if vocab_size > len(names):
            raise SystemExit(f"--vocab at most {len(names)}")
        self.names = names[:vocab_size]  # index = popularity rank
        cum, total = [], 0.0
        for rank in range(vocab_size):
            total += 1.0 / (rank + 1) ** zipf_s
            cum.append(total)
        self.cum = cum
        self.total = total
        self.rng = random.Random(f"docs:{seed}")
        self.used: dict[int, int] = {}  # vocab index -> documents naming it

    def _zipf_index(self, rng: random.Random) -> int:
        return min(bisect_left(self.cum, rng.random() * self.total), len(self.cum) - 1)

    def document(self, i: int) -> tuple[str, str, str, str, list[dict[str, Any]], list[dict[str, Any]]]:
        rng = self.rng
        picked: list[int] = []
        while len(picked) < ENTITIES_PER_DOC:
            k = self._zipf_index(rng)
            if k not in picked:
                picked.append(k)
        for k in picked:
            self.used[k] = self.used.get(k, 0) + 1
        sentences: list[str] = []
        entities = []
        for k in picked:
            name, etype = self.names[k]
            sent = rng.choice(ENTITY_SENTENCES).format(name=name, type=etype)
            sentences.append(sent)
            entities.append({"name": name, "type": etype, "supporting_text": sent})
        relations = []
        pairs: set[tuple[int, int, str]] = set()
        while len(relations) < RELATIONS_PER_DOC:
            a, b = rng.sample(picked, 2)
            phrase = rng.choice(RELATION_PHRASES)
            if (a, b, phrase) in pairs:
                continue
            pairs.add((a, b, phrase))
            src, dst = self.names[a][0], self.names[b][0]
            sent = f"The {src} {phrase} the {dst}."
            sentences.append(sent)
            relations.append({"source": src, "target": dst, "type": phrase,
                              "confidence": round(rng.uniform(0.6, 1.0), 3), "supporting_text": sent})
        length = sum(len(s) + 1 for s in sentences)
        while length < DOC_CHARS - 40:
            f = (f"{rng.choice(FILLER_SUBJECTS)} {rng.choice(FILLER_VERBS)} {_clean(rng.choice(FILLER_OBJECTS))}"
                 f" {_clean(rng.choice(FILLER_TAILS))}.")
            sentences.append(f)
            length += len(f) + 1
        rng.shuffle(sentences)
        # A few paragraphs, so the chunker sees realistic boundaries.
        paras, step = [], 6
        for j in range(0, len(sentences), step):
            paras.append(" ".join(sentences[j : j + step]))
        content = "\n\n".join(paras)
        doc_id = f"doc_{i:06d}"
        # Titles start like real ones do, with varied words (wiki index shards go by first letter).
        title = f"{entities[0]['name'].capitalize()} report {i}"
        return doc_id, title, f"bench://ingest_query/{doc_id}", content, entities, relations

    def queries(self, n: int) -> list[str]:
        """``n`` queries naming ingested entities: even ones by popularity, odd ones uniform."""
        rng = random.Random(f"queries:{len(self.used)}:{sum(self.used.values())}")
        used = sorted(self.used)
        out = []
        for i in range(n):
            if i % 2 == 0:
                k = self._zipf_index(rng)
                while k not in self.used:
                    k = self._zipf_index(rng)
            else:
                k = rng.choice(used)
            out.append(QUERY_TEMPLATES[i % len(QUERY_TEMPLATES)].format(name=self.names[k][0]))
        return out


# -- measurement ----------------------------------------------------------------------------

def _loadavg() -> list[float] | None:
    """1/5/15-minute load averages (other processes competing for the cores skew timings)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def _cpu_summary(ingest: list[float], query: list[float]) -> dict[str, Any]:
    """The same figures from process CPU time: less skewed when other processes compete for
    the cores (it leaves out time spent waiting for a core, and for I/O)."""
    tenth = max(len(ingest) // 10, 1)
    first, last = mean(ingest[:tenth]), mean(ingest[-tenth:])
    return {
        "ingest_total_s": round(sum(ingest) / 1000.0, 3),
        "ingest_ms_first10_mean": round(first, 3),
        "ingest_ms_last10_mean": round(last, 3),
        "ingest_ratio_last_first": round(last / first, 3) if first else None,
        "ingest_ms_decile_means": [round(mean(ingest[j * len(ingest) // 10 : (j + 1) * len(ingest) // 10]), 3)
                                   for j in range(10)],
        "query_ms_p50": round(percentile(query, 50), 3),
        "query_ms_p95": round(percentile(query, 95), 3),
    }


def run_one(n: int, args: argparse.Namespace) -> dict[str, Any]:
    corpus = Corpus(args.seed, args.vocab, args.zipf)
    load_start = _loadavg()
    with tempfile.TemporaryDirectory(prefix=f"graphmem-bench-{n}-", dir=args.tmpdir) as tmp:
        home = Path(tmp) / "kb"
        if args.keep:
            home = args.keep / f"n{n}"
            if home.exists():
                raise SystemExit(f"--keep: {home} already exists; remove it or pick another folder")
        kb = graphmem.open(home, config=args.config_overrides or None)
        try:
            ingest_ms: list[float] = []
            ingest_cpu_ms: list[float] = []
            warnings = nodes_added = edges_added = 0
            truncated = False
            spent = 0.0
            report_every = max(n // 10, 1)
            wall0 = time.perf_counter()
            for i in range(n):
                doc_id, title, source, content, entities, relations = corpus.document(i)
                c0, t0 = time.process_time(), time.perf_counter()
                res = kb.ingest_with_content(doc_id, title, source, content, entities, relations)
                dt = time.perf_counter() - t0
                ingest_cpu_ms.append((time.process_time() - c0) * 1000.0)
                spent += dt
                ingest_ms.append(dt * 1000.0)
                warnings += len(res["warnings"])
                nodes_added += res["nodes_added"]
                edges_added += res["edges_added"]
                if (i + 1) % report_every == 0:
                    print(f"  N={n}: {i + 1} docs, {spent:.1f} s ingest, last doc {dt * 1000:.2f} ms",
                          file=sys.stderr, flush=True)
                if args.n_max_seconds and spent > args.n_max_seconds and i + 1 < n:
                    truncated = True
                    print(f"  N={n}: stopping after {i + 1} docs ({spent:.1f} s > --n-max-seconds "
                          f"{args.n_max_seconds:g})", file=sys.stderr, flush=True)
                    break
            wall = time.perf_counter() - wall0
            done = len(ingest_ms)
            tenth = max(done // 10, 1)
            first, last = mean(ingest_ms[:tenth]), mean(ingest_ms[-tenth:])
            deciles = [round(mean(ingest_ms[j * done // 10 : (j + 1) * done // 10]), 3) for j in range(10)]
            percents = [round(mean(ingest_ms[j * done // 100 : (j + 1) * done // 100]), 3)
                        for j in range(100)] if done >= 100 else []

            queries = corpus.queries(N_QUERIES + 1)
            kb.query_with_evidence(queries[0])  # warm-up, not counted
            query_ms: list[float] = []
            query_cpu_ms: list[float] = []
            per_query = []
            for q in queries[1:]:
                c0, t0 = time.process_time(), time.perf_counter()
                out = kb.query_with_evidence(q)
                dt = (time.perf_counter() - t0) * 1000.0
                query_cpu_ms.append((time.process_time() - c0) * 1000.0)
                query_ms.append(dt)
                per_query.append({
                    "query": q, "ms": round(dt, 3), "nodes": len(out["subgraph"]["nodes"]),
                    "edges": len(out["subgraph"]["edges"]), "documents": len(out["supporting_documents"]),
                })
            stats = kb.stats()
        finally:
            kb.close()
    return {
        "n": n,
        "kb_home": str(home) if args.keep else None,
        "loadavg_start": load_start,
        "loadavg_end": _loadavg(),
        "n_ingested": done,
        "truncated": truncated,
        "ingest_total_s": round(spent, 3),
        "ingest_wall_s": round(wall, 3),
        "docs_per_s": round(done / spent, 2) if spent else None,
        "ingest_ms_mean": round(mean(ingest_ms), 3),
        "ingest_ms_p50": round(percentile(ingest_ms, 50), 3),
        "ingest_ms_p95": round(percentile(ingest_ms, 95), 3),
        "ingest_ms_max": round(max(ingest_ms), 3),
        "ingest_ms_first10_mean": round(first, 3),
        "ingest_ms_last10_mean": round(last, 3),
        "ingest_ratio_last_first": round(last / first, 3),
        "ingest_ms_decile_means": deciles,
        "ingest_ms_percentile_bucket_means": percents,
        "ingest_warnings": warnings,
        "nodes_added": nodes_added,
        "edges_added": edges_added,
        "cpu": _cpu_summary(ingest_cpu_ms, query_cpu_ms),
        "query_count": len(query_ms),
        "query_ms_p50": round(percentile(query_ms, 50), 3),
        "query_ms_p95": round(percentile(query_ms, 95), 3),
        "query_ms_mean": round(mean(query_ms), 3),
        "query_ms_max": round(max(query_ms), 3),
        "queries": per_query,
        "size_bytes": stats["size_bytes"],
        "size_mb": round(stats["size_bytes"] / 1e6, 2),
        "documents": stats["documents"],
        "chunks": stats["chunks"],
        "entities": stats["entities"],
        "edges": stats["edges"],
        "provenance": stats["provenance"],
        "events": stats["events"],
    }


COLUMNS = [
    ("N", "n_ingested", "{:d}"),
    ("ingest s", "ingest_total_s", "{:.1f}"),
    ("docs/s", "docs_per_s", "{:.1f}"),
    ("first10% ms", "ingest_ms_first10_mean", "{:.2f}"),
    ("last10% ms", "ingest_ms_last10_mean", "{:.2f}"),
    ("last/first", "ingest_ratio_last_first", "{:.2f}"),
    ("q p50 ms", "query_ms_p50", "{:.1f}"),
    ("q p95 ms", "query_ms_p95", "{:.1f}"),
    ("size MB", "size_mb", "{:.1f}"),
    ("entities", "entities", "{:d}"),
    ("edges", "edges", "{:d}"),
    ("provenance", "provenance", "{:d}"),
]


CPU_COLUMNS = [
    ("N", "n_ingested", "{:d}"),
    ("cpu ingest s", "cpu.ingest_total_s", "{:.1f}"),
    ("cpu first10% ms", "cpu.ingest_ms_first10_mean", "{:.2f}"),
    ("cpu last10% ms", "cpu.ingest_ms_last10_mean", "{:.2f}"),
    ("last/first", "cpu.ingest_ratio_last_first", "{:.2f}"),
    ("cpu q p50 ms", "cpu.query_ms_p50", "{:.1f}"),
    ("cpu q p95 ms", "cpu.query_ms_p95", "{:.1f}"),
]


def _get(r: dict[str, Any], key: str) -> Any:
    for part in key.split("."):
        r = r[part]
    return r


def table(runs: list[dict[str, Any]], columns: list[tuple[str, str, str]] = COLUMNS) -> str:
    rows = [[h for h, _, _ in columns]]
    for r in runs:
        cells = [fmt.format(_get(r, key)) for _, key, fmt in columns]
        if r.get("truncated"):
            cells[0] += "*"
        rows.append(cells)
    widths = [max(len(row[j]) for row in rows) for j in range(len(columns))]
    lines = ["  ".join(c.rjust(w) for c, w in zip(row, widths)) for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    if any(r.get("truncated") for r in runs):
        lines.append("* truncated by --n-max-seconds")
    return "\n".join(lines)


def source_digest() -> str | None:
    """SHA-256 over graphmem's Python sources, to tell which code a result was measured on."""
    root = Path(graphmem.__file__).resolve().parent
    h = hashlib.sha256()
    files = sorted(root.rglob("*.py"))
    for f in files:
        h.update(str(f.relative_to(root)).encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:16] if files else None


def machine() -> dict[str, Any]:
    return {
        "nproc": os.cpu_count(),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "sqlite": sqlite3.sqlite_version,
        "graphmem": getattr(graphmem, "__version__", None),
        "graphmem_source_sha256": source_digest(),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, nargs="+", default=[1000, 10000], metavar="N",
                    help="document counts to run, each on a fresh knowledge base (default: 1000 10000)")
    ap.add_argument("--n-max-seconds", type=float, default=600.0,
                    help="stop ingesting an N after this many seconds of ingest time (0 = no cap; default 600)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"JSON output (default {DEFAULT_OUT})")
    ap.add_argument("--seed", type=int, default=0, help="corpus seed (default 0)")
    ap.add_argument("--vocab", type=int, default=3000, help="entity vocabulary size (default 3000)")
    ap.add_argument("--zipf", type=float, default=1.0, help="Zipf exponent of entity popularity (default 1.0)")
    ap.add_argument("--tmpdir", default=None, help="where to create the temporary knowledge bases")
    ap.add_argument("--keep", type=Path, default=None, metavar="DIR",
                    help="build each knowledge base in DIR/n<N> and keep it (for profiling) instead of a temp dir")
    ap.add_argument("--config", action="append", default=[], metavar="SECTION.KEY=VALUE",
                    help="knowledge-base config override, repeatable (VALUE parsed as JSON when it can be), "
                         "e.g. --config wiki.auto_pages=false --config embeddings.model=none; default: none")
    args = ap.parse_args(argv)
    if any(n <= 0 for n in args.n):
        ap.error("--n values must be positive")
    args.config_overrides = {}
    for item in args.config:
        key, sep, raw = item.partition("=")
        section, dot, name = key.strip().partition(".")
        if not sep or not dot or not section or not name:
            ap.error(f"--config {item!r}: expected SECTION.KEY=VALUE")
        try:
            value = json.loads(raw)
        except ValueError:
            value = raw
        args.config_overrides.setdefault(section, {})[name] = value

    result: dict[str, Any] = {
        "benchmark": "ingest_query",
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": machine(),
        "params": {"seed": args.seed, "vocab": args.vocab, "zipf": args.zipf, "doc_chars": DOC_CHARS,
                   "entities_per_doc": ENTITIES_PER_DOC, "relations_per_doc": RELATIONS_PER_DOC,
                   "queries": N_QUERIES, "n_max_seconds": args.n_max_seconds,
                   "config_overrides": args.config_overrides},
        "runs": [],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    for n in args.n:
        print(f"N={n}: ingesting...", file=sys.stderr, flush=True)
        run = run_one(n, args)
        result["runs"].append(run)
        args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        print(f"N={n}: done ({run['ingest_total_s']:.1f} s ingest, query p50 {run['query_ms_p50']:.1f} ms, "
              f"load average {run['loadavg_start']} -> {run['loadavg_end']})", file=sys.stderr, flush=True)
    m = result["machine"]
    print(f"graphmem ingest/query benchmark — {m['nproc']} cores, Python {m['python']}, SQLite {m['sqlite']}, "
          f"seed {args.seed}, graphmem source {m['graphmem_source_sha256']}, "
          f"config overrides {json.dumps(args.config_overrides) if args.config_overrides else 'none'}")
    print("Wall-clock time (time.perf_counter):")
    print(table(result["runs"]))
    print("Process CPU time (time.process_time; less skewed by other processes):")
    print(table(result["runs"], CPU_COLUMNS))
    for r in result["runs"]:
        print(f"N={r['n']}: 1/5/15-min load average {r['loadavg_start']} at start, {r['loadavg_end']} at end "
              f"({m['nproc']} cores; a load above the core count means other processes competed)")
    print(f"JSON: {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

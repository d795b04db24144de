"""Skills and memory search beside their primitives (rows of bench/primitives.py, issue 16).

- ``skills top-8``   ``kb.skills.retrieve(q, 8)`` over the 1,635 skills of ``--skills`` vs raw
  FTS5 ``bm25()`` over the skills' full-text table (same weights, same expression, the retrieval's
  pool size) + encoding the message + one numpy product over the skill vectors + top 8;
- ``memory search``  ``kb.memory.search(q, user_id=u, limit=10)`` over 10,000 synthetic memories
  (bench/memory_throughput.py's generator, 50 users) vs raw scoped FTS5 top 10 + encoding the
  query + one numpy product over that user's memory vectors + top 10;
- ``cold skills query`` / ``cold memory search``: a fresh ``graphmem skills query`` /
  ``graphmem memory search`` process vs a fresh bare process that imports numpy and model2vec,
  loads the same model, reads the same vectors from the same file and scores them once.

Both sides run query by query in one process, who goes first alternating.
"""

from __future__ import annotations

import random
import re
import shutil
import sqlite3
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import numpy as np

import graphmem
from common import static_model_dir
from graphmem.store.sqlite.fts import fts_query
from memory_throughput import query as memory_query
from memory_throughput import synth

MEMORY_USERS = 50
SESSION_TURNS = 20


def _write_model(home: Path, data: Path) -> None:
    """Point the knowledge base's config file at the static model: later opens and the cold
    rows' CLI read it."""
    cfg = home / "config.toml"
    text = cfg.read_text(encoding="utf-8")
    text = re.sub(r'(?m)^model = "[^"]*"', f'model = "model2vec:{static_model_dir(data).resolve()}"', text, count=1)
    cfg.write_text(text.replace("auto_pages = true", "auto_pages = false"), encoding="utf-8")


def build_skills_kb(data: Path, home: Path) -> None:
    """A knowledge base holding the skills collection (built once)."""
    if (home / "graph.db").exists():
        return
    kb = graphmem.open(home, config={"embeddings": {"model": f"model2vec:{static_model_dir(data)}"},
                                     "wiki": {"auto_pages": False}})
    corpus = home.parent / (home.name + "-corpus")
    if not corpus.exists():
        shutil.copytree(data / "skills", corpus, ignore=shutil.ignore_patterns("*.tsv", "*.jsonl", "LICENSE*"))
    kb.skills.build([corpus])
    kb.close()
    _write_model(home, data)


def build_memory_kb(data: Path, home: Path, n: int, seed: int = 7) -> None:
    """``n`` synthetic memories over MEMORY_USERS users, one ``add`` per session of 20 turns."""
    if (home / "graph.db").exists():
        return
    rng = random.Random(seed)
    t0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
    kb = graphmem.open(home, config={"embeddings": {"model": f"model2vec:{static_model_dir(data)}"},
                                     "wiki": {"auto_pages": False}})
    sessions = n // SESSION_TURNS
    for s in range(sessions):
        u = s % MEMORY_USERS
        kb.memory.add([synth(rng) for _ in range(SESSION_TURNS)], user_id=f"user{u}", run_id=f"s{s // MEMORY_USERS}",
                      timestamp=t0 + timedelta(hours=s))
        if (s + 1) % 100 == 0:
            print(f"  {(s + 1) * SESSION_TURNS:,} memories", flush=True)
    kb.close()
    _write_model(home, data)


def memory_queries(n: int, seed: int = 11) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    return [(memory_query(rng), f"user{rng.randrange(MEMORY_USERS)}") for _ in range(n)]


def skill_queries(data: Path, n: int) -> list[str]:
    import json

    lines = (data / "skills" / "dev-queries.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["query"] for line in lines if line.strip()][:n]


class _Model:
    def __init__(self, data: Path) -> None:
        from model2vec import StaticModel

        self.model = StaticModel.from_pretrained(str(static_model_dir(data)))

    def encode(self, q: str) -> np.ndarray:
        v = self.model.encode([q])[0].astype(np.float32)
        return v / (np.linalg.norm(v) or 1.0)


def _matrix(blobs: list[bytes]) -> np.ndarray:
    return np.frombuffer(b"".join(blobs), dtype=np.float16).reshape(len(blobs), -1).astype(np.float32)


def _top(scores: np.ndarray, k: int) -> np.ndarray:
    k = min(k, len(scores))
    top = np.argpartition(-scores, k - 1)[:k]
    return top[np.argsort(-scores[top])]


class SkillPrimitive:
    """FTS5 over skills_fts (the retrieval's weights and pool) + one product over the skill vectors."""

    def __init__(self, home: Path, model: _Model, weights: tuple[float, ...], pool: int) -> None:
        self.conn = sqlite3.connect(home / "graph.db")
        self.model, self.weights, self.pool = model, weights, pool
        rows = self.conn.execute("SELECT item_id, vec FROM vectors WHERE item_kind = 'skill' ORDER BY id").fetchall()
        self.ids = [r[0] for r in rows]
        self.mat = _matrix([r[1] for r in rows])

    def __call__(self, q: str, k: int = 8) -> tuple[list[int], list[str]]:
        expr = fts_query(q)
        lex = [] if expr is None else [r[0] for r in self.conn.execute(
            "SELECT rowid FROM skills_fts WHERE skills_fts MATCH ? ORDER BY bm25(skills_fts, ?, ?, ?, ?, ?) LIMIT ?",
            (expr, *self.weights, self.pool))]
        scores = np.einsum("ij,j->i", self.mat, self.model.encode(q))
        return lex, [self.ids[i] for i in _top(scores, k)]


class MemoryPrimitive:
    """Scoped FTS5 top 10 over memories_fts + one product over the user's memory vectors."""

    def __init__(self, home: Path, model: _Model) -> None:
        self.conn = sqlite3.connect(home / "graph.db")
        self.model = model
        rows = self.conn.execute(
            "SELECT m.user_id, v.item_id, v.vec FROM vectors v JOIN memories m ON m.id = v.item_id"
            " WHERE v.item_kind = 'memory' ORDER BY v.id").fetchall()
        by_user: dict[str, list[tuple[str, bytes]]] = {}
        for u, i, b in rows:
            by_user.setdefault(u, []).append((i, b))
        self.users = {u: ([i for i, _ in lst], _matrix([b for _, b in lst])) for u, lst in by_user.items()}

    def __call__(self, q: str, user: str, k: int = 10) -> tuple[list[int], list[str]]:
        expr = fts_query(q)
        lex: list[int] = []
        if expr is not None:
            scoped = f'scope : "u{user.encode("utf-8").hex()}" AND text : ({expr})'
            lex = [r[0] for r in self.conn.execute(
                "SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? ORDER BY bm25(memories_fts, 1.0, 0.0)"
                " LIMIT ?", (scoped, k))]
        ids, mat = self.users[user]
        scores = np.einsum("ij,j->i", mat, self.model.encode(q))
        return lex, [ids[i] for i in _top(scores, k)]


def kind_rows(data: Path, skills_home: Path, memory_home: Path, n_queries: int, n_memories: int,
              timed: Any, row: Any, skills: bool = True) -> list[dict[str, Any]]:
    """Skills top-8 (unless not ``skills``) and memory search, each beside its primitive, interleaved
    per query."""
    model = _Model(data)
    out = _skill_rows(data, skills_home, n_queries, model, timed, row) if skills else []
    return out + _memory_rows(data, memory_home, n_queries, n_memories, model, timed, row)


def _skill_rows(data: Path, skills_home: Path, n_queries: int, model: _Model, timed: Any, row: Any
                ) -> list[dict[str, Any]]:
    from graphmem.retrieval.config import SKILL_PRESETS

    build_skills_kb(data, skills_home)
    out = []
    cfg = SKILL_PRESETS["default"]
    kb = graphmem.open(skills_home)
    prim_s = SkillPrimitive(skills_home, model, tuple(cfg.field_weights), cfg.pool_k)
    sq = skill_queries(data, n_queries)
    kb.skills.retrieve(sq[0], 8)
    prim_s(sq[0])
    ours, bare = [], []
    for i, q in enumerate(sq):
        if i % 2:
            bare.append(timed(lambda q=q: prim_s(q)))
        ours.append(timed(lambda q=q: kb.skills.retrieve(q, 8)))
        if not i % 2:
            bare.append(timed(lambda q=q: prim_s(q)))
    kb.close()
    out.append(row("skills top-8", ours, bare, f"FTS5 bm25 top-{cfg.pool_k} + encode + numpy over "
                                               f"{len(prim_s.ids)} skill vectors"))
    return out


def _memory_rows(data: Path, memory_home: Path, n_queries: int, n_memories: int, model: _Model, timed: Any,
                 row: Any) -> list[dict[str, Any]]:
    build_memory_kb(data, memory_home, n_memories)
    out = []
    kb = graphmem.open(memory_home)
    prim_m = MemoryPrimitive(memory_home, model)
    mq = memory_queries(n_queries)
    kb.memory.search(mq[0][0], user_id=mq[0][1])
    prim_m(*mq[0])
    ours, bare = [], []
    for i, (q, u) in enumerate(mq):
        if i % 2:
            bare.append(timed(lambda q=q, u=u: prim_m(q, u)))
        ours.append(timed(lambda q=q, u=u: kb.memory.search(q, user_id=u, limit=10)))
        if not i % 2:
            bare.append(timed(lambda q=q, u=u: prim_m(q, u)))
    kb.close()
    out.append(row("memory search", ours, bare, f"scoped FTS5 top-10 + encode + numpy over the user's vectors "
                                                f"({n_memories:,} memories, {MEMORY_USERS} users)"))
    return out


_BARE = """
import sqlite3, sys
import numpy as np
from model2vec import StaticModel
m = StaticModel.from_pretrained(sys.argv[1])
conn = sqlite3.connect(sys.argv[2])
rows = conn.execute(sys.argv[4]).fetchall()
mat = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float16).reshape(len(rows), -1).astype(np.float32)
v = m.encode([sys.argv[3]])[0]
s = mat @ (v / np.linalg.norm(v))
print([rows[i][0] for i in np.argsort(-s)[:10]])
"""


def cold_kind_rows(data: Path, skills_home: Path, memory_home: Path, runs: int, run: Any, row: Any
                   ) -> list[dict[str, Any]]:
    """Fresh ``skills query`` / ``memory search`` processes vs fresh bare processes, alternating."""
    build_skills_kb(data, skills_home)
    build_memory_kb(data, memory_home, 10_000)
    exe = [sys.executable, "-m", "graphmem"]
    model = str(static_model_dir(data))
    out = []
    ours, bare = [], []
    run([*exe, "--home", str(skills_home), "--json", "skills", "query", "warm up"])  # bytecode cache
    run([*exe, "--home", str(memory_home), "--json", "memory", "search", "warm up", "--user", "user0"])
    for q in skill_queries(data, runs):
        ours.append(run([*exe, "--home", str(skills_home), "--json", "skills", "query", q]))
        bare.append(run([sys.executable, "-c", _BARE, model, str(skills_home / "graph.db"), q,
                         "SELECT item_id, vec FROM vectors WHERE item_kind = 'skill'"]))
    out.append(row("cold skills query", ours, bare,
                   "fresh process: numpy + model2vec, load model, score skill vectors"))
    ours, bare = [], []
    for q, u in memory_queries(runs):
        ours.append(run([*exe, "--home", str(memory_home), "--json", "memory", "search", q, "--user", u]))
        bare.append(run([sys.executable, "-c", _BARE, model, str(memory_home / "graph.db"), q,
                         "SELECT v.item_id, v.vec FROM vectors v JOIN memories m ON m.id = v.item_id"
                         f" WHERE v.item_kind = 'memory' AND m.user_id = '{u}'"]))
    out.append(row("cold memory search", ours, bare,
                   "fresh process: numpy + model2vec, load model, score the user's memory vectors"))
    return out


def dump_rankings(data: Path, skills_home: Path, memory_home: Path, out: Path) -> int:
    """Every result list of 100 skill requests (top 8 and top 30, four strategies) and 150 memory
    searches (BFS and PPR, on a copy of the memory knowledge base: searches count uses, which
    feed later rankings; a fixed clock), one JSON line each, to compare two versions with cmp."""
    import json
    import tempfile
    from datetime import datetime, timezone

    lines = []
    kb = graphmem.open(skills_home)
    for strategy in (None, "bfs", "ppr", "none"):
        for q in skill_queries(data, 100):
            for k in (8, 30):
                lines.append(json.dumps([h.to_dict() for h in kb.skills.retrieve(q, k, strategy=strategy)],
                                        sort_keys=True))
    lines.append(json.dumps(sorted(kb.skills.index().adjacency.items())))
    kb.close()
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "kb"
        shutil.copytree(memory_home, copy)
        kb = graphmem.open(copy, clock=lambda: datetime(2026, 12, 2, tzinfo=timezone.utc))
        for strategy in ("bfs", "ppr"):
            for q, u in memory_queries(150):
                lines.append(json.dumps(kb.memory.search(q, user_id=u, limit=10, strategy=strategy).to_dict(),
                                        sort_keys=True, default=str))
        kb.close()
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {len(lines)} result lists to {out}")
    return 0


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description="Dump skills and memory rankings to compare two versions: "
                                             "PYTHONPATH=<other src> python bench/primitives_kinds.py OUT, then cmp.")
    ap.add_argument("out", type=Path)
    ap.add_argument("--data", default=Path("../shared/data"), type=Path)
    ap.add_argument("--skills-kb", required=True, type=Path)
    ap.add_argument("--memory-kb", required=True, type=Path)
    a = ap.parse_args()
    sys.exit(dump_rankings(a.data, a.skills_kb, a.memory_kb, a.out))

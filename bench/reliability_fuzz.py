"""Fuzz the public entry points with hostile input: every call must return or raise a graphmem
error, a call that raised must leave the store as it was, and no call may take 10 s.

Each call is built from ``(seed, index)`` alone, so a finding is replayed with ``--start INDEX
--calls 1``. A child process runs the calls and writes its progress after each one; when it dies
(faulthandler ends a call that passes 10 s), the parent records the call as a hang and starts a
new child after it.

    python bench/reliability_fuzz.py --calls 10000
"""

from __future__ import annotations

import argparse
import faulthandler
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import graphmem
from graphmem.errors import GraphmemError

HANG_S = 10.0
CONFIG = {"embeddings": {"model": "none"}}

# Strings a stranger controls, the nasty ones first: surrogates, NUL, FTS operators, paths,
# front matter that bombs or recurses, impossible dates, deep nesting, punctuation only.
ALIAS_BOMB = "---\na: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n" \
             "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n" \
             "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n" \
             "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\nh: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\n---\nbody\n"
HOSTILE = [
    "", " ", "\n", "!!!", "???", "---", "\ud800", "a\udfffb", "a\x00b", "\x1b[31mred", "'\"*:()^-", "NEAR(a b)",
    "a AND OR NOT b", '"unbalanced', "col:umn", "../../etc/passwd", "/abs/path", "CON", "a/b\\c", "🙂" * 50,
    "\u202eevil", "x" * 100_000, "---\nr: &a [*a]\n---\nbody", ALIAS_BOMB, "---\ndate: 2024-02-30\n---\nbody",
    "---\ndates: [2024-01-01]\ntitle: !!python/object:os.system x\n---\nbody", "[" * 100_000 + "]" * 100_000,
    "{" * 5000, "[[Link]] [[a|b]] [[#]] [[]]", "<script>alert(1)</script>", "%s%n%x", "null", "NaN",
    "Memory leak causes system crash.", "The Dispatch Service depends on the Ledger Database.",
]


def hostile_text(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.55:
        return rng.choice(HOSTILE)
    if r < 0.8:  # random code points, surrogates included
        return "".join(chr(rng.randrange(0, 0x110000)) for _ in range(rng.randrange(1, 40)))
    return " ".join(rng.choice(HOSTILE[:20] + ["word", "Service", "depends on"]) for _ in range(rng.randrange(1, 8)))


def hostile_value(rng: random.Random, depth: int = 0) -> Any:
    """Any JSON-ish value, or a Python value JSON cannot hold (the API must refuse it cleanly)."""
    r = rng.random()
    if depth > 3 or r < 0.4:
        return rng.choice([hostile_text(rng), rng.randrange(-2**70, 2**70), float("nan"), float("inf"), 1e308,
                           True, None, b"bytes", object(), -0.0])
    if r < 0.7:
        return [hostile_value(rng, depth + 1) for _ in range(rng.randrange(0, 4))]
    return {rng.choice([hostile_text(rng), 1, None, "name", "type"]): hostile_value(rng, depth + 1)
            for _ in range(rng.randrange(0, 4))}


def entity_list(rng: random.Random) -> Any:
    if rng.random() < 0.3:
        return hostile_value(rng)
    return [{"name": hostile_text(rng), "type": rng.choice(["component", hostile_text(rng)]),
             "supporting_text": hostile_text(rng)} for _ in range(rng.randrange(0, 3))]


def make_call(kb: Any, rng: random.Random, scratch: Path) -> tuple[str, Callable[[], Any]]:
    """One public call with hostile arguments: ``(name, thunk)``."""
    t, v = (lambda: hostile_text(rng)), (lambda: hostile_value(rng))
    choices: list[tuple[str, Callable[[], Any]]] = [
        ("ingest_with_content", lambda: kb.ingest_with_content(t(), t(), t(), t(), entity_list(rng), entity_list(rng),
                                                               rng.choice([None, v()]))),
        ("memory.add", lambda: kb.memory.add(rng.choice([t(), v()]), user_id=rng.choice(["u", t()]),
                                             metadata=rng.choice([None, v()]))),
        ("memory.search", lambda: kb.memory.search(t(), user_id=rng.choice(["u", t()]),
                                                   limit=rng.choice([5, 0, -1, 10**9, v()]))),
        ("memory.get_all", lambda: kb.memory.get_all(filters=rng.choice([None, v(), {"user_id": t()}]))),
        ("memory.get", lambda: kb.memory.get(t())),
        ("memory.update", lambda: kb.memory.update(t(), t())),
        ("memory.history", lambda: kb.memory.history(t())),
        ("memory.feedback", lambda: kb.memory.feedback(t(), t(), rng.choice([True, False, v()]))),
        ("wiki.write_page", lambda: kb.wiki.write_page(rng.choice(["topic", "note", t()]), t(), t(),
                                                       tags=rng.choice([None, v(), ["a", t()]]))),
        ("wiki.read_page", lambda: kb.wiki.read_page(rng.choice(["topic", t()]), t())),
        ("wiki.search", lambda: kb.wiki.search_wiki(t(), k=rng.choice([5, 0, -3, v()]))),
        ("wiki.delete_page", lambda: kb.wiki.delete_page(rng.choice(["topic", t()]), t())),
        ("search", lambda: kb.search(t(), kinds=rng.choice(["chunk", ("chunk", "entity", "page"), t(), v()]),
                                     k=rng.choice([5, 0, -1, 10**6, v()]), strategy=rng.choice([None, "bfs", t()]))),
        ("query_with_evidence", lambda: kb.query_with_evidence(rng.choice([t(), v()]))),
        ("graph.add_node", lambda: kb.graph.add_node(t(), rng.choice(["component", t()]))),
        ("graph.add_edge", lambda: kb.graph.add_edge(t(), t(), t(), rng.choice([0.9, v()]))),
        ("graph.get_entity", lambda: kb.graph.get_entity(t())),
        ("ingest_paths", lambda: kb.ingest_paths([_hostile_folder(rng, scratch)])),
        ("skills.build", lambda: kb.skills.build([_hostile_skills(rng, scratch)])),
        ("skills.retrieve", lambda: kb.skills.retrieve(t(), top_k=rng.choice([None, 3, 0, -1, v()]))),
        ("skills.show", lambda: kb.skills.show(t())),
    ]
    return rng.choice(choices)


def _hostile_folder(rng: random.Random, scratch: Path) -> Path:
    """A folder of one to three hostile files (front matter, JSON, JSONL, HTML, bytes)."""
    d = Path(tempfile.mkdtemp(dir=scratch))
    for i in range(rng.randrange(1, 4)):
        kind = rng.choice(["md", "json", "jsonl", "html", "txt", "bin"])
        body = hostile_text(rng)
        if kind == "md":
            body = rng.choice([ALIAS_BOMB, "---\nr: &a [*a]\n---\n", "---\ndate: 2024-02-30\n---\n",
                               "---\n" + hostile_text(rng) + "\n---\n"]) + body
        elif kind == "json":
            body = rng.choice(["[" * 100_000 + "]" * 100_000, json.dumps({"text": body, "title": hostile_text(rng)}),
                               body])
        elif kind == "jsonl":
            body = "\n".join([json.dumps({"text": "good line"}), "{bad json", "[" * 50_000, json.dumps({"text": body})])
        elif kind == "html":
            body = f"<html><body><p>{body}</p><script>{body}</script>"
        data = bytes(rng.randrange(256) for _ in range(200)) if kind == "bin" else body.encode("utf-8", "surrogatepass")
        (d / f"f{i}.{'dat' if kind == 'bin' else kind}").write_bytes(data)
    return d


def _hostile_skills(rng: random.Random, scratch: Path) -> Path:
    d = Path(tempfile.mkdtemp(dir=scratch))
    for i in range(rng.randrange(1, 3)):
        (d / f"s{i}").mkdir()
        fm = rng.choice([ALIAS_BOMB, "---\nname: " + hostile_text(rng) + "\nrelated: [*x]\n---\n",
                         "---\ndate: 2024-02-30\nname: ok\n---\n", ""])
        (d / f"s{i}" / "SKILL.md").write_bytes((fm + hostile_text(rng)).encode("utf-8", "surrogatepass"))
    return d


def _state(kb: Any) -> tuple[Any, ...]:
    st = kb.stats()
    # Every write appends its event in the same transaction: the event count sees any write.
    return (st["documents"], st["document_versions"], st["chunks"], st["entities"], st["edges"],
            st["provenance"], st["events"], st["nodes"].get("memory", 0))


def child(home: Path, seed: int, start: int, calls: int, progress: Path, report: Path) -> int:
    """Run calls ``start .. start+calls``; append findings to ``report`` (JSON lines)."""
    scratch = Path(tempfile.mkdtemp(prefix="graphmem-fuzz-"))
    try:
        return _calls(home, seed, start, calls, progress, report, scratch)
    finally:  # one folder per child run was left in the temp folder (hundreds after a few runs)
        shutil.rmtree(scratch, ignore_errors=True)


def _calls(home: Path, seed: int, start: int, calls: int, progress: Path, report: Path, scratch: Path) -> int:
    with graphmem.open(home, config=CONFIG) as kb, report.open("a", encoding="utf-8") as out:
        for i in range(start, start + calls):
            rng = random.Random(seed * 1_000_003 + i)
            name, call = make_call(kb, rng, scratch)
            progress.write_text(f"{i} {name}", encoding="utf-8")
            before = _state(kb)
            faulthandler.dump_traceback_later(HANG_S, exit=True)
            t0 = time.perf_counter()
            try:
                call()
                outcome = "ok"
            except GraphmemError:
                outcome = "refused"
            except Exception as exc:  # noqa: BLE001 - what this benchmark counts
                outcome = "unexpected"
                out.write(json.dumps({"index": i, "call": name, "kind": "exception", "type": type(exc).__name__,
                                      "error": traceback.format_exc(limit=4)[-1500:]}) + "\n")
            finally:
                faulthandler.cancel_dump_traceback_later()
            elapsed = time.perf_counter() - t0
            if outcome != "ok" and _state(kb) != before:
                out.write(json.dumps({"index": i, "call": name, "kind": "wrote_on_failure"}) + "\n")
            out.write(json.dumps({"index": i, "call": name, "kind": outcome, "s": round(elapsed, 4)}) + "\n")
            out.flush()
    return 0


def run(calls: int, seed: int = 1) -> dict[str, Any]:
    """Fuzz ``calls`` calls in child processes; returns the counts and the findings."""
    with tempfile.TemporaryDirectory() as tmp:
        home, progress, report = Path(tmp) / "kb", Path(tmp) / "progress", Path(tmp) / "report.jsonl"
        graphmem.open(home, config=CONFIG).close()
        hangs: list[str] = []
        crashes: list[str] = []
        start = 0
        t0 = time.perf_counter()
        while start < calls:
            proc = subprocess.run([sys.executable, __file__, "--child", str(home), "--seed", str(seed),
                                   "--start", str(start), "--calls", str(calls - start), "--progress", str(progress),
                                   "--report", str(report)], capture_output=True, text=True)
            if proc.returncode == 0:
                break
            where = progress.read_text(encoding="utf-8") if progress.exists() else f"{start} ?"
            # faulthandler's watchdog prints "Timeout (0:00:10)!" before it ends the process.
            (hangs if "Timeout (" in proc.stderr else crashes).append(f"{where}: exit {proc.returncode}: "
                                                                     f"{proc.stderr[-400:]}")
            start = int(where.split()[0]) + 1
        rows = [json.loads(line) for line in report.read_text(encoding="utf-8").splitlines()] if report.exists() else []
    kinds = Counter(r["kind"] for r in rows)
    slowest = max((r for r in rows if "s" in r), key=lambda r: r["s"], default=None)
    return {"calls": calls, "seed": seed, "ok": kinds["ok"], "refused": kinds["refused"],
            "unexpected": kinds["unexpected"], "wrote_on_failure": kinds["wrote_on_failure"], "hangs": len(hangs),
            "crashes": len(crashes),
            "slowest_call_s": slowest["s"] if slowest else None, "slowest_call": slowest["call"] if slowest else None,
            "elapsed_s": round(time.perf_counter() - t0, 1),
            "findings": [r for r in rows if r["kind"] in ("exception", "wrote_on_failure")][:50],
            "hang_details": hangs[:10],
            "crash_details": crashes[:10],
            "unexpected_types": dict(Counter(f"{r['call']}: {r['type']}" for r in rows if r["kind"] == "exception"))}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--progress", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--report", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return child(args.child, args.seed, args.start, args.calls, args.progress, args.report)
    res = run(args.calls, args.seed)
    print(json.dumps({k: v for k, v in res.items() if k not in ("findings",)}, indent=2))
    for f in res["findings"][:10]:
        print(json.dumps(f))
    return 0 if not (res["unexpected"] or res["wrote_on_failure"] or res["hangs"] or res["crashes"]) else 1


if __name__ == "__main__":
    sys.exit(main())

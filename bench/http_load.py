"""Load check of the HTTP API: concurrent clients on loopback against a real `graphmem serve`.

A knowledge base of examples/ is served by a `graphmem serve` subprocess on 127.0.0.1 (uvicorn,
one process). ``--clients`` threads (default 8) each send ``--requests`` requests (default 500)
over one keep-alive connection, mixed by a seeded draw: knowledge search (POST /search, 40%),
memory add (POST /memories, 25%), memory search (POST /search with a user_id, 20%) and page write
(POST /wiki/pages, 15%). A 503 (StoreBusy) is retried after its Retry-After, at most 5 times, and
counted; any other non-2xx answer is an error. Afterwards every acknowledged write is looked for:
each client's memories (GET /memories?user_id=...) and pages (GET /wiki/pages/<slug>, content
compared) must all be there. The run stops by itself after ``--max-seconds``.

``--rival-writer`` adds a second process that holds the knowledge base's write lock for 0.3 s every
0.5 s while the clients run, and the server's ``store.busy_timeout`` is lowered to 0.1 s, so writes
meet the documented 503 + Retry-After and are retried; nothing acknowledged may be lost.

    python bench/http_load.py                        # 8 clients x 500 requests
    python bench/http_load.py --rival-writer         # the same while another process holds the lock
    python bench/http_load.py --clients 2 --requests 50

Prints a table (p50/p95/max per route) and writes JSON (default bench/results/http_load.json).
Exit status 1 when anything was lost or an undocumented error occurred.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import graphmem  # noqa: E402
from common import percentile  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
QUESTIONS = ["Why did dispatch fail during INC-2041?", "What does PgBouncer connect to?",
             "Which services depend on ledger-db?", "What caused the notification storm?",
             "How does the Route Planner retry?", "stale routes after the tracker change"]
FACTS = ["prefers short status updates", "is on call this week for the dispatch API", "owns the ledger-db runbook",
         "asked about PgBouncer pool sizes", "wants alerts only for SEV1", "works from the Lisbon office"]
MIX = [("search", 0.40), ("memory_add", 0.25), ("memory_search", 0.20), ("page_write", 0.15)]
MAX_RETRIES = 5


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Client:
    """One keep-alive connection; ``call`` retries a 503 after its Retry-After."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any, int]:
        """``(status, json, retries)``."""
        retries = 0
        while True:
            data = None if body is None else json.dumps(body).encode("utf-8")
            headers = {"Content-Type": "application/json"} if data is not None else {}
            try:
                self.conn.request(method, path, body=data, headers=headers)
                resp = self.conn.getresponse()
                raw = resp.read()
            except (OSError, http.client.HTTPException):
                self.conn.close()
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
                raise
            if resp.status == 503 and retries < MAX_RETRIES:
                retries += 1
                time.sleep(float(resp.getheader("Retry-After") or 1))
                continue
            return resp.status, json.loads(raw) if raw else None, retries


def worker(idx: int, port: int, n: int, seed: int, deadline: float, out: dict[str, Any]) -> None:
    rng = random.Random(seed * 1000 + idx)
    client = Client(port)
    user = f"load-user-{idx}"
    samples: list[tuple[str, float, int, int]] = []  # route, seconds, status, retries
    memories: list[str] = []
    pages: dict[str, str] = {}
    failures: list[str] = []
    for i in range(n):
        if time.monotonic() > deadline:
            failures.append(f"client {idx}: stopped at request {i} (time limit)")
            break
        route = rng.choices([m for m, _ in MIX], [w for _, w in MIX])[0]
        if route == "search":
            req = ("POST", "/search", {"query": rng.choice(QUESTIONS), "kinds": ["chunk", "entity"], "k": 5})
        elif route == "memory_add":
            req = ("POST", "/memories", {"messages": f"{user} {rng.choice(FACTS)} (note {i})", "user_id": user})
        elif route == "memory_search":
            req = ("POST", "/search", {"query": rng.choice(FACTS), "user_id": user, "limit": 5})
        else:
            title = f"Load {idx} page {i}"
            req = ("POST", "/wiki/pages", {"category": "load", "title": title,
                                           "content": f"Written by client {idx} as request {i}: {rng.random()}"})
        t0 = time.perf_counter()
        try:
            status, body, retries = client.call(*req)
        except (OSError, http.client.HTTPException) as exc:
            samples.append((route, time.perf_counter() - t0, 0, 0))
            failures.append(f"client {idx} {route}: {exc.__class__.__name__}: {exc}")
            continue
        samples.append((route, time.perf_counter() - t0, status, retries))
        if status != 200:
            failures.append(f"client {idx} {route}: HTTP {status} {body}")
        elif route == "memory_add":
            memories.append(body["results"][0]["id"])
        elif route == "page_write":
            pages[body["slug"]] = req[2]["content"]
    out[idx] = {"user": user, "samples": samples, "memories": memories, "pages": pages, "failures": failures}


def hold_lock(db: Path, stop: threading.Event, deadline: float) -> None:
    """The rival writer: another process (sqlite3's CLI-free stand-in, a Python child) that takes the
    write lock for 0.3 s every 0.5 s until told to stop."""
    code = ("import sqlite3, sys, time\n"
            "c = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)\n"
            "for line in sys.stdin:\n"
            "    c.execute('BEGIN IMMEDIATE'); time.sleep(0.3); c.execute('ROLLBACK')\n"
            "    print('held', flush=True)\n")
    child = subprocess.Popen([sys.executable, "-c", code, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True)
    assert child.stdin is not None and child.stdout is not None
    try:
        while not stop.is_set() and time.monotonic() < deadline:
            child.stdin.write("hold\n")
            child.stdin.flush()
            child.stdout.readline()
            stop.wait(0.2)
    finally:
        child.stdin.close()
        child.wait(timeout=30)


def check_nothing_lost(port: int, results: dict[int, Any]) -> dict[str, Any]:
    """Every acknowledged memory and page is readable, with the content written."""
    client = Client(port)
    lost_memories = lost_pages = wrong_pages = 0
    for r in results.values():
        status, body, _ = client.call("GET", f"/memories?user_id={r['user']}&limit=10000")
        stored = {m["id"] for m in body["results"]} if status == 200 else set()
        lost_memories += len(set(r["memories"]) - stored)
        for slug, content in r["pages"].items():
            status, page, _ = client.call("GET", f"/wiki/pages/load/{slug}")
            if status != 200:
                lost_pages += 1
            elif page["content"].strip() != content.strip():
                wrong_pages += 1
    return {"memories_acknowledged": sum(len(r["memories"]) for r in results.values()),
            "pages_acknowledged": sum(len(r["pages"]) for r in results.values()),
            "memories_lost": lost_memories, "pages_lost": lost_pages, "pages_wrong": wrong_pages}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--requests", type=int, default=500, help="requests per client")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--max-seconds", type=float, default=900, help="stop the run after this long")
    ap.add_argument("--rival-writer", action="store_true",
                    help="another process holds the write lock 0.3 s of every 0.5 s (busy_timeout 0.1 s)")
    ap.add_argument("--out", type=Path, default=None, help="JSON report (default bench/results/http_load*.json)")
    args = ap.parse_args()
    if args.out is None:
        name = "http_load_rival.json" if args.rival_writer else "http_load.json"
        args.out = REPO / "bench" / "results" / name

    with tempfile.TemporaryDirectory(prefix="graphmem-http-load-") as tmp:
        home = Path(tmp) / "kb"
        env = {**os.environ, "GRAPHMEM_EMBED_MODEL": os.environ.get("GRAPHMEM_EMBED_MODEL", "none")}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            os.environ["GRAPHMEM_EMBED_MODEL"] = env["GRAPHMEM_EMBED_MODEL"]
            with graphmem.open(home) as kb:
                kb.ingest_paths([REPO / "examples"])
        if args.rival_writer:
            cfg = home / "config.toml"
            cfg.write_text(cfg.read_text(encoding="utf-8").replace("busy_timeout = 30.0", "busy_timeout = 0.1"),
                           encoding="utf-8")
        port = free_port()
        log = (Path(tmp) / "serve.log").open("w")
        proc = subprocess.Popen([sys.executable, "-m", "graphmem", "--home", str(home), "serve", "--port", str(port),
                                 "--log-level", "warning"], stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, env=env)
        try:
            start_by = time.monotonic() + 60
            while True:
                try:
                    if Client(port).call("GET", "/health")[0] == 200:
                        break
                except OSError:
                    pass
                if proc.poll() is not None or time.monotonic() > start_by:
                    raise SystemExit(f"graphmem serve did not start:\n{(Path(tmp) / 'serve.log').read_text()}")
                time.sleep(0.2)
            results: dict[int, Any] = {}
            deadline = time.monotonic() + args.max_seconds
            stop = threading.Event()
            rival = threading.Thread(target=hold_lock, args=(home / "graph.db", stop, deadline))
            if args.rival_writer:
                rival.start()
            t0 = time.perf_counter()
            threads = [threading.Thread(target=worker, args=(i, port, args.requests, args.seed, deadline, results))
                       for i in range(args.clients)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            wall = time.perf_counter() - t0
            stop.set()
            if args.rival_writer:
                rival.join()
            lost = check_nothing_lost(port, results)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
            log.close()

    samples = [s for r in results.values() for s in r["samples"]]
    failures = [f for r in results.values() for f in r["failures"]]
    routes = {}
    for name, _ in MIX:
        got = [s for s in samples if s[0] == name]
        ms = [s[1] * 1000 for s in got]
        routes[name] = {"requests": len(got), "errors": sum(1 for s in got if s[2] != 200),
                        "retried_503": sum(s[3] for s in got), "p50_ms": round(percentile(ms, 50), 2),
                        "p95_ms": round(percentile(ms, 95), 2), "max_ms": round(max(ms), 2) if ms else None}
    report = {"rival_writer": args.rival_writer, "clients": args.clients, "requests_per_client": args.requests,
              "requests": len(samples),
              "expected_requests": args.clients * args.requests, "wall_s": round(wall, 2),
              "requests_per_s": round(len(samples) / wall, 1) if wall else None, "routes": routes, **lost,
              "errors": len(failures), "failures": failures[:20], "cpus": os.cpu_count()}
    rival_note = " (another process holding the write lock 0.3 s of every 0.5 s)" if args.rival_writer else ""
    print(f"{args.clients} clients x {args.requests} requests on loopback{rival_note}: {len(samples)} requests in "
          f"{wall:.1f} s "
          f"({report['requests_per_s']} req/s)")
    print(f"{'route':<15}{'requests':>9}{'errors':>8}{'503 retried':>13}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}")
    for name, r in routes.items():
        print(f"{name:<15}{r['requests']:>9}{r['errors']:>8}{r['retried_503']:>13}{r['p50_ms']:>9.1f}"
              f"{r['p95_ms']:>9.1f}{(r['max_ms'] or 0):>9.1f}")
    print(f"acknowledged: {lost['memories_acknowledged']} memories, {lost['pages_acknowledged']} pages; lost: "
          f"{lost['memories_lost']} memories, {lost['pages_lost']} pages, {lost['pages_wrong']} pages with other "
          f"content; errors other than retried 503s: {len(failures)}")
    for f in failures[:5]:
        print("  " + f)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2), encoding="utf-8")
    print(f"wrote {args.out}")
    ok = (not failures and lost["memories_lost"] == lost["pages_lost"] == lost["pages_wrong"] == 0
          and len(samples) == args.clients * args.requests)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

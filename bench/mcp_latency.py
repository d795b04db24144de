"""A `search` tool call over MCP stdio against the same `kb.search` in process, side by side in one run.

The 2WikiMultihopQA corpus (6,119 passages; ``--passages`` for fewer) is ingested once with the offline
extractor and the static Model2Vec model. Then the same deterministic questions are asked (k=10, chunks)
1) in process through ``kb.search`` and 2) through a ``graphmem mcp`` subprocess over stdio driven by the
official SDK's client (``call_tool("search", ...)``: JSON-RPC framing, argument validation, the output
model, the pipe both ways), alternating per query. The first query of each is a warm-up and not
counted. Prints a table and writes JSON; the acceptance figure is the p50 ratio (MCP / in process).

    python bench/mcp_latency.py --data ../shared/data [--queries 200] [--passages 6119]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import anyio  # noqa: E402

import graphmem  # noqa: E402
from common import percentile, static_model_dir  # noqa: E402
from graphmem.config import set_config_value  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHMEM_")}
    env["HF_HUB_OFFLINE"] = "1"
    return env


def build(data: Path, home: Path, passages: int) -> dict[str, Any]:
    """The 2Wiki knowledge base with the static model written to its config.toml (the server reads it)."""
    model = static_model_dir(data)
    if not (model / "model.safetensors").exists():
        raise SystemExit(f"static model {model} not found")
    corpus = json.loads((data / "2wiki" / "2wikimultihopqa_corpus.json").read_text(encoding="utf-8"))[:passages]
    graphmem.open(home).close()
    set_config_value(home, "embeddings", "model", f"model2vec:{model}")
    set_config_value(home, "wiki", "auto_pages", False)
    src = home.parent / "2wiki.jsonl"
    with src.open("w", encoding="utf-8") as fh:
        for i, p in enumerate(corpus):
            fh.write(json.dumps({"id": f"p{i}", "title": p["title"], "text": p["text"]}) + "\n")
    # In a child process: the measuring process stays as fresh as the server it is compared with.
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "graphmem", "--home", str(home), "ingest", str(src), "--jsonl",
                    "--extractor", "offline"], check=True, env=_env(), stdout=subprocess.DEVNULL)
    took = time.perf_counter() - t
    with graphmem.open(home) as kb:
        st = kb.stats()
        added = st["documents"]
    rng = random.Random(0)
    templates = ["Who was {}?", "When was {} born?", "Where did {} die?", "What is {} known for?", "Who directed {}?"]
    return {"passages": added, "ingest_s": round(took, 1), "entities": st["entities"], "relations": st["edges"],
            "questions": [rng.choice(templates).format(rng.choice(corpus)["title"]) for _ in range(10_000)]}


async def measure(home: Path, queries: list[str]) -> dict[str, Any]:
    """Both paths at once, alternating per query (who goes first alternates too), so that the machine's
    load and the page cache treat them alike."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "graphmem", "mcp", "--home", str(home)],
                                   env=_env())
    lib_ms: list[float] = []
    mcp_ms: list[float] = []
    same = 0
    with graphmem.open(home) as kb:
        async with Client(params) as client:
            kb.search(queries[0], k=10)  # model and vector index load, on both sides
            await client.call_tool("search", {"query": queries[0], "k": 10})
            for i, q in enumerate(queries):
                order = ("lib", "mcp") if i % 2 == 0 else ("mcp", "lib")
                got: dict[str, list[str]] = {}
                for side in order:
                    t = time.perf_counter()
                    if side == "lib":
                        got[side] = [h.id for h in kb.search(q, k=10).hits]
                        lib_ms.append((time.perf_counter() - t) * 1000)
                    else:
                        res = await client.call_tool("search", {"query": q, "k": 10})
                        mcp_ms.append((time.perf_counter() - t) * 1000)
                        if res.is_error or not isinstance(res.structured_content, dict):
                            raise SystemExit(f"search failed over MCP: {res.content}")
                        got[side] = [h["id"] for h in res.structured_content["hits"]]
                same += got["lib"] == got["mcp"]
    return {"lib": lib_ms, "mcp": mcp_ms, "same": same}


def main(argv: list[str] | None = None) -> int:
    """Build, measure both ways, print and write the table."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="../shared/data", type=Path)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--passages", type=int, default=6119)
    ap.add_argument("--out", default="bench/results/mcp_latency.json", type=Path)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "kb"
        info = build(args.data, home, args.passages)
        queries = info.pop("questions")[: args.queries]
        print(f"2wiki: {info}", flush=True)
        got = anyio.run(measure, home, queries)
    lib_ms, mcp_ms, same = got["lib"], got["mcp"], got["same"]
    rows = []
    for name, lat in (("kb.search (in process)", lib_ms), ("search tool over MCP stdio", mcp_ms)):
        rows.append({"path": name, "queries": len(lat), "p50_ms": round(statistics.median(lat), 2),
                     "p95_ms": round(percentile(lat, 95), 2), "mean_ms": round(statistics.fmean(lat), 2)})
    ratio = rows[1]["p50_ms"] / rows[0]["p50_ms"]
    info.update(p50_ratio=round(ratio, 2), same_hits=f"{same}/{len(queries)}", within_2x=ratio <= 2.0)
    print("\n| path | queries | p50 ms | p95 ms | mean ms |\n|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['path']} | {r['queries']} | {r['p50_ms']} | {r['p95_ms']} | {r['mean_ms']} |")
    print(f"\np50 ratio MCP / in process: {ratio:.2f} (acceptance: <= 2); identical hit lists: {same}/{len(queries)}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"info": info, "rows": rows}, indent=2), encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

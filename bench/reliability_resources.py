"""Resource cases of the reliability suite: big and many inputs, peak memory from the OS.

Each case runs in a fresh child process (so one case's memory never counts for the next); the
peak RSS is the child's ``ru_maxrss`` from ``os.wait4`` (the kernel's high-water mark). Inputs
are generated into a temporary folder and deleted afterwards; nothing is committed.

  (a) one big text file (ingest.max_file_mb raised)       default 200 MB
  (b) one big JSONL file, records of a few KB (ingest.max_bulk_file_mb raised)   default 400 MB
  (c) many tiny files in one folder                        default 20,000
  (d) one big SKILL.md passed to kb.skills.build(...)      default 50 MB

    python bench/reliability_resources.py            # full size: ~35 min on 2 shared cores, (b) ~24 min
                                                     # of it (--jsonl-mb N for a smaller JSONL)
    python bench/reliability_resources.py --quick    # small sizes, a smoke run (seconds)
    python bench/reliability_resources.py --cases b --jsonl-mb 100

The extractor is the user's default (offline); the embedder is the offline static model in
../shared/models/minilm-static-256 when it is there, else none (the table says which).
Writes JSON to bench/results/reliability_resources.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
STATIC_MODEL = HERE.parent.parent / "shared" / "models" / "minilm-static-256"

_NAMES = ["Redis", "Kafka", "PgBouncer", "Route Planner", "Tracker Service", "ledger-db", "API Gateway",
          "Billing Worker", "S3", "Postgres", "Nginx", "Auth Service", "Search Index", "Cache Layer"]
_VERBS = ["uses", "depends on", "calls", "feeds", "reads from", "writes to", "causes", "contains"]
_WORDS = ["the", "system", "memory", "request", "latency", "queue", "worker", "pool", "connection", "timeout",
          "error", "retry", "buffer", "disk", "node", "cluster"]


def _sentence(r: random.Random) -> str:
    if r.random() < 0.4:
        return f"The {r.choice(_NAMES)} {r.choice(_VERBS)} {r.choice(_NAMES)}."
    words = [r.choice(_WORDS) for _ in range(r.randint(6, 18))]
    return " ".join(words).capitalize() + "."


def _text(r: random.Random, size: int) -> str:
    out: list[str] = []
    total = 0
    while total < size:
        para = " ".join(_sentence(r) for _ in range(r.randint(3, 8))) + "\n\n"
        out.append(para)
        total += len(para)
    return "".join(out)[:size]


def _write_text_file(path: Path, size: int) -> None:
    r = random.Random(1)
    with path.open("w", encoding="utf-8") as fh:
        left = size
        while left > 0:
            piece = _text(r, min(left, 1 << 20))
            fh.write(piece)
            left -= len(piece)


def _write_jsonl(path: Path, size: int, record_chars: int = 3000) -> int:
    """Records of about ``record_chars`` characters; returns the number of records."""
    r = random.Random(2)
    # a pool of paragraphs, recombined, so generation is not the slow part of the case
    pool = [_text(r, record_chars // 3) for _ in range(200)]
    n = written = 0
    with path.open("w", encoding="utf-8") as fh:
        while written < size:
            body = " ".join(r.choice(pool) for _ in range(3))
            line = json.dumps({"id": f"rec{n}", "title": f"Record {n}", "text": body,
                               "metadata": {"n": n, "tags": ["bench", "jsonl"]}}) + "\n"
            fh.write(line)
            written += len(line)
            n += 1
    return n


def _write_tiny_files(folder: Path, count: int) -> None:
    folder.mkdir(parents=True)
    r = random.Random(3)
    for i in range(count):
        (folder / f"note{i:06d}.txt").write_text(f"Note {i}. " + _sentence(r) + " " + _sentence(r))


def _write_skill(folder: Path, size: int) -> None:
    skill = folder / "huge-skill"
    skill.mkdir(parents=True)
    r = random.Random(4)
    with (skill / "SKILL.md").open("w", encoding="utf-8") as fh:
        fh.write("---\nname: huge-skill\ndescription: A skill whose body is very large.\n---\n# Huge skill\n\n")
        left = size
        while left > 0:
            piece = _text(r, min(left, 1 << 20))
            fh.write(piece)
            left -= len(piece)


# -- the child: one case, in its own process -----------------------------------------------------


def _child(case: str, data: Path, home: Path, extractor: str, embedder: str) -> dict[str, object]:
    import graphmem

    os.environ["GRAPHMEM_EMBED_MODEL"] = embedder
    config = {"ingest": {"max_file_mb": 100_000.0, "max_bulk_file_mb": 100_000.0,
                         "max_record_chars": 500_000_000}}
    with graphmem.open(home, config=config) as kb:
        if case == "d":
            try:
                res = kb.skills.build([data])
            except graphmem.GraphmemError as exc:
                return {"outcome": f"skills build refused: {str(exc)[:200]}"}
            info = res.to_dict() if hasattr(res, "to_dict") else vars(res)
            return {"outcome": "skills build: " + json.dumps(info, default=str)[:240]}
        s = kb.ingest_paths([data], extractor=extractor)
        d = s.to_dict()
        skipped = "; ".join(str(x) for x in s.skipped[:2])
        return {"outcome": f"{d['documents']} docs ({d['added']} added), {d['chunks']} chunks, "
                           f"{d['entities']} entities, {len(d['skipped'])} skipped"
                           + (f" [{skipped[:160]}]" if skipped else "")}


def _run_case(case: str, data: Path, work: Path, extractor: str, embedder: str, timeout: float) -> dict[str, object]:
    home = work / f"kb-{case}"
    cmd = [sys.executable, __file__, "--child", case, str(data), str(home), extractor, embedder]
    t0 = time.perf_counter()
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True)
        timer = threading.Timer(timeout, proc.kill)
        timer.start()
        out = proc.stdout.read() if proc.stdout else ""
        # wait4 gives this child's own rusage: its peak RSS as the kernel measured it
        _, status, usage = os.wait4(proc.pid, 0)
        timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        err_text = err.read()
    result: dict[str, object] = {"seconds": round(time.perf_counter() - t0, 1),
                                 "peak_rss_mb": round(usage.ru_maxrss / 1024, 1)}
    lines = [ln for ln in out.splitlines() if ln.startswith("{")]
    if proc.returncode == 0 and lines:
        child = json.loads(lines[-1])
        result.update(outcome=child["outcome"], child_vmhwm_mb=child["peak_rss_mb"])
    elif not timer.is_alive() and proc.returncode < 0 and time.perf_counter() - t0 >= timeout:
        result.update(outcome=f"TIMEOUT after {timeout:.0f} s (give a smaller size flag)")
    else:
        tail = (err_text.strip().splitlines() or ["no output"])[-1]
        result.update(outcome=f"exit {proc.returncode}: {tail[:200]}")
    return result


def _peak_rss_mb() -> float:
    """This process's peak RSS as the kernel counts it (VmHWM; ru_maxrss where /proc is absent)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    ap.add_argument("--cases", default="abcd", help="which cases to run, e.g. 'ab' (default: abcd)")
    ap.add_argument("--text-mb", type=float, help="size of case (a) (default 200, quick 2)")
    ap.add_argument("--jsonl-mb", type=float, help="size of case (b) (default 400, quick 4)")
    ap.add_argument("--files", type=int, help="number of files of case (c) (default 20000, quick 200)")
    ap.add_argument("--skill-mb", type=float, help="size of case (d) (default 50, quick 1)")
    ap.add_argument("--extractor", default="offline", choices=["offline", "none"])
    ap.add_argument("--embedder", default=None,
                    help="embedding SPEC (default: the static model in ../shared/models if present, else none)")
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds per case before it is killed")
    ap.add_argument("--out", type=Path, default=RESULTS / "reliability_resources.json")
    args = ap.parse_args()
    q = args.quick
    sizes = {"a": args.text_mb or (2 if q else 200), "b": args.jsonl_mb or (4 if q else 400),
             "c": args.files or (200 if q else 20_000), "d": args.skill_mb or (1 if q else 50)}
    embedder = args.embedder or (f"model2vec:{STATIC_MODEL}" if (STATIC_MODEL / "model.safetensors").exists()
                                 else "none")
    rows = []
    work = Path(tempfile.mkdtemp(prefix="graphmem-resources-"))
    try:
        for case in args.cases:
            data = work / f"input-{case}"
            if case == "a":
                data.mkdir()
                path = data / "big.txt"
                _write_text_file(path, int(sizes["a"] * 1e6))
                label, size = "one big text file", f"{path.stat().st_size / 1e6:.0f} MB"
            elif case == "b":
                data.mkdir()
                path = data / "big.jsonl"
                n = _write_jsonl(path, int(sizes["b"] * 1e6))
                label, size = "one big JSONL", f"{path.stat().st_size / 1e6:.0f} MB, {n:,} records"
            elif case == "c":
                _write_tiny_files(data, int(sizes["c"]))
                label, size = "many tiny files", f"{int(sizes['c']):,} files"
            elif case == "d":
                _write_skill(data, int(sizes["d"] * 1e6))
                label = "big SKILL.md (skills build)"
                size = f"{(data / 'huge-skill' / 'SKILL.md').stat().st_size / 1e6:.0f} MB"
            else:
                raise SystemExit(f"unknown case {case!r}: choose from abcd")
            print(f"running ({case}) {label}, {size} ...", file=sys.stderr, flush=True)
            res = _run_case(case, data, work, args.extractor, embedder, args.timeout)
            rows.append({"case": f"({case}) {label}", "input": size, **res})
            shutil.rmtree(data, ignore_errors=True)
            shutil.rmtree(work / f"kb-{case}", ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    header = f"extractor {args.extractor}, embedder {embedder if embedder == 'none' else 'static (minilm-static-256)'}"
    print(header)
    print(f"| {'case':32} | {'input':26} | {'seconds':>8} | {'peak RSS MB':>11} | outcome")
    print(f"|{'-' * 34}|{'-' * 28}|{'-' * 10}|{'-' * 13}|---------")
    for r in rows:
        peak = f"{r['peak_rss_mb']:.0f}" if r.get("peak_rss_mb") is not None else "-"
        print(f"| {r['case']:32} | {r['input']:26} | {r['seconds']:8.1f} | {peak:>11} | {r['outcome']}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"quick": q, "extractor": args.extractor, "embedder": embedder,
                                    "python": sys.version.split()[0], "cpus": os.cpu_count(), "rows": rows},
                                   indent=2) + "\n")
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        _case, _data, _home, _extractor, _embedder = sys.argv[2:7]
        _out = _child(_case, Path(_data), Path(_home), _extractor, _embedder)
        _out["peak_rss_mb"] = round(_peak_rss_mb(), 1)
        print(json.dumps(_out), flush=True)
    else:
        main()

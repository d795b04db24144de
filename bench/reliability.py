"""The heavy versions of the reliability suite (tests/reliability/), with one table of findings.

Sections (each can be run alone with ``--only``):

- ``processes``: 8 writer processes x 1,000 mixed writes (documents with overlapping entities,
  memories, pages of their own, pages all writers overwrite) + 1 reader, on one knowledge base;
  then lost acknowledged writes, integrity_check, evidence against a serial replay, wiki files
  against page rows, temp files, failed reads.
- ``kills``: 50 kill -9 at random points of a folder ingest (resumed each time), then a plain
  re-run; the store is checked after every kill and compared with an uninterrupted run at the end.
- ``fuzz``: 10,000 calls of the public API with hostile input (bench/reliability_fuzz.py):
  unexpected exception types, failed calls that wrote, calls over 10 s.
- ``escapes``: symlinks inside wiki/ and in ingested and skills folders pointing outside the
  knowledge base: files outside written, deleted or read (made searchable).
- ``resources``: peak RSS of big inputs (bench/reliability_resources.py).

    python bench/reliability.py               # full size (about half an hour on 2 cores)
    python bench/reliability.py --quick       # small sizes, a smoke run of every section
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import graphmem
from graphmem.errors import GraphmemError

HERE = Path(__file__).resolve().parent
SUITE = HERE.parent / "tests" / "reliability"
sys.path.insert(0, str(SUITE))
sys.path.insert(0, str(HERE))

from checks import integrity, problems, temp_files  # noqa: E402
from test_rel_crash import ENV, ingest_cmd, kill_repeatedly, make_corpus, snapshot  # noqa: E402
from test_rel_processes import run_mixed  # noqa: E402

import reliability_fuzz  # noqa: E402


def section_processes(procs: int, writes: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        res = run_mixed(Path(tmp) / "kb", procs=procs, writes=writes, timeout=3600)
        elapsed = time.perf_counter() - t0
    lost = len(res["lost_documents"]) + len(res["lost_memories"]) + len(res["lost_pages"]) + len(
        res["shared_page_mismatch"]) + len(res["missing_summaries"])
    return {"processes": procs, "writes_each": writes, "acknowledged": res["acknowledged"], "lost": lost,
            "busy_gave_up": res["busy"], "integrity": res["integrity"], "evidence_consistent":
            res["provenance"]["consistent"], "wiki_disagreements": sum(len(v) for v in res["wiki"].values()),
            "temp_files": len(res["temp_files"]), "reads": res["reads"], "read_failures": len(res["read_failures"]),
            "unexpected_errors": len(res["unexpected_errors"]), "problems": problems(res),
            "elapsed_s": round(elapsed, 1)}


def section_kills(trials: int, docs: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_corpus(root, docs)
        t0 = time.perf_counter()
        subprocess.run(ingest_cmd(root / "reference"), cwd=root, env=ENV, check=True, capture_output=True)
        want = snapshot(root / "reference")
        half_or_corrupt = 0
        try:
            kills = kill_repeatedly(root, root / "killed", want, kills=trials, seed=5)
        except AssertionError as exc:  # the store was unsound or a document incomplete after a kill
            half_or_corrupt, kills = 1, -1
            print(f"kills: {exc}", file=sys.stderr)
        rerun = subprocess.run(ingest_cmd(root / "killed"), cwd=root, env=ENV, capture_output=True, text=True)
        got = snapshot(root / "killed")
        stuck = int(rerun.returncode != 0 or got != want)
        return {"trials": trials, "kills_landed": kills, "documents": docs, "half_or_corrupt": half_or_corrupt,
                "integrity": integrity(root / "killed"), "stuck_reruns": stuck,
                "temp_files": len(temp_files(root / "killed")), "equals_uninterrupted": got == want,
                "elapsed_s": round(time.perf_counter() - t0, 1)}


def _tree(root: Path) -> dict[str, str]:
    """Path -> content hash of every file under ``root`` (what an escape would change)."""
    out = {}
    for dirpath, _, files in os.walk(root):
        for f in files:
            p = Path(dirpath) / f
            out[str(p.relative_to(root))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def section_escapes() -> dict[str, Any]:
    """Each attack plants a symlink to a folder or file outside the knowledge base, then runs the
    operation a user would; the outside folder must be unchanged and its secret never searchable."""
    secret = "zq-secret-token-7431"
    results: list[dict[str, Any]] = []

    def attack(name: str, plant: Callable[[Path, Path], None], act: Callable[[Any, Path], Any]) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            outside = root / "outside"
            outside.mkdir()
            (outside / "secret.md").write_text(f"# Secret\n\nThe vault code is {secret}.\n", encoding="utf-8")
            (outside / "log-target.md").write_text("keep me\n", encoding="utf-8")
            home = root / "kb"
            with graphmem.open(home, config={"embeddings": {"model": "none"}}) as kb:
                kb.wiki.write_page("note", "Victim", "A page that will be swapped for a link.\n")
                plant(home, outside)
                before = _tree(outside)
                error = None
                try:
                    act(kb, root)
                except GraphmemError as exc:
                    error = f"{type(exc).__name__}: {str(exc)[:120]}"
                except Exception as exc:  # noqa: BLE001 - an unexpected type is a finding too
                    error = f"UNEXPECTED {type(exc).__name__}: {exc}"[:160]
                after = _tree(outside)
                leaked = any(secret in json.dumps(h.to_dict() if hasattr(h, "to_dict") else h, default=str)
                             for h in _searches(kb, secret))
            results.append({"attack": name, "outside_changed": before != after, "secret_searchable": leaked,
                            "outcome": error or "completed"})

    def link(path: Path, target: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() or path.is_symlink():
            path.unlink()
        path.symlink_to(target)

    attack("wiki category folder -> outside, write a page",
           lambda h, o: link(h / "wiki" / "evil", o), lambda kb, r: kb.wiki.write_page("evil", "Planted", "x\n"))
    attack("wiki/ itself -> outside, write a page",
           lambda h, o: (__import__("shutil").rmtree(h / "wiki"), (h / "wiki").symlink_to(o)),
           lambda kb, r: kb.wiki.write_page("note", "Planted", "x\n"))
    attack("log.md -> outside file, write a page",
           lambda h, o: link(h / "wiki" / "log.md", o / "log-target.md"),
           lambda kb, r: kb.wiki.write_page("note", "Another", "y\n"))
    attack("index.md -> outside file, write a page",
           lambda h, o: link(h / "wiki" / "index.md", o / "log-target.md"),
           lambda kb, r: kb.wiki.write_page("note", "Third", "z\n"))
    attack("page file -> outside secret, sync and search",
           lambda h, o: link(h / "wiki" / "note" / "planted.md", o / "secret.md"), lambda kb, r: kb.wiki.sync())
    attack("indexed page swapped for a link, delete it",
           lambda h, o: link(h / "wiki" / "note" / "victim.md", o / "log-target.md"),
           lambda kb, r: kb.wiki.delete_page("note", "Victim"))
    attack("indexed page swapped for a link, rewrite it",
           lambda h, o: link(h / "wiki" / "note" / "victim.md", o / "log-target.md"),
           lambda kb, r: kb.wiki.write_page("note", "Victim", "rewritten\n"))
    attack("ingest a folder holding a file link and a folder link",
           lambda h, o: (link(h.parent / "docs" / "secret.md", o / "secret.md"), link(h.parent / "docs" / "sub", o),
                         (h.parent / "docs" / "real.md").write_text("# Real\n\nA real note.\n", encoding="utf-8")),
           lambda kb, r: kb.ingest_paths([r / "docs"]))
    attack("skills folder holding a linked SKILL.md and a linked folder",
           lambda h, o: (link(h.parent / "skills" / "a" / "SKILL.md", o / "secret.md"),
                         link(h.parent / "skills" / "b", o)),
           lambda kb, r: kb.skills.build([r / "skills"]))
    escapes = sum(r["outside_changed"] or r["secret_searchable"] for r in results)
    return {"attacks": len(results), "escapes": escapes,
            "unexpected": sum(r["outcome"].startswith("UNEXPECTED") for r in results), "details": results}


def _searches(kb: Any, token: str) -> list[Any]:
    out: list[Any] = []
    for call in (lambda: kb.search(token, kinds=("chunk", "page"), k=5).hits,
                 lambda: kb.wiki.search_wiki(token, k=5),
                 lambda: kb.skills.retrieve(f"vault code {token}", top_k=3)):
        try:
            out += list(call())
        except GraphmemError:
            pass
    return out


def section_resources(quick: bool) -> dict[str, Any]:
    script = HERE / "reliability_resources.py"
    if not script.exists():
        return {"skipped": "bench/reliability_resources.py is missing"}
    out = Path(tempfile.mkdtemp()) / "resources.json"
    cmd = [sys.executable, str(script), "--out", str(out), "--timeout", "3600"] + (["--quick"] if quick else [])
    proc = subprocess.run(cmd, capture_output=True, text=True)
    print(proc.stdout)
    if proc.returncode != 0:
        return {"error": proc.stderr[-2000:]}
    return json.loads(out.read_text(encoding="utf-8"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small sizes: a smoke run of every section")
    ap.add_argument("--only", nargs="*", choices=["processes", "kills", "fuzz", "escapes", "resources"])
    ap.add_argument("--out", type=Path, default=HERE / "results" / "reliability.json")
    args = ap.parse_args(argv)
    q = args.quick
    wanted = args.only or ["processes", "kills", "fuzz", "escapes", "resources"]
    report: dict[str, Any] = {"quick": q}
    for name in wanted:
        t0 = time.perf_counter()
        if name == "processes":
            report[name] = section_processes(procs=3 if q else 8, writes=100 if q else 1000)
        elif name == "kills":
            report[name] = section_kills(trials=5 if q else 50, docs=800 if q else 3000)
        elif name == "fuzz":
            fz = reliability_fuzz.run(300 if q else 10_000)
            report[name] = {k: v for k, v in fz.items() if k != "findings"} | {"findings": fz["findings"][:10]}
        elif name == "escapes":
            report[name] = section_escapes()
        else:
            report[name] = section_resources(q)
        print(f"[{name} done in {time.perf_counter() - t0:.0f} s]", file=sys.stderr)
    print_table(report)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2, default=str), encoding="utf-8")
    return 0 if all_hold(report) else 1


def print_table(r: dict[str, Any]) -> None:
    print("| check | size | result | target |")
    print("| --- | --- | --- | --- |")
    if "processes" in r:
        p = r["processes"]
        size = f"{p['processes']} processes x {p['writes_each']} writes + 1 reader ({p['elapsed_s']} s)"
        print(f"| lost acknowledged writes | {size}: {p['acknowledged']} acknowledged | {p['lost']} | 0 |")
        print(f"| corrupt stores (integrity_check) | same | {0 if p['integrity'] == 'ok' else 1} | 0 |")
        print(f"| evidence differs from a serial replay | same | {0 if p['evidence_consistent'] else 1} | 0 |")
        print(f"| wiki files vs page rows | same | {p['wiki_disagreements']} | 0 |")
        print(f"| failed reads | {p['reads']} reads | {p['read_failures']} | 0 |")
        print(f"| unexpected exceptions in writers | same | {p['unexpected_errors']} | 0 |")
        print(f"| temp files left | same | {p['temp_files']} | 0 |")
    if "kills" in r:
        k = r["kills"]
        size = f"{k['kills_landed']} kill -9 over a {k['documents']}-file ingest ({k['elapsed_s']} s)"
        print(f"| half documents or corrupt store after a kill | {size} | {k['half_or_corrupt']} | 0 |")
        print(f"| stuck re-runs (not equal to an uninterrupted run) | same | {k['stuck_reruns']} | 0 |")
        print(f"| temp files left after the re-run | same | {k['temp_files']} | 0 |")
    if "fuzz" in r:
        f = r["fuzz"]
        size = f"{f['calls']} hostile calls ({f['elapsed_s']} s; slowest {f['slowest_call_s']} s)"
        print(f"| unexpected exception types | {size} | {f['unexpected']} | 0 |")
        print(f"| failed calls that wrote | same | {f['wrote_on_failure']} | 0 |")
        print(f"| hangs over 10 s | same | {f['hangs']} | 0 |")
        print(f"| crashed processes | same | {f['crashes']} | 0 |")
    if "escapes" in r:
        e = r["escapes"]
        print(f"| reads or writes outside the knowledge base | {e['attacks']} symlink attacks | {e['escapes']} | 0 |")
    if "resources" in r and "cases" in r["resources"]:
        for c in r["resources"]["cases"]:
            target = "< 600 MB" if "jsonl" in c.get("case", "").lower() else "bounded"
            print(f"| peak RSS: {c.get('case')} | {c.get('input')} | {c.get('peak_rss_mb')} MB, {c.get('seconds')} s, "
                  f"{c.get('outcome')} | {target} |")


def all_hold(r: dict[str, Any]) -> bool:
    ok = True
    if "processes" in r:
        ok &= not r["processes"]["problems"]
    if "kills" in r:
        k = r["kills"]
        ok &= not (k["half_or_corrupt"] or k["stuck_reruns"] or k["temp_files"]) and k["integrity"] == "ok"
    if "fuzz" in r:
        f = r["fuzz"]
        ok &= not (f["unexpected"] or f["wrote_on_failure"] or f["hangs"] or f["crashes"])
    if "escapes" in r:
        ok &= not (r["escapes"]["escapes"] or r["escapes"]["unexpected"])
    return bool(ok)


if __name__ == "__main__":
    sys.exit(main())

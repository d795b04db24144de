"""``graphmem migrate --to TARGET``: copy a knowledge base into another backend (a PostgreSQL database, or a
folder whose graph.db is SQLite) and prove the copy.

The copy is the lossless export's rows (:meth:`PortableStore.dump_rows`, one read snapshot of the source)
loaded by the target's :meth:`PortableStore.load_rows` in one transaction, so that a failure leaves the target
as it was. A folder target also gets the source's config.toml (without ``[store] url``) and its wiki files; a
database target needs no files: the pages' text is in the store, and every folder pointed at it regenerates
its ``wiki/`` from there.

The target must be empty: copying into a knowledge base that already holds rows would mix two histories
(ids that collide replace each other, events interleave), and no undo could separate them again. There is no
``--force``: empty the database (``dropdb``/``createdb``) or name a new folder instead.

Verification, printed by the command: the rows of every copied table counted on both sides (the target has
one more event, ``kb.migrated``; of ``kb_meta`` every copied key must be there, a backend's own counters
aside), and the top-10 chunk search results of up to ``queries`` queries (document titles, then entity names)
compared between the two (overlap@10 per query, mean, and how many lists are identical). Within one backend
the searches must agree exactly; between SQLite and PostgreSQL, whose full-text statistics are kept apart
and rank near-ties differently, at mean overlap@10 >= 0.9.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from ..config_sections import STORE_URL_SCHEMES, check_store_url, redact_url
from ..context import Context
from ..embeddings.manager import EmbeddingManager
from ..errors import BackendError, Conflict, GraphmemError, InvalidInput
from ..retrieval.search import search
from ..store import Store, open_store
from ..wiki.files import FileTxn

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

__all__ = ["migrate", "is_store_url"]

# Rows the target may hold before the copy (schema bookkeeping written when a store is created) and that
# the copy replaces by key; a backend may keep some of their keys out of its dump (its own counters).
_BOOKKEEPING = ("kb_meta",)
_OWN_META = {"replay.since_event", "events.high"}
_TOP_K = 10
# Two backends rank near-ties apart (their full-text statistics are kept differently): a copy between
# backends is verified at the agreement target, a copy within one backend must search the same.
CROSS_BACKEND_OVERLAP = 0.9


def is_store_url(target: str) -> bool:
    """True when ``target`` is written as a URL (``scheme://...``) rather than a folder path."""
    scheme, sep, _ = target.partition("://")
    return bool(sep) and scheme.isascii() and scheme.replace("+", "").isalnum()


def _is_empty(store: Store) -> bool:
    for table in store.dump_tables():
        if table in _BOOKKEEPING:
            continue
        for _ in store.dump_rows([table]):
            return False
    return True


def _counted(rows: Iterable[tuple[str, dict[str, Any]]], counts: dict[str, int], meta: set[str]
             ) -> Iterator[tuple[str, dict[str, Any]]]:
    for table, row in rows:
        counts[table] = counts.get(table, 0) + 1
        if table == "kb_meta":
            meta.add(str(row.get("key")))
        yield table, row


def _table_counts(store: Store) -> dict[str, int]:
    counts: dict[str, int] = {}
    for table, _ in store.dump_rows():
        counts[table] = counts.get(table, 0) + 1
    return counts


def _queries(store: Store, n: int) -> list[str]:
    """Up to ``n`` distinct queries from the data itself: document titles first, then entity names."""
    out: list[str] = []
    seen: set[str] = set()
    for table, field in (("documents", "title"), ("nodes", "name")):
        if table not in store.dump_tables():
            continue
        for _, row in store.dump_rows([table]):
            text = str(row.get(field) or "").strip()
            if table == "nodes" and row.get("kind") != "entity":
                continue
            if text and text.lower() not in seen:
                seen.add(text.lower())
                out.append(text)
                if len(out) >= n:
                    return out
    return out


def _top_ids(ctx: Context, query: str) -> list[str]:
    return [h.id for h in search(ctx, query, kinds=("chunk",), k=_TOP_K).hits]


def compare_searches(source: Context, target: Context, queries: Iterable[str]) -> dict[str, Any]:
    """Top-10 chunk ids of each query on both sides: overlap@10 per query (shared ids / the longer list;
    two empty lists agree), their mean, and how many lists are identical in order."""
    rows: list[dict[str, Any]] = []
    for q in queries:
        a, b = _top_ids(source, q), _top_ids(target, q)
        longest = max(len(a), len(b))
        overlap = 1.0 if longest == 0 else len(set(a) & set(b)) / longest
        rows.append({"query": q, "overlap": round(overlap, 4), "identical": a == b, "hits": len(a)})
    mean = sum(r["overlap"] for r in rows) / len(rows) if rows else 1.0
    return {"queries": len(rows), "mean_overlap_at_10": round(mean, 4),
            "identical": sum(1 for r in rows if r["identical"]), "per_query": rows}


def _toml_key(key: str) -> str:
    return key if key and all(c.isascii() and (c.isalnum() or c in "-_") for c in key) else json.dumps(key)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a TOML basic string (\uXXXX escapes included)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_toml_key(str(k))} = {_toml_value(v)}" for k, v in value.items()) + "}"
    return value.isoformat() if hasattr(value, "isoformat") else json.dumps(str(value))  # TOML dates and times


def _toml_tables(data: Mapping[str, Any], prefix: str = "") -> list[str]:
    lines = [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in data.items() if not isinstance(v, Mapping)]
    for key, value in data.items():
        if isinstance(value, Mapping):
            name = f"{prefix}{_toml_key(key)}"
            lines += ["", f"[{name}]", *_toml_tables(value, name + ".")]
    return lines


def _target_config_text(home: Path, warn: list[str]) -> str | None:
    """The source's config.toml for the copy: the same settings without ``[store] url`` (the copy is the
    folder's own graph.db; a url left in it, in whatever TOML spelling, would send the copy's writes to the
    source). Parsed with tomllib; a file without a url is copied as it is (its comments kept), one with a url
    is written again from the parsed settings."""
    path = home / "config.toml"
    if not path.is_file():
        return None
    text = path.read_bytes().decode("utf-8", errors="replace")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidInput(f"{path}: not valid TOML ({exc}); fix it before migrating; nothing was copied") from None
    store = data.get("store")
    if not isinstance(store, dict) or "url" not in store:
        return text
    store.pop("url")
    if not store:
        data.pop("store")
    warn.append(f"{home / 'config.toml'} names a store url; the copy's config.toml leaves it out (the copy keeps "
                "its store in its own graph.db) and is written again from the settings, without the comments")
    header = [f"# graphmem knowledge base configuration, copied from {home} by graphmem migrate without [store] url."]
    return "\n".join(header + _toml_tables(data)).strip("\n") + "\n"


def _source_wiki_files(home: Path) -> dict[str, bytes]:
    """``{path relative to home: bytes}`` of every regular file under ``home/wiki`` (copied as bytes, whatever
    their encoding; links are not followed and temp files are left out)."""
    root = home / "wiki"
    files: dict[str, bytes] = {}
    if not root.is_dir() or root.is_symlink():
        return files
    for folder, _dirs, names in os.walk(root):  # os.walk does not descend into linked folders
        for name in sorted(names):
            path = Path(folder) / name
            if name.endswith(".tmp") or not stat.S_ISREG(os.lstat(path).st_mode):
                continue
            try:
                files[path.relative_to(home).as_posix()] = path.read_bytes()
            except OSError as exc:
                raise BackendError(f"cannot read {path}: {exc.strerror}; nothing was copied") from None
    return files


def _page_file(slug: str, path: str) -> str:
    """``wiki/<path>`` of a page, refused when the stored path would leave the wiki folder."""
    parts = PurePosixPath(path).parts
    if not parts or path.startswith("/") or "\\" in path or any(p in ("", ".", "..") for p in parts):
        raise InvalidInput(f"wiki page {slug!r}: its path {path!r} leaves the wiki folder; fix or delete that page "
                           "in the source before migrating to a folder; nothing was copied")
    return f"wiki/{path}"


def _page_files(ctx: Context) -> dict[str, bytes]:
    """Every wiki file for a folder target: the source folder's files, with each page's text taken from the
    store (the source of truth; a folder on another host may be behind it)."""
    files = _source_wiki_files(ctx.home)
    for page in ctx.store.list_pages():
        full = ctx.store.get_page(page.slug, with_content=True)
        # ``text`` is the file's exact text (front matter and markers included); ``content`` is only the
        # indexed body. A row stored before pages kept their text has none: its folder's file stands.
        if full is not None and full.text:
            files[_page_file(full.slug, full.path)] = full.text.encode("utf-8")
    return files


def _open_target(ctx: Context, target: str) -> tuple[Store, Path, str, str | None]:
    """``(store, home for the target's context, what to call it, url or None)``; refuses the source itself."""
    source_url = ctx.config.store.url
    if is_store_url(target):
        if target.partition("://")[0].lower() not in STORE_URL_SCHEMES:
            raise InvalidInput(f"--to: {redact_url(target)!r} is neither a PostgreSQL URL (postgresql://user@host/db) "
                               "nor a folder path; name one of them")
        url = check_store_url(target, "--to")
        if source_url and url.rstrip("/") == source_url.rstrip("/"):
            raise InvalidInput("--to: that is this knowledge base's own store; name another database")
        store = open_store(ctx.home, busy_timeout=ctx.config.store.busy_timeout, url=url)
        return store, ctx.home, redact_url(url), url
    folder = Path(target)
    if folder.exists() and not folder.is_dir():
        raise InvalidInput(f"--to: {folder} exists and is not a folder; name a new folder or a PostgreSQL URL")
    if not source_url and folder.resolve() == ctx.home.resolve():
        raise InvalidInput("--to: that is this knowledge base's own folder; name a new folder")
    if folder.resolve().is_relative_to(ctx.home.resolve()):  # its wiki/ would then hold a second wiki
        raise InvalidInput(f"--to: {folder} is inside this knowledge base's folder; name a folder outside it")
    if folder.is_dir() and any(folder.iterdir()):
        raise Conflict(f"--to: the folder {folder} is not empty; migrate into a new folder so that nothing is mixed; "
                       "nothing was copied")
    try:
        (folder / "wiki").mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InvalidInput(f"--to: cannot create {folder}: {exc.strerror}") from None
    store = open_store(folder, busy_timeout=ctx.config.store.busy_timeout)
    return store, folder, str(folder), None


def migrate(ctx: Context, target: str, queries: int = 20) -> dict[str, Any]:
    """Copy the knowledge base of ``ctx`` to ``target`` (a PostgreSQL URL or a new folder) and verify the copy.

    Returns ``{"source", "target", "backend", "rows", "counts": {table: {"source", "target", "ok"}}, "counts_ok",
    "files", "search": {...}, "ok"}``. An empty target is required (Conflict otherwise, nothing copied)."""
    if not isinstance(target, str) or not target.strip():
        raise InvalidInput("--to: give a PostgreSQL URL (postgresql://user@host/db) or a new folder path")
    if not isinstance(queries, int) or isinstance(queries, bool) or not 0 <= queries <= 1000:
        raise InvalidInput(f"--queries: {queries!r} must be a whole number from 0 to 1000")
    target = target.strip()
    source = ctx.store
    folder_target = not is_store_url(target)
    created_folder = folder_target and not Path(target).exists()
    tstore, thome, name, url = _open_target(ctx, target)
    try:
        if not _is_empty(tstore):  # early, before any work: the check that counts is the one under the lock
            raise _not_empty(name)
        warnings: list[str] = []
        files = _page_files(ctx) if url is None else {}
        config_text = _target_config_text(ctx.home, warnings) if url is None else None
        if url is None and os.environ.get("GRAPHMEM_STORE", "").strip():
            warnings.append("GRAPHMEM_STORE is set in this environment: opened here, the copy would use that "
                            f"store instead of its graph.db; unset it to use {thome}")
        copied: dict[str, int] = {}
        meta_keys: set[str] = set()
        with tstore.transaction():
            # again under the target's write lock: a host that wrote after the first check would otherwise
            # have its rows replaced by key and its event ids reused
            if not _is_empty(tstore):
                raise _not_empty(name)
            tstore.load_rows(_counted(source.dump_rows(), copied, meta_keys))
            tstore.set_meta("replay.since_event", str(tstore.last_event_id()))

            def write_files() -> None:  # before COMMIT: a failure here rolls the rows back too
                ftx = FileTxn(thome / "wiki")  # no '..', no links: the wiki's own checked writes
                try:
                    for rel, data in files.items():
                        ftx.write(thome / rel, data, old=None)
                    ftx.commit()
                except BaseException:
                    ftx.undo()
                    raise
                if config_text is not None:
                    fd = os.open(thome / "config.toml", os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
                    with os.fdopen(fd, "w", encoding="utf-8") as out:
                        out.write(config_text)

            tstore.on_commit(before=write_files)
            tstore.append_event("kb.migrated", name, ctx.now(), {
                "from": redact_url(ctx.config.store.url) if ctx.config.store.url else str(ctx.home),
                "rows": sum(copied.values()), "files": len(files)})
        report = _verify(ctx, tstore, thome, copied, meta_keys, queries)
        for message in warnings:
            ctx.warn(message)
        return {"source": redact_url(ctx.config.store.url) if ctx.config.store.url else str(ctx.home),
                "target": name, "backend": tstore.backend, "rows": sum(copied.values()), "files": len(files),
                **report, "warnings": warnings}
    except BaseException as exc:
        if folder_target:
            _remove_new_folder(Path(target), created_folder)
        if isinstance(exc, GraphmemError) or not isinstance(exc, Exception):
            raise
        detail = str(exc).replace(target, name)  # a driver's message may quote the url: shown redacted
        raise BackendError(f"--to: copying to {name} failed ({type(exc).__name__}: {detail}); "
                           + ("the half-made folder was removed" if folder_target else "nothing was copied")
                           ) from None
    finally:
        tstore.close()


def _not_empty(name: str) -> Conflict:
    return Conflict(f"--to: {name} already holds a knowledge base; migrate into an empty database (dropdb and "
                    "createdb it) or a new folder, so that two histories are never mixed; nothing was copied")


def _remove_new_folder(folder: Path, created: bool) -> None:
    """Undo a folder copy that failed: what the copy put there (the folder was new or empty), and the folder
    itself when this call created it."""
    for name in ("graph.db", "graph.db-wal", "graph.db-shm", "config.toml"):
        try:
            (folder / name).unlink(missing_ok=True)
        except OSError:
            pass
    wiki = folder / "wiki"
    if wiki.is_dir() and not wiki.is_symlink():
        for path in sorted(wiki.rglob("*"), reverse=True):
            try:
                path.rmdir() if path.is_dir() and not path.is_symlink() else path.unlink()
            except OSError:
                pass
    for path in (wiki, folder) if created else (wiki,):
        try:
            path.rmdir()
        except OSError:
            pass


def _verify(ctx: Context, tstore: Store, thome: Path, copied: dict[str, int], meta_keys: set[str],
            queries: int) -> dict[str, Any]:
    after = _table_counts(tstore)
    target_meta = {str(row.get("key")) for _, row in tstore.dump_rows(["kb_meta"])} if "kb_meta" in after else set()
    counts: dict[str, dict[str, Any]] = {}
    for table in sorted(set(copied) | set(after)):
        want = copied.get(table, 0) + (1 if table == "events" else 0)  # + the kb.migrated event
        got = after.get(table, 0)
        # bookkeeping: every key copied is there (a backend's own counters may be left out of its dump)
        ok = (meta_keys - _OWN_META) <= target_meta if table in _BOOKKEEPING else got == want
        counts[table] = {"source": copied.get(table, 0), "target": got, "ok": ok}
    counts_ok = all(bool(c["ok"]) for c in counts.values())
    tctx = Context(home=thome, config=ctx.config, store=tstore, clock=ctx.clock)
    tctx.embeddings = EmbeddingManager(tctx)
    compared = compare_searches(ctx, tctx, _queries(ctx.store, queries))
    compared["required_overlap"] = need = 1.0 if tstore.backend == ctx.store.backend else CROSS_BACKEND_OVERLAP
    ok = counts_ok and compared["mean_overlap_at_10"] >= need
    return {"counts": counts, "counts_ok": counts_ok, "search": compared, "ok": ok}


def render(report: dict[str, Any]) -> str:
    """The verification as lines for a person."""
    lines = [f"migrated {report['rows']} rows and {report['files']} wiki files from {report['source']} to "
             f"{report['target']} ({report['backend']})", "  table                  source   target"]
    for table, c in report["counts"].items():
        lines.append(f"  {table:<22} {c['source']:>7}  {c['target']:>7}" + ("" if c["ok"] else "  MISMATCH"))
    s = report["search"]
    lines.append(f"  search: {s['queries']} queries, mean overlap@10 {s['mean_overlap_at_10']:.3f} (needed "
                 f"{s['required_overlap']:.2f}), {s['identical']} identical top-10 lists")
    lines += [f"warning: {w}" for w in report.get("warnings", [])]
    lines.append("verified: counts and searches agree" if report["ok"] else "NOT verified: see the rows above "
                 "(--json for every query)")
    return "\n".join(lines)

"""Bulk and incremental ingest of files and folders (the ``graphmem ingest PATH...`` job).

Flow: discover files -> read each into SourceDocuments (readers) -> skip those whose content
hash is already stored (no extraction, milliseconds) -> extract (a pool of workers, so reading
and extraction overlap with the single writer) -> validate -> write in batched transactions
(a batch where a document fails half-way is written again with one savepoint per document). Ctrl-C
during extraction leaves the batch's finished documents committed (with their vectors) and the
unfinished ones absent, during a document's write (or the batch's embedding) the batch absent; the
next run resumes because finished documents are then "unchanged".
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..context import DELETE_DOCUMENT, WIKI_DEFERRED, WIKI_FLUSH, WIKI_FLUSH_DUE
from ..errors import GraphmemError, InvalidInput, StoreBusy
from ..extraction import Extraction
from ..text import content_hash
from ..trust import endpoint_api_key
from .batch_vectors import await_extractions, prefetch_vectors
from .core import ingest_document, same_version
from .discover import discover, probe
from .doc_ids import SOURCE_FILE_KEY, DocIds, absolute
from .extractors.base import ExtractionError, Extractor, SourceDocument, validate_extraction
from .readers import BULK_READERS, NotText, Skipped, reader_for, reader_overrides
from .readers import bulk as bulk_reader
from .summary import IngestSummary

if TYPE_CHECKING:
    from ..context import Context

__all__ = ["IngestSummary", "ingest_paths", "ingest_documents", "make_extractor", "discover"]

ProgressFn = Callable[[int, int, str], None]


class _FilesLeft:
    """How many discovered files are not opened yet (for the progress estimate)."""

    def __init__(self, n: int) -> None:
        self.n = n


def _read_files(ctx: Context, found: Iterable[tuple[Path | Skipped, str]], summary: IngestSummary,
                as_jsonl: bool = False, left: _FilesLeft | None = None) -> Iterator[SourceDocument]:
    """Documents of the discovered files, one file at a time: a single-document file is read,
    decoded and its bytes dropped before its document moves on; a bulk file is streamed record
    by record. Nothing is read ahead of what the writer asks for."""
    cfg = ctx.config.ingest
    overrides = reader_overrides(cfg.readers)
    # A record id given twice in one run (in one bulk file or two) made the two texts take turns as the
    # latest version: every re-run of unchanged files added a version. The first one given wins. Each id maps
    # to its file's id (one string per file, shared): about 90 bytes per record, 90 MB for a million.
    given: dict[str, str] = {}
    for item, doc_id in found:
        if left is not None:
            left.n -= 1
        if isinstance(item, Skipped):
            summary.skipped.append(item)
            continue
        reader = bulk_reader.read if as_jsonl else reader_for(item, overrides)
        if reader is None:
            summary.skipped.append(Skipped(doc_id, _unsupported(item)))
            continue
        is_bulk = reader in BULK_READERS
        limit_mb = cfg.max_bulk_file_mb if is_bulk else cfg.max_file_mb
        try:
            size = item.stat().st_size
            if size > limit_mb * 1e6:
                key = "max_bulk_file_mb" if is_bulk else "max_file_mb"
                summary.skipped.append(Skipped(doc_id, f"file is {size / 1e6:.1f} MB, over ingest.{key} "
                                                       f"({limit_mb:g}); raise it in config.toml to ingest it"))
                continue
            if size == 0:
                summary.skipped.append(Skipped(doc_id, "empty file"))
                continue
            if is_bulk:
                outputs: Iterable[SourceDocument | Skipped] = bulk_reader.read_file(
                    item, doc_id, cfg.max_record_chars,
                    jsonl=True if as_jsonl or reader is bulk_reader.read_jsonl
                    else False if overrides.get(item.suffix.lower()) == "json" else None)
            else:
                raw = item.read_bytes()
                # The reader's documents are small in number (one, for every format but bulk):
                # take them and drop the bytes now, so a big file is not held twice downstream.
                # The document records its file, so a same-named file of another folder is told
                # apart from it later (ingest/doc_ids.py).
                source_file = str(absolute(item))
                outputs = [dataclasses.replace(o, metadata={**o.metadata, SOURCE_FILE_KEY: source_file})
                           if isinstance(o, SourceDocument) else o for o in reader(item, doc_id, raw)]
                del raw
        except OSError as exc:
            summary.skipped.append(Skipped(doc_id, f"cannot read ({exc.strerror})"))
            continue
        except NotText as exc:
            summary.skipped.append(Skipped(doc_id, str(exc)))
            continue
        try:
            for out in outputs:
                if isinstance(out, Skipped):
                    summary.skipped.append(out)
                elif not out.text.strip():
                    summary.skipped.append(Skipped(out.doc_id, "no text in the document"))
                elif out.doc_id in given:
                    summary.skipped.append(Skipped(out.source or doc_id, f"id {out.doc_id!r} is given again (first "
                                                   f"in {given[out.doc_id]}); ids must be unique: this one is "
                                                   "left out"))
                else:
                    given[out.doc_id] = doc_id
                    yield out
        except NotText as exc:
            summary.skipped.append(Skipped(doc_id, str(exc)))
        except OSError as exc:
            summary.skipped.append(Skipped(doc_id, f"cannot read ({exc.strerror})"))
        del outputs


def _unsupported(item: Path) -> str:
    suffix = item.suffix.lower()
    if not suffix:
        return f"unsupported file type '{item.name}' (no extension: no reader applies)"
    return (f"unsupported file type '{suffix}' (to read it as plain text, add \"{suffix}\" = \"text\" "
            "under [ingest.readers] in config.toml)")


# -- extraction ----------------------------------------------------------------------------------


def make_extractor(ctx: Context, name: str | None) -> Extractor | None:
    """The extractor named ``name`` (default: config ``ingest.extractor``); None for 'none'."""
    name = (name or ctx.config.ingest.extractor).lower()
    if name == "none":
        return None
    if name == "offline":
        from .extractors.offline import OfflineExtractor

        return OfflineExtractor()
    if name == "llm":
        from .extractors.llm import LLMExtractor

        llm_cfg: dict[str, Any] = dataclasses.asdict(ctx.config.llm)  # the extractor's options, as plain data
        llm_cfg.setdefault("cache_dir", str(ctx.home / "cache" / "llm"))
        # The env key only goes to an address the user chose (raises before anything is sent).
        llm_cfg["api_key"] = endpoint_api_key(ctx.config, ctx.home, "llm") or ""
        return LLMExtractor.from_config(llm_cfg)
    raise InvalidInput(f"unknown extractor '{name}'; choose offline, llm or none")


def _extract(extractor: Extractor | None, doc: SourceDocument, min_conf: float
             ) -> tuple[Extraction, list[str]] | ExtractionError:
    if doc.extraction is not None:  # agent-supplied: used as given, validated like the rest
        valid, warnings = validate_extraction(doc.extraction, doc.text, min_conf, source="supplied extraction")
        return valid, [f"supplied extraction: {w}" for w in _extra_warnings(doc.extraction)] + warnings
    if extractor is None:
        return Extraction(), []
    try:
        ex = extractor.extract(doc)
    except ExtractionError as exc:
        return exc
    valid, warnings = validate_extraction(ex, doc.text, min_conf, source=f"{extractor.name} extractor")
    return valid, _extra_warnings(ex) + warnings


def _extra_warnings(ex: Extraction) -> list[str]:
    """What the extraction's producer or its parser said (e.g. fields the contract does not read)."""
    return list(ex.extra.get("warnings", [])) if isinstance(ex.extra, dict) else []


# -- the writer loop ------------------------------------------------------------------------------


def ingest_documents(
    ctx: Context,
    docs: Iterable[SourceDocument],
    extractor: Extractor | None = None,
    on_progress: ProgressFn | None = None,
    summary: IngestSummary | None = None,
    workers: int = 2,
    total: int | None = None,
    on_stage: Callable[[str], None] | None = None,
) -> IngestSummary:
    """Ingest documents: skip unchanged ones, extract concurrently, write in batches.
    ``on_stage(what)`` names a step without a count (the final wiki update).

    ``on_progress(done, total, last_doc_id)`` is called after each written batch and after each
    look-ahead window of unchanged documents; ``total`` is an estimate (at least the documents
    seen so far) until the input is exhausted, then exact.
    """
    summary = summary or IngestSummary()
    summary.extractor = extractor.name if extractor else "none"
    store = ctx.store
    batch_size = max(1, int(ctx.config.ingest.batch_size))
    min_conf = ctx.config.graph.min_confidence
    started = time.perf_counter()
    seen = 0  # documents decided so far: unchanged, written, skipped or failed
    exhausted = False
    last_id = ""
    pending: deque[tuple[SourceDocument, Future[Any]]] = deque()
    pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="graphmem-extract")
    it = iter(docs)

    def report() -> None:
        if on_progress:
            known = seen + len(pending)
            estimate = known if exhausted or total is None else max(total, known)
            on_progress(seen, estimate, last_id)

    def fill() -> None:
        # Look ahead a window of documents and drop unchanged ones before any extraction. A
        # window may be entirely unchanged (a re-run over a big folder): then read the next one,
        # until there is work to do or the input ends -- stopping there lost every later file.
        nonlocal seen, exhausted, last_id
        while not exhausted and len(pending) < batch_size * 2:
            window: list[SourceDocument] = []
            while len(pending) + len(window) < batch_size * 2:
                try:
                    window.append(next(it))
                except StopIteration:
                    exhausted = True
                    break
            if not window:
                return
            stored = store.latest_documents(d.doc_id for d in window)
            unchanged = 0
            for d in window:
                was = stored.get(d.doc_id)
                if was is not None and same_version(was, content_hash(d.text), d.doc_id, d.title):
                    unchanged += 1
                else:
                    pending.append((d, pool.submit(_extract, extractor, d, min_conf)))
            summary.unchanged += unchanged
            summary.documents += unchanged
            seen += unchanged
            if unchanged == len(window):  # nothing to write: show the run of unchanged files moving
                last_id = window[-1].doc_id
                report()

    try:
        fill()
        while pending and not summary.interrupted:
            batch = [pending[i] for i in range(min(batch_size, len(pending)))]
            if await_extractions(ctx, batch):
                # Ctrl-C while the batch's extractions were awaited: the finished documents are written (and
                # embedded) as usual, the unfinished ones left for the next run; then the run stops.
                summary.interrupted = True
                batch = [item for item in batch if item[1].done()]
                done = {id(item) for item in batch}
                rest = [item for item in pending if id(item) not in done]
                pending.clear()
                pending.extend([*batch, *rest])  # written in order from the left
            prefetch_vectors(ctx, batch)
            try:
                written = _write_batch(ctx, batch, guarded=False)
            except _DocumentFailed:
                # A document failed half-way: the batch was rolled back; it is written again with a savepoint
                # per document, so that the failing one is skipped alone.
                written = _write_batch(ctx, batch, guarded=True)
            for doc, outcome in written.outcomes:
                pending.popleft()
                last_id = doc.doc_id
                seen += 1
                if isinstance(outcome, _Failed):
                    summary.failed.append(outcome.why)
                    continue
                if isinstance(outcome, Skipped):
                    summary.skipped.append(outcome)
                    continue
                res, warnings = outcome
                summary.documents += 1
                if res.status == "unchanged":
                    summary.unchanged += 1
                else:
                    summary.added += res.status == "added"
                    summary.new_versions += res.status == "new_version"
                    summary.chunks += res.chunk_count
                    summary.entities += res.nodes_added
                    summary.relations += res.edges_added
                    summary.mentions += res.mentions_added
                    # a refused front matter (YAML aliases, bad YAML, too big) is kept as text: say so once
                    problem = doc.metadata.get("front_matter_problem") if isinstance(doc.metadata, dict) else None
                    said = [f"front matter not read: {problem}"] if isinstance(problem, str) else []
                    summary.warnings.extend(f"{doc.doc_id}: {w}" for w in said + warnings + res.warnings)
            if written.interrupted or summary.interrupted:
                summary.interrupted = True
                if pending:  # the document being extracted or written when Ctrl-C came
                    last_id = pending[0][0].doc_id
            ctx.hooks.call(WIKI_FLUSH_DUE, summary.warnings)  # generated wiki pages: once per wiki.bulk_flush_docs
            if not summary.interrupted:
                fill()
            report()
        if not summary.interrupted:
            if on_stage:
                on_stage("updating wiki pages")  # can take many seconds after the last document
            # The rest (an interrupted run leaves them marked for the next).
            ctx.hooks.call(WIKI_FLUSH, summary.warnings)
            _compact_text_indexes(ctx, summary, on_stage)
    except KeyboardInterrupt:
        summary.interrupted = True
    finally:
        for _, fut in pending:
            fut.cancel()
        pool.shutdown(wait=not summary.interrupted, cancel_futures=True)
        summary.elapsed = time.perf_counter() - started
    return summary


def _compact_text_indexes(ctx: Context, summary: IngestSummary, on_stage: Callable[[str], None] | None) -> None:
    """After a run that wrote a good share of the passages or names, merge their full-text index segments
    (search reads every segment). Decided before taking the write lock; skipped, never waited for, when
    another process is writing (the merge then holds the lock about a second per 200k passages)."""
    written = {"chunks": summary.chunks, "names": summary.entities}
    due = ctx.store.text_indexes_due(written) if any(written.values()) and not ctx.store.read_only else []
    if due:
        if on_stage:
            on_stage("merging the full-text index segments")
        ctx.store.try_write(lambda: ctx.store.compact_text_indexes(due), what="the full-text index merge")


class _DocumentFailed(Exception):
    """A document of an unguarded batch failed after writing some of its rows (the batch is rolled back)."""


@dataclass
class _Failed:
    """A document whose extraction failed (reported apart from documents skipped for their input)."""

    why: Skipped


@dataclass
class _Written:
    """What one batch transaction committed: per document in order, its result and extraction warnings or why
    it was left out; ``interrupted``: Ctrl-C stopped the batch (``lost``: and the batch was rolled back)."""

    outcomes: list[tuple[SourceDocument, Any]] = field(default_factory=list)
    interrupted: bool = False
    lost: bool = False


def _write_batch(ctx: Context, batch: Sequence[tuple[SourceDocument, Future[Any]]], guarded: bool) -> _Written:
    """Write ``batch`` in one transaction. ``guarded``: each document in its own savepoint, so that one failing
    half-way is undone alone; unguarded (the first try), such a failure raises :class:`_DocumentFailed` and
    takes the whole transaction back. A savepoint per document made every full-text index write its pending
    terms as a new segment per document (~10 % of a store-only ingest); failures half-way are rare."""
    store = ctx.store
    written = _Written()
    try:
        with store.transaction(), _wiki_deferred(ctx):
            for doc, fut in batch:
                try:
                    outcome = fut.result()
                except KeyboardInterrupt:  # in extraction: nothing of this document is written yet
                    written.interrupted = True
                    break
                except GraphmemError as exc:
                    written.outcomes.append((doc, Skipped(doc.doc_id, str(exc))))
                    continue
                if isinstance(outcome, ExtractionError):
                    written.outcomes.append((doc, _Failed(Skipped(doc.doc_id, f"extraction failed: {outcome}"))))
                    continue
                extraction, warnings = outcome
                meta = {**doc.metadata, **({"pages": [list(p) for p in doc.pages]} if doc.pages else {})}
                try:
                    with store.savepoint() if guarded else nullcontext():
                        res = ingest_document(ctx, doc.doc_id, doc.title, doc.source, doc.text, extraction, meta)
                except KeyboardInterrupt:
                    if not guarded:  # half a document in the transaction: none of the batch is kept
                        raise
                    written.interrupted = True  # the savepoint undid the current document
                    break
                except GraphmemError as exc:
                    if not guarded:
                        raise _DocumentFailed() from exc
                    written.outcomes.append((doc, Skipped(doc.doc_id, str(exc))))
                    continue
                written.outcomes.append((doc, (res, warnings)))
    except KeyboardInterrupt:
        return _Written(interrupted=True, lost=True)
    return written


def _wiki_deferred(ctx: Context) -> AbstractContextManager[Any]:
    """The wiki's hold on page regeneration for one batch (pages are regenerated by the flush
    hooks, not at the end of every batch); nothing to hold without a wiki."""
    held = ctx.hooks.first(WIKI_DEFERRED, flush=False)
    return held if held is not None else nullcontext()


def ingest_paths(
    ctx: Context,
    paths: Sequence[str | os.PathLike[str]],
    *,
    glob: str | None = None,
    extractor: str | Extractor | None = None,
    excludes: Sequence[str] = (),
    prune: bool = False,
    on_progress: ProgressFn | None = None,
    workers: int | None = None,
    as_jsonl: bool = False,
    follow_symlinks: bool = False,
    on_stage: Callable[[str], None] | None = None,
) -> IngestSummary:
    """Ingest files and folders (recursive). See the module docstring for the flow. Symbolic
    links are listed in ``summary.skipped`` and not followed unless ``follow_symlinks``."""
    if not paths:
        raise InvalidInput("give at least one file or folder to ingest")
    reader_overrides(ctx.config.ingest.readers)  # a typo there stops the ingest before any file is read
    ex = extractor if (extractor is not None and not isinstance(extractor, str)) else make_extractor(ctx, extractor)
    summary = IngestSummary()
    # Discovery lists paths only (no file is opened), which gives the progress bar an estimate:
    # documents seen so far plus files not opened yet (a bulk file counts as one until read).
    ids = DocIds(ctx)
    found = _discover_with_ids(ids, paths, glob, excludes, follow_symlinks, ctx.home)
    left = _FilesLeft(len(found))
    progress = None
    if on_progress is not None:
        def progress(done: int, known: int, doc_id: str) -> None:
            on_progress(done, known + left.n, doc_id)

    docs = _read_files(ctx, found, summary, as_jsonl, left)
    n_workers = workers if workers is not None else ctx.config.ingest.workers
    ingest_documents(ctx, docs, ex, progress, summary, n_workers, on_stage=on_stage)
    if not summary.interrupted:
        try:
            ids.remember(p for p in paths if probe(Path(p).is_dir))
        except StoreBusy as exc:
            # Every document is committed by now: a busy lock here must not turn the run into "nothing was
            # written" (the CLI's exit 1) and lose its summary. Only the folder's record waits for the next run.
            summary.warnings.append(f"the folders given were not recorded for later runs ({exc}); the documents "
                                    "are stored: ingest the folder again to record it")
    if prune and not summary.interrupted:
        summary.pruned = _prune(ctx, paths, ids)
    return summary


def _discover_with_ids(ids: DocIds, paths: Sequence[str | os.PathLike[str]], glob: str | None,
                       excludes: Sequence[str], follow_symlinks: bool,
                       home: Path) -> list[tuple[Path | Skipped, str]]:
    """Every discovered file with its document id (ingest/doc_ids.py), before anything is read:
    an id two different files would share is refused here, so a refused command writes nothing;
    a file given twice is listed once."""
    found: list[tuple[Path | Skipped, str]] = []
    for raw in paths:
        anchor = ids.anchor_for(raw)

        def id_of(path: Path, anchor: Path = anchor) -> str:
            return ids.id_for(path, anchor)

        for item in discover([raw], glob, excludes, follow_symlinks, id_of=id_of, leave_out=home):
            if isinstance(item, Skipped):
                found.append((item, item.path))
                continue
            doc_id = id_of(item)
            if ids.claim(doc_id, item):
                found.append((item, doc_id))
    older = ids.keep_older_ids([(item, doc_id) for item, doc_id in found if not isinstance(item, Skipped)])
    if older:
        found = [(item, older.get(doc_id, doc_id)) for item, doc_id in found]
    ids.refuse_other_files([(item, doc_id) for item, doc_id in found if not isinstance(item, Skipped)])
    return found


def _prune(ctx: Context, paths: Sequence[str | os.PathLike[str]], ids: DocIds) -> list[str]:
    """Delete documents that came from files under ``paths`` whose files are gone. A document
    that recorded its file is deleted only when that file is under the folder and gone (never a
    same-named folder's document); one stored before files were recorded is matched under every
    rule that could have named it (see DocIds.prune_bases), as before."""
    removed: list[str] = []
    for raw in paths:
        if not probe(Path(raw).is_dir):
            continue
        folder = absolute(raw)
        targets: dict[str, list[Path]] = {}
        for prefix, base in ids.prune_bases(raw):
            for doc_id, source in ctx.store.documents_by_source_prefix(prefix):
                targets.setdefault(doc_id, []).append(base / source.split("#", 1)[0])
        recorded = ctx.store.document_source_files(targets)
        for doc_id, rec in recorded.items():
            file = Path(rec)
            targets[doc_id] = [file] if folder in file.parents else []
        for doc_id, files in targets.items():
            gone = doc_id not in removed and files and not any(probe(f.exists, unknown=True) for f in files)
            if gone and ctx.hooks.call(DELETE_DOCUMENT, doc_id):  # no hook: nothing can delete it here
                removed.append(doc_id)
    return removed

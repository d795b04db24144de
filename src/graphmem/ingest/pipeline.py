"""Bulk and incremental ingest of files and folders (the ``graphmem ingest PATH...`` job).

Flow: discover files -> read each into SourceDocuments (readers) -> skip those whose content
hash is already stored (no extraction, milliseconds) -> extract (a pool of workers, so reading
and extraction overlap with the single writer) -> validate -> write in batched transactions,
one savepoint per document. Ctrl-C leaves every finished document committed and the current
one absent; the next run resumes because finished documents are then "unchanged".
"""

from __future__ import annotations

import fnmatch
import os
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import GraphmemError, InvalidInput
from ..extraction import Extraction
from ..text import content_hash
from ..trust import endpoint_api_key
from .chunking import chunk_spans
from .core import fact_text, ingest_document
from .extractors.base import ExtractionError, Extractor, SourceDocument, validate_extraction
from .readers import NotText, Skipped, reader_for
from .readers import bulk as bulk_reader

if TYPE_CHECKING:
    from ..kb import KnowledgeBase

__all__ = ["IngestSummary", "ingest_paths", "ingest_documents", "make_extractor", "discover"]

ProgressFn = Callable[[int, int, str], None]


@dataclass
class IngestSummary:
    """What a bulk ingest did."""

    added: int = 0
    unchanged: int = 0
    new_versions: int = 0
    skipped: list[Skipped] = field(default_factory=list)
    failed: list[Skipped] = field(default_factory=list)
    chunks: int = 0
    entities: int = 0
    relations: int = 0
    mentions: int = 0
    warnings: list[str] = field(default_factory=list)
    pruned: list[str] = field(default_factory=list)
    documents: int = 0
    elapsed: float = 0.0
    interrupted: bool = False
    extractor: str = "none"

    def to_dict(self, max_warnings: int = 200) -> dict[str, Any]:
        """Plain data; warnings are capped (their total is in ``warnings_count``)."""
        return {
            "documents": self.documents,
            "added": self.added,
            "unchanged": self.unchanged,
            "new_versions": self.new_versions,
            "skipped": [s.to_dict() for s in self.skipped],
            "failed": [s.to_dict() for s in self.failed],
            "chunks": self.chunks,
            "entities": self.entities,
            "relations": self.relations,
            "mentions": self.mentions,
            "warnings_count": len(self.warnings),
            "warnings": self.warnings[:max_warnings],
            "pruned": self.pruned,
            "elapsed_s": round(self.elapsed, 3),
            "docs_per_s": round(self.documents / self.elapsed, 1) if self.elapsed > 0 else None,
            "interrupted": self.interrupted,
            "extractor": self.extractor,
        }


# -- discovery ----------------------------------------------------------------------------------


def _doc_id_for(path: Path) -> str:
    """Files are identified by their path relative to the working directory (else absolute)."""
    absolute = path.resolve()
    try:
        return absolute.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return absolute.as_posix()


def _ignore_patterns(root: Path) -> list[str]:
    pats: list[str] = []
    for name in (".gitignore", ".graphmemignore"):
        f = root / name
        if f.is_file():
            for line in f.read_text(encoding="utf-8", errors="replace").splitlines():
                line = line.strip()
                if line and not line.startswith(("#", "!")):
                    pats.append(line)
    return pats


def _ignored(rel: str, is_dir: bool, patterns: Sequence[str]) -> bool:
    """A small, predictable subset of .gitignore: globs, trailing ``/`` for folders, leading
    ``/`` anchors to the root; a pattern without ``/`` matches a name at any depth."""
    name = rel.rsplit("/", 1)[-1]
    for p in patterns:
        dir_only = p.endswith("/")
        p = p.rstrip("/")
        if dir_only and not is_dir:
            continue
        if p.startswith("/"):
            if fnmatch.fnmatch(rel, p[1:]):
                return True
        elif "/" in p:
            if fnmatch.fnmatch(rel, p) or fnmatch.fnmatch(rel, "*/" + p):
                return True
        elif fnmatch.fnmatch(name, p):
            return True
    return False


def discover(paths: Iterable[str | os.PathLike[str]], glob: str | None = None,
             excludes: Sequence[str] = ()) -> Iterator[Path | Skipped]:
    """Files under ``paths`` (recursive, sorted), minus hidden and ignored ones."""
    for raw in paths:
        root = Path(raw)
        if not root.exists():
            yield Skipped(str(raw), "no such file or folder")
            continue
        if root.is_file():
            yield root
            continue
        patterns = list(excludes) + _ignore_patterns(root)
        for dirpath, dirnames, filenames in os.walk(root):
            base = Path(dirpath)
            rel_base = base.relative_to(root).as_posix()
            rel_base = "" if rel_base == "." else rel_base + "/"
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(".")
                                 and not _ignored(rel_base + d, True, patterns))
            for fname in sorted(filenames):
                rel = rel_base + fname
                if fname.startswith(".") or _ignored(rel, False, patterns):
                    continue
                if glob and not (fnmatch.fnmatch(fname, glob) or fnmatch.fnmatch(rel, glob)):
                    continue
                yield base / fname


def _read_files(kb: KnowledgeBase, paths: Iterable[str | os.PathLike[str]], glob: str | None,
                excludes: Sequence[str], summary: IngestSummary, as_jsonl: bool = False
                ) -> Iterator[SourceDocument]:
    cfg = kb.config["ingest"]
    overrides = cfg.get("readers") or {}
    for item in discover(paths, glob, excludes):
        if isinstance(item, Skipped):
            summary.skipped.append(item)
            continue
        doc_id = _doc_id_for(item)
        reader = bulk_reader.read if as_jsonl else reader_for(item, overrides)
        if reader is None:
            summary.skipped.append(Skipped(doc_id, f"unsupported file type '{item.suffix or item.name}'"))
            continue
        is_bulk = reader is bulk_reader.read
        limit_mb = cfg["max_bulk_file_mb"] if is_bulk else cfg["max_file_mb"]
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
            raw = item.read_bytes()
        except OSError as exc:
            summary.skipped.append(Skipped(doc_id, f"cannot read ({exc.strerror})"))
            continue
        read = (partial(bulk_reader.read, max_chars=cfg["max_record_chars"], jsonl=True if as_jsonl else None)
                if is_bulk else reader)
        try:
            for out in read(item, doc_id, raw):
                if isinstance(out, Skipped):
                    summary.skipped.append(out)
                elif not out.text.strip():
                    summary.skipped.append(Skipped(out.doc_id, "no text in the document"))
                else:
                    yield out
        except NotText as exc:
            summary.skipped.append(Skipped(doc_id, str(exc)))


# -- extraction ----------------------------------------------------------------------------------


def make_extractor(kb: KnowledgeBase, name: str | None) -> Extractor | None:
    """The extractor named ``name`` (default: config ``ingest.extractor``); None for 'none'."""
    name = (name or kb.config["ingest"]["extractor"]).lower()
    if name == "none":
        return None
    if name == "offline":
        from .extractors.offline import OfflineExtractor

        return OfflineExtractor()
    if name == "llm":
        from .extractors.llm import LLMExtractor

        llm_cfg = dict(kb.config["llm"])
        llm_cfg.setdefault("cache_dir", str(kb.home / "cache" / "llm"))
        # The env key only goes to an address the user chose (raises before anything is sent).
        llm_cfg["api_key"] = endpoint_api_key(kb.config, kb.home, "llm") or ""
        return LLMExtractor.from_config(llm_cfg)
    raise InvalidInput(f"unknown extractor '{name}'; choose offline, llm or none")


def _extract(extractor: Extractor | None, doc: SourceDocument, min_conf: float
             ) -> tuple[Extraction, list[str]] | ExtractionError:
    if doc.extraction is not None:  # agent-supplied: used as given, validated like the rest
        return validate_extraction(doc.extraction, doc.text, min_conf, source="supplied extraction")
    if extractor is None:
        return Extraction(), []
    try:
        ex = extractor.extract(doc)
    except ExtractionError as exc:
        return exc
    extra_warnings = list(ex.extra.get("warnings", [])) if isinstance(ex.extra, dict) else []
    valid, warnings = validate_extraction(ex, doc.text, min_conf, source=f"{extractor.name} extractor")
    return valid, extra_warnings + warnings


# -- the writer loop ------------------------------------------------------------------------------


def ingest_documents(
    kb: KnowledgeBase,
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

    ``on_progress(done, total, last_doc_id)`` is called after each batch; ``total`` is the
    number of documents when known (else an estimate that grows).
    """
    summary = summary or IngestSummary()
    summary.extractor = extractor.name if extractor else "none"
    store = kb.store
    batch_size = max(1, int(kb.config["ingest"]["batch_size"]))
    min_conf = kb.config["graph"]["min_confidence"]
    started = time.perf_counter()
    done = 0
    last_id = ""
    pending: deque[tuple[SourceDocument, Future[Any]]] = deque()
    pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="graphmem-extract")
    it = iter(docs)

    def fill() -> None:
        # Look ahead a window of documents: drop unchanged ones before any extraction.
        window: list[SourceDocument] = []
        while len(pending) + len(window) < batch_size * 2:
            try:
                window.append(next(it))
            except StopIteration:
                break
        if not window:
            return
        hashes = store.document_hashes(d.doc_id for d in window)
        for d in window:
            if hashes.get(d.doc_id) == content_hash(d.text):
                summary.unchanged += 1
                summary.documents += 1
            else:
                pending.append((d, pool.submit(_extract, extractor, d, min_conf)))

    try:
        fill()
        while pending and not summary.interrupted:
            _prefetch_vectors(kb, [pending[i] for i in range(min(batch_size, len(pending)))])
            with store.transaction(), kb.wiki.deferred(flush=False):
                for _ in range(batch_size):
                    if not pending:
                        break
                    doc, fut = pending[0]
                    last_id = doc.doc_id
                    try:
                        outcome = fut.result()
                        pending.popleft()
                        if isinstance(outcome, ExtractionError):
                            summary.failed.append(Skipped(doc.doc_id, f"extraction failed: {outcome}"))
                            done += 1
                            continue
                        extraction, warnings = outcome
                        with store.savepoint():
                            res = ingest_document(kb, doc.doc_id, doc.title, doc.source, doc.text, extraction,
                                                  {**doc.metadata, **({"pages": [list(p) for p in doc.pages]}
                                                                      if doc.pages else {})})
                    except KeyboardInterrupt:
                        # The savepoint undid the current document; commit the finished ones.
                        summary.interrupted = True
                        break
                    except GraphmemError as exc:
                        summary.skipped.append(Skipped(doc.doc_id, str(exc)))
                        done += 1
                        continue
                    done += 1
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
                        summary.warnings.extend(f"{doc.doc_id}: {w}" for w in warnings + res.warnings)
            kb.wiki.flush_due(summary.warnings)  # generated wiki pages: once per wiki.bulk_flush_docs
            if on_progress:
                seen = done + summary.unchanged
                on_progress(seen, total if total is not None else seen + len(pending), last_id)
            if not summary.interrupted:
                fill()
        if not summary.interrupted:
            if on_stage:
                on_stage("updating wiki pages")  # can take many seconds after the last document
            kb.wiki.flush(summary.warnings)  # the rest (an interrupted run leaves them marked for the next)
    except KeyboardInterrupt:
        summary.interrupted = True
    finally:
        for _, fut in pending:
            fut.cancel()
        pool.shutdown(wait=not summary.interrupted, cancel_futures=True)
        summary.elapsed = time.perf_counter() - started
    return summary


def _prefetch_vectors(kb: KnowledgeBase, batch: Sequence[tuple[SourceDocument, Future[Any]]]) -> None:
    """Embed the next batch's chunks and entity names in one model call, before its transaction."""
    kb.embeddings.clear_prefetched()
    if kb.embeddings.model_id is None:
        return
    size, overlap = kb.config["chunking"]["size"], kb.config["chunking"]["overlap"]
    texts: list[str] = []
    for doc, fut in batch:
        texts += [doc.text[s:e] for s, e in chunk_spans(doc.text, size, overlap)]
        if fut.done() and not fut.cancelled() and fut.exception() is None:
            outcome = fut.result()
            if not isinstance(outcome, ExtractionError) and kb.config["embeddings"]["embed_entities"]:
                texts += [e.name for e in outcome[0].entities]
            if not isinstance(outcome, ExtractionError) and kb.config["embeddings"]["embed_relations"]:
                texts += [fact_text(r.source, r.type, r.target) for r in outcome[0].relations]
    kb.embeddings.prefetch(texts)


def ingest_paths(
    kb: KnowledgeBase,
    paths: Sequence[str | os.PathLike[str]],
    *,
    glob: str | None = None,
    extractor: str | Extractor | None = None,
    excludes: Sequence[str] = (),
    prune: bool = False,
    on_progress: ProgressFn | None = None,
    workers: int | None = None,
    as_jsonl: bool = False,
    on_stage: Callable[[str], None] | None = None,
) -> IngestSummary:
    """Ingest files and folders (recursive). See the module docstring for the flow."""
    if not paths:
        raise InvalidInput("give at least one file or folder to ingest")
    ex = extractor if (extractor is not None and not isinstance(extractor, str)) else make_extractor(kb, extractor)
    summary = IngestSummary()
    # Reading everything first gives the progress bar a true total (and an ETA); texts are
    # small next to what extraction and indexing cost.
    docs = list(_read_files(kb, paths, glob, excludes, summary, as_jsonl))
    n_workers = workers if workers is not None else kb.config["ingest"]["workers"]
    ingest_documents(kb, docs, ex, on_progress, summary, n_workers, total=len(docs), on_stage=on_stage)
    if prune and not summary.interrupted:
        summary.pruned = _prune(kb, paths)
    return summary


def _prune(kb: KnowledgeBase, paths: Sequence[str | os.PathLike[str]]) -> list[str]:
    """Delete documents that came from files under ``paths`` whose files are gone."""
    removed: list[str] = []
    for raw in paths:
        root = Path(raw)
        if not root.is_dir():
            continue
        prefix = _doc_id_for(root).rstrip("/") + "/"
        for doc_id, source in kb.store.documents_by_source_prefix(prefix):
            file_part = source.split("#", 1)[0]
            target = Path(file_part) if Path(file_part).is_absolute() else Path.cwd() / file_part
            if not target.exists():
                kb.documents.delete(doc_id)
                removed.append(doc_id)
    return removed

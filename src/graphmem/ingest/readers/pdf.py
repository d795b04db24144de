"""PDF (optional extra ``pdf``: pypdf). Page numbers are kept so citations can name the page."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

from ..extractors.base import SourceDocument
from .base import Skipped

__all__ = ["read"]


def read(path: Path, doc_id: str, raw: bytes) -> Iterator[SourceDocument | Skipped]:
    """One document from a PDF, pages separated by blank lines, with page ranges."""
    try:
        import pypdf
        from pypdf.errors import PdfReadError, PyPdfError
    except ImportError:
        yield Skipped(doc_id, "PDF support is not installed; run: pip install 'graphmem[pdf]'")
        return
    try:
        reader = pypdf.PdfReader(io.BytesIO(raw))
        if reader.is_encrypted:
            yield Skipped(doc_id, "encrypted PDF; decrypt it first (e.g. qpdf --decrypt)")
            return
        texts = [(page.extract_text() or "").strip() for page in reader.pages]
        title = reader.metadata.title if reader.metadata and reader.metadata.title else None
        # /Title may be a number or an array; a control character in it is no title either
        if not isinstance(title, str) or not title.strip() or any(ord(c) < 32 for c in title):
            title = None
    except (PdfReadError, PyPdfError, ValueError, KeyError, TypeError, OSError, RecursionError) as exc:
        # PyPdfError: LimitReachedError (a decompression bomb) and its kin are not PdfReadErrors
        yield Skipped(doc_id, f"broken PDF ({type(exc).__name__}: {str(exc)[:120]})")
        return
    parts: list[str] = []
    pages: list[tuple[int, int, int]] = []
    pos = 0
    for number, text in enumerate(texts, start=1):
        if not text:
            continue
        if parts:
            parts.append("\n\n")
            pos += 2
        parts.append(text)
        pages.append((pos, pos + len(text), number))
        pos += len(text)
    yield SourceDocument(doc_id, title or path.stem, doc_id, "".join(parts),
                         {"path": doc_id, "format": "pdf", "page_count": len(texts)}, pages=tuple(pages))

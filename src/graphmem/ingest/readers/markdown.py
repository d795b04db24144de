"""Markdown: YAML front matter becomes metadata; title from front matter or first heading."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...frontmatter import FrontMatterError, load_front_matter
from ..extractors.base import SourceDocument
from .base import Skipped, decode_text

__all__ = ["read", "split_front_matter"]

_FRONT = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)


def split_front_matter(text: str) -> tuple[dict[str, Any], str, str | None]:
    """``(metadata, body, problem)``: metadata is JSON data (dates kept as text); a front matter
    :func:`~graphmem.frontmatter.load_front_matter` refuses gives empty metadata and a problem note."""
    m = _FRONT.match(text)
    if not m:
        return {}, text, None
    body = text[m.end():]
    try:
        return load_front_matter(m.group(1)), body, None
    except FrontMatterError as exc:
        return {}, body, f"{exc}; kept as text"


def read(path: Path, doc_id: str, raw: bytes) -> Iterator[SourceDocument | Skipped]:
    """One document from a markdown file (the body, without the front matter). A front matter
    that cannot be read stays in the text, and ``metadata["front_matter_problem"]`` says why."""
    text = decode_text(raw, path)
    meta, body, problem = split_front_matter(text)
    if problem:
        body = text
    title = meta.get("title") if isinstance(meta.get("title"), str) else None
    if not title:
        h = _HEADING.search(body)
        title = h.group(1).strip() if h else path.stem
    metadata = dict(meta)
    metadata.update(path=doc_id, format="markdown")
    if problem:
        metadata["front_matter_problem"] = problem
    yield SourceDocument(doc_id, title, doc_id, body, metadata)

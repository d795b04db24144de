"""Markdown: YAML front matter becomes metadata; title from front matter or first heading."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from ..extractors.base import SourceDocument
from .base import Skipped, decode_text

__all__ = ["read", "split_front_matter"]

_FRONT = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)


def split_front_matter(text: str) -> tuple[dict[str, Any], str, str | None]:
    """``(metadata, body, problem)``; bad YAML gives empty metadata and a problem note."""
    m = _FRONT.match(text)
    if not m:
        return {}, text, None
    body = text[m.end():]
    try:
        data = yaml.safe_load(m.group(1))
    except yaml.YAMLError as exc:
        return {}, body, f"front matter is not valid YAML ({str(exc).splitlines()[0]}); kept as text"
    if data is None:
        return {}, body, None
    if not isinstance(data, dict):
        return {}, body, "front matter is not a mapping; ignored"
    return data, body, None


def read(path: Path, doc_id: str, raw: bytes) -> Iterator[SourceDocument | Skipped]:
    """One document from a markdown file (the body, without the front matter)."""
    text = decode_text(raw, path)
    meta, body, problem = split_front_matter(text)
    if problem:
        body = text
    title = meta.get("title") if isinstance(meta.get("title"), str) else None
    if not title:
        h = _HEADING.search(body)
        title = h.group(1).strip() if h else path.stem
    # Front matter values may be dates etc.: keep them JSON-friendly.
    metadata = {str(k): (v if isinstance(v, (str, int, float, bool, list, dict)) or v is None else str(v))
                for k, v in meta.items()}
    metadata.update(path=doc_id, format="markdown")
    if problem:
        metadata["front_matter_problem"] = problem
    yield SourceDocument(doc_id, title, doc_id, body, metadata)

"""HTML: visible text without markup, scripts or styles; title from <title>."""

from __future__ import annotations

import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

from ..extractors.base import SourceDocument
from .base import Skipped, decode_text

__all__ = ["read", "html_to_text"]

_SKIP = {"script", "style", "noscript", "template", "svg", "head"}
_BLOCK = {"p", "div", "br", "li", "ul", "ol", "tr", "table", "section", "article", "header", "footer",
          "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote", "hr", "dt", "dd", "main", "nav", "aside"}


class _Text(HTMLParser):
    """Text outside the skipped elements. Skipped elements are a stack, not a count: ``<head>`` ends where the
    body starts even when ``</head>`` is left out (valid HTML5, and what minifiers write), a title ends at the
    first block, and ``</body>`` closes whatever was left open; a title inside an ``<svg>`` is no page title."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title: list[str] = []
        self._open: list[str] = []
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "body" or tag in _BLOCK:
            self._in_title = False
            if "head" in self._open:
                del self._open[self._open.index("head"):]
        if tag == "title":
            self._in_title = not self._open or self._open == ["head"]
        elif tag in _SKIP:
            self._open.append(tag)
        elif tag in _BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag in _SKIP:
            if tag in self._open:
                del self._open[len(self._open) - 1 - self._open[::-1].index(tag):]
        elif tag in ("body", "html"):
            self._open.clear()
        elif tag in _BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title.append(data)
        elif not self._open:
            self.parts.append(data)


def html_to_text(html: str) -> tuple[str, str]:
    """``(title, text)`` of an HTML document; blank lines separate blocks."""
    p = _Text()
    p.feed(html)
    p.close()
    text = "".join(p.parts)
    text = re.sub(r"[ \t\r\f\v]+", " ", text)
    text = re.sub(r" *\n *", "\n", text)
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    return " ".join("".join(p.title).split()), text


def read(path: Path, doc_id: str, raw: bytes) -> Iterator[SourceDocument | Skipped]:
    """One document from an HTML file."""
    title, text = html_to_text(decode_text(raw, path))
    yield SourceDocument(doc_id, title or path.stem, doc_id, text, {"path": doc_id, "format": "html"})

"""A document's new title on the summary page graphmem keeps for it.

A new version of a document may carry a new title. Its summary page keeps its file name (links to it
hold) but takes the new title, in its front matter and its heading, when three things hold: graphmem
named the page (``doc-...``; a page a person wrote and graphmem adopted keeps its title), the page still
has the title graphmem gave the previous version (alone, or told apart by the document's id), and its
heading still says so (a heading edited by hand leaves both as they are). A title another summary page
already has is told apart by the document's id, as a new page's is.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .markdown import heading_text, html_safe

__all__ = ["Retitle", "retitled"]


@dataclass(frozen=True)
class Retitle:
    """What :func:`retitled` needs to know about a summary page's document."""

    doc_id: str
    graphmem_named: bool  # the page's slug is one graphmem gave it
    previous_title: Callable[[], str | None]  # the title of the document's previous version (read when needed)
    taken: Callable[[str], bool]  # does another summary page have this title


def retitled(fm: dict[str, Any], body: str, title: str, how: Retitle) -> str:
    """``body`` with its heading retitled, ``fm["title"]`` set, when the page follows its document's
    new ``title`` (see the module docstring); else ``body`` and ``fm`` as they are."""
    old = fm.get("title")
    told_apart = f"{title} ({how.doc_id})"
    if not isinstance(old, str) or not how.graphmem_named or old in (title, told_apart):
        return body
    prev = how.previous_title()
    if prev is None or prev == title:  # the document's title did not change: the page's is a person's
        return body
    if old == prev:
        new = told_apart if how.taken(title) else title
    elif old == f"{prev} ({how.doc_id})":
        new = told_apart if how.taken(title) else title  # told apart only while another page has the title
    else:
        return body
    # the heading as graphmem writes it (markdown.heading_text), or as an older graphmem wrote it
    forms = "|".join(re.escape(f) for f in dict.fromkeys((heading_text(old), html_safe(old), old)))
    heading = re.match(rf"(\s*)#[ \t]+(?:{forms})[ \t]*(\r?\n|$)", body)
    if heading is None:
        return body
    fm["title"] = new
    return (body[: heading.start()] + f"{heading.group(1)}# {heading_text(new)}{heading.group(2)}"
            + body[heading.end():])

"""What a page write puts in the page's front matter, and which generated summary page an
agent-written summary replaces.

Front matter precedence, highest first: the arguments of ``write_page`` (title, category,
tags, summary, source_documents), the front matter at the top of ``content`` (the seed wrote
its pages that way), the page's current front matter, defaults. ``source_document`` (one id,
the seed's key) is read as ``source_documents``. ``title`` and ``category`` are always the
arguments: they are the page's identity (``read_page(category, title)`` finds it).

One summary per document: an agent-written page in category ``summary`` whose sources name a
document that has a generated summary page takes that page's place — it becomes the page
graphmem keeps up to date for the document (its ``subject``), gets the generated block
(between graphmem's markers, below the agent's own text) and the generated file is removed.
The agent's page is kept rather than the generated one because it is the one a person chose
to write and name; graphmem's block keeps the claims and citations current as the document
changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput
from ..models import Page
from .files import read_bytes
from .generate import DOC
from .markdown import BEGIN, END, generated_block, replace_generated, split_front_matter
from .slugs import RESERVED_DIRS, category_slug, check_text

if TYPE_CHECKING:
    from ..store import Store
    from .core import WikiCore

__all__ = ["check_page_args", "given_front_matter", "summaries_beside_generated", "merge_front_matter",
           "generated_inner", "summary_to_replace", "pin_sources"]

_IDENTITY = ("title", "category")


def given_front_matter(content: str) -> tuple[dict[str, Any], str]:
    """``(front matter, body)`` of ``content``: a leading ``---`` block is taken off the body
    (the page gets one front matter block, not two). InvalidInput names what is wrong with an
    unreadable one."""
    if not (content.startswith("---\n") or content.startswith("---\r\n")):
        return {}, content
    fm, body, _, error = split_front_matter(content)
    if error is not None:
        raise InvalidInput(f"content: its front matter cannot be read ({error}); fix it or remove the --- block")
    given = {k: v for k, v in fm.items() if k not in _IDENTITY}
    if "source_document" in given:
        one = given.pop("source_document")
        items = one if isinstance(one, list) else [one]
        given.setdefault("source_documents", [str(x) for x in items if x is not None and str(x).strip()])
    srcs = given.get("source_documents")
    if srcs is not None and (isinstance(srcs, str) or not isinstance(srcs, list)):
        given["source_documents"] = [srcs] if isinstance(srcs, str) else srcs
    if "tags" in given and isinstance(given["tags"], str):
        given["tags"] = [given["tags"]]
    return given, body


def merge_front_matter(current: dict[str, Any], given: dict[str, Any], title: str, category: str,
                       tags: list[str] | None, sources: list[str] | None, summary: str | None,
                       now: str) -> dict[str, Any]:
    """The page's front matter: arguments over ``given`` (from the content) over ``current``."""
    fm: dict[str, Any] = {"title": title, "category": category}
    fm.update({k: v for k, v in current.items() if k not in _IDENTITY})
    fm.update(given)
    fm["tags"] = tags if tags is not None else (fm.get("tags") or [])
    if sources is not None:
        fm["source_documents"] = sources
    else:
        fm.setdefault("source_documents", [])
    if summary is not None:
        fm["summary"] = summary
    fm["updated"] = now
    return fm


def generated_inner(text: str) -> str | None:
    """The inside of the generated block of a page's text (markers excluded), or None."""
    span = generated_block(text)
    if span is None:
        return None
    return text[span[0] + len(BEGIN): span[1] - len(END)].strip("\n")


def summary_to_replace(store: Store, category: str, slug: str, existing: Page | None,
                       sources: list[str]) -> Page | None:
    """The generated summary page the written page replaces (see the module docstring)."""
    if category != "summary" or not sources or (existing is not None and existing.subject):
        return None
    docs = [s.rpartition("@v")[0] or s for s in sources]
    for subject, page in store.pages_by_subject(DOC + d for d in docs).items():
        if page.slug != slug and subject.startswith(DOC):
            return page
    return None


def summaries_beside_generated(store: Store) -> list[Page]:
    """Written summary pages that cite a document which still has a generated summary page
    (left by a graphmem older than the one-summary rule): ``wiki sync`` rewrites each, which
    makes it replace the generated one (see :func:`summary_to_replace`)."""
    written = [p for p in store.list_pages("summary") if not p.subject
               and isinstance(p.front_matter.get("source_documents"), list)]
    cited = {p.slug: [str(s).rpartition("@v")[0] or str(s) for s in p.front_matter["source_documents"]]
             for p in written}
    generated = store.pages_by_subject(DOC + d for docs in cited.values() for d in docs)
    taken: set[str] = set()
    out = []
    for p in written:
        doc = next((d for d in cited[p.slug] if DOC + d in generated and d not in taken), None)
        if doc is not None:
            taken.add(doc)
            out.append(p)
    return out


def keep_generated(core: WikiCore, body: str, donor: Page | None) -> str:
    """``body`` with the generated block of ``donor``'s file (the page it replaces, or its own
    previous version) when it has none of its own."""
    if donor is None or generated_block(body) is not None:
        return body
    raw = read_bytes(core.dir, core.abspath(donor.path))
    inner = generated_inner(raw.decode("utf-8", errors="replace")) if raw else None
    return replace_generated(body, inner) if inner else body


def check_page_args(category: Any, title: Any, content: Any, summary: Any, tags: Any
                    ) -> tuple[str, str, str, str | None, list[str] | None]:
    """The checked arguments of a page write: ``(category, title, body, summary, tags)``."""
    cat = category_slug(category)
    if cat in RESERVED_DIRS:
        raise InvalidInput(f"category '{cat}' is reserved by graphmem; choose another")
    title_s = check_text("title", title, 300)
    if not isinstance(content, str):
        raise InvalidInput(f"content: expected a string, got {type(content).__name__}")
    if "\x00" in content:
        raise InvalidInput("content: contains NUL bytes; is it a binary file?")
    body = content if content.endswith("\n") or not content.strip() else content + "\n"
    summary_s = None
    if summary is not None:
        summary_s = " ".join(check_text("summary", summary.replace("\n", " ") if isinstance(summary, str)
                                        else summary, 1000).split())
    tag_list = None
    if tags is not None:
        if not isinstance(tags, (list, tuple)) or not all(isinstance(t, str) for t in tags):
            raise InvalidInput("tags: expected a list of strings")
        tag_list = [check_text("tags[]", t, 100) for t in tags]
    return cat, title_s, body, summary_s, tag_list


def pin_sources(store: Store, source_documents: Sequence[str] | None) -> list[str] | None:
    """A page's ``source_documents`` as ``id@vN``: an id without a version is pinned to its latest one; an id
    no document has is InvalidInput."""
    if source_documents is None:
        return None
    if isinstance(source_documents, str) or not all(isinstance(s, str) and s.strip() for s in source_documents):
        raise InvalidInput("source_documents: expected a list of document ids such as ['doc_1']")
    plain = [s.strip() for s in source_documents if "@v" not in s]
    latest = store.latest_documents(plain)
    out = []
    for s in (x.strip() for x in source_documents):
        if "@v" in s:
            out.append(s)
        elif s in latest:
            out.append(f"{s}@v{latest[s].version}")
        else:
            raise InvalidInput(f"source_documents: no document with id '{s}'; list them with `graphmem docs list`")
    return out

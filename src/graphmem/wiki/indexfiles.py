"""index.md and its shard files, rendered from bounded store queries.

``wiki/index.md`` lists every category. A category with at most ``wiki.index_inline_max``
pages lists its pages right there (``- [[slug|Title]] — summary``); a bigger one links to its
shard files ``wiki/_index/<category>/<cc>.md``, one per first two characters of the slug (after a
summary page's ``doc-``: :func:`..slugs.shard_of`), which list the pages. Shard files are kept for
every category, so a page change rewrites exactly one shard file and index.md: the page's line is
spliced into the shard file (its neighbour in title order comes from an indexed query) and
index.md only lists categories, small categories' pages and shard links, so writing the 10,000th
page costs what writing the first one did (one flat index.md rendered per write makes N writes
cost O(N^2)).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from ..models import Page
from ..text import normalize_name
from .files import FileTxn, exists, read_bytes
from .markdown import html_safe

if TYPE_CHECKING:
    from ..store import Store

__all__ = ["INDEX_DIR", "shard_file", "render_root", "render_shard", "stage_index"]

INDEX_DIR = "_index"
_SPLICE_MAX = 8  # changed pages per shard up to which the file is patched rather than re-rendered
_HEADER = "<!-- maintained by graphmem: rewritten on every change; edit the pages, not this file -->"


def shard_file(wiki_dir: Path, category: str, shard: str) -> Path:
    """Where a shard of a category's index lives."""
    return wiki_dir / INDEX_DIR / category / f"{shard}.md"


def _label(text: str) -> str:
    return html_safe(text.replace("|", "-").replace("[", "(").replace("]", ")").replace("\n", " ").strip())


def _line(slug: str, title: str, summary: str) -> str:
    one = html_safe(" ".join(summary.split()))
    if len(one) > 200:
        one = one[:199] + "…"
    return f"- [[{slug}|{_label(title)}]]" + (f" — {one}" if one else "")


def render_root(store: Store, inline_max: int) -> str:
    """index.md: every category, inline when small, else a link per shard."""
    by_cat: dict[str, list[tuple[str, int]]] = {}
    for category, shard, n in store.wiki_index_counts():
        by_cat.setdefault(category, []).append((shard, n))
    out = ["# Index", "", _HEADER, ""]
    if not by_cat:
        out += ["_No pages yet._", ""]
    for category, shards in by_cat.items():
        total = sum(n for _, n in shards)
        out.append(f"## {category}")
        out.append("")
        if total <= inline_max:
            out += [_line(*row) for row in store.wiki_index_rows(category, limit=inline_max)]
        else:
            # No page counts here: index.md then changes only when a shard appears or goes,
            # not on every new page (each rewrite is a file rename).
            out += [f"- [[{INDEX_DIR}/{category}/{shard}|{category}: {shard}]]" for shard, _ in shards]
        out.append("")
    return "\n".join(out)


def _shard_header(category: str, shard: str) -> str:
    return f"# {category}: {shard}\n\n{_HEADER}\n\nBack to [[index]].\n\n"


def render_shard(store: Store, category: str, shard: str) -> str:
    """One shard file: the pages of a category whose row says ``shard``, by title."""
    rows = store.wiki_index_rows(category, shard)
    return _shard_header(category, shard) + "".join(_line(*row) + "\n" for row in rows)


def _splice(store: Store, text: str, category: str, shard: str, changes: Mapping[str, Page | None]) -> str | None:
    """``text`` (a shard file) with the lines of the changed pages removed and re-inserted
    after their neighbour in title order; None when the file is not as graphmem wrote it."""
    header = _shard_header(category, shard)
    if not text.startswith(header):
        return None
    for slug in changes:  # drop the old lines first, so that neighbours are found in order
        start = text.find(f"\n- [[{slug}|")
        if start >= 0:
            end = text.find("\n", start + 1)
            text = text[:start] + text[end:]
    for slug, page in changes.items():
        if page is None:
            continue
        prev = store.wiki_index_prev(category, shard, normalize_name(page.title), slug)
        if prev is None:
            at = len(header) - 1
        else:
            at = text.find(f"\n- [[{prev}|")
            if at < 0:
                return None  # the neighbour's line is missing (it changes in this operation too)
            at = text.find("\n", at + 1)
        text = text[: at + 1] + _line(slug, page.title, page.summary) + "\n" + text[at + 1 :]
    return text


def stage_index(ftx: FileTxn, store: Store, wiki_dir: Path,
                changes: Mapping[tuple[str, str], Mapping[str, Page | None] | None], inline_max: int) -> None:
    """Stage index.md and the shard files of ``changes`` for the current store state.

    ``changes`` maps ``(category, shard)`` to the pages that changed there (slug -> new row,
    or None when the page left the shard) or to None (render the shard from the store). A
    few changes are spliced into the shard file as it is — the cost of a page write then does
    not grow with the shard — and a batch re-renders each shard it touches once.
    """
    counts = {(c, s): n for c, s, n in store.wiki_index_counts()}
    totals: dict[str, int] = {}
    for (c, _), n in counts.items():
        totals[c] = totals.get(c, 0) + n
    root = wiki_dir / "index.md"
    # index.md lists small categories' pages and big categories' shards: it changes only when
    # one of those changes, a shard appears or goes, or a category crosses the inline limit.
    root_needed = not exists(wiki_dir, root)
    # A batch can add many pages to a category at once: it may have crossed the inline limit
    # when its total is within the number of its pages that changed of the limit.
    touched: dict[str, int] = {}
    for (category, _), changed in changes.items():
        touched[category] = touched.get(category, 0) + (len(changed) if changed is not None else 1)
    for (category, shard), changed in sorted(changes.items()):
        path = shard_file(wiki_dir, category, shard)
        if totals.get(category, 0) <= inline_max + touched[category]:
            root_needed = True
        if counts.get((category, shard), 0) <= 0:
            if exists(wiki_dir, path):
                ftx.delete(path)
            root_needed = True
            continue
        old = read_bytes(wiki_dir, path)
        if old is None:
            root_needed = True
        text = None
        if changed is not None and len(changed) <= _SPLICE_MAX and old is not None:
            text = _splice(store, old.decode("utf-8", errors="replace"), category, shard, changed)
        if text is None:
            text = render_shard(store, category, shard)
        ftx.write(path, text.encode("utf-8"), old=old)
    if root_needed or any(changed is None for changed in changes.values()):
        ftx.write(root, render_root(store, inline_max).encode("utf-8"))

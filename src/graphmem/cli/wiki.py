"""``graphmem wiki ...``: write, read, list, search, log, lint, rm, sync, backlinks.

Each command parses its arguments, calls one ``kb.wiki`` method and prints the result
(``--json`` for machines). ``lint`` exits 1 when it finds problems.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from .app import _emit, _fail, _open, _read_text, handle_errors, json_option, query_argument
from .render import relative_scores

__all__ = ["wiki"]


@click.group()
def wiki() -> None:
    """The markdown wiki: pages in <home>/wiki/, index.md, log.md, search and lint."""


def _page_ref(args: tuple[str, ...]) -> dict[str, str]:
    if len(args) == 1:
        return {"slug": args[0]}
    if len(args) == 2:
        return {"category": args[0], "title": args[1]}
    _fail("give a SLUG, or a CATEGORY and a TITLE")
    raise AssertionError("unreachable")


def _written(d: dict[str, Any]) -> str:
    return f"{'created' if d['created'] else 'updated'} {d['category']}/{d['slug']}: {d['path']}"


@wiki.command("write")
@click.argument("category")
@click.argument("title")
@click.option("--content", help="The page's markdown body.")
@click.option("--file", "file_", type=click.Path(dir_okay=False, path_type=Path),
              help="Read the body from this file ('-' or no option: standard input).")
@click.option("--summary", help="One line for index.md.")
@click.option("--tag", "tags", multiple=True, help="A tag (repeatable).")
@click.option("--source", "sources", multiple=True, help="A document id the page draws on (repeatable).")
@click.option("--allow-empty", is_flag=True, help="Write the page even when the body is empty (else refused: "
                                                  "an empty stdin must not blank a page).")
@json_option
@click.pass_context
@handle_errors
def wiki_write(ctx: click.Context, category: str, title: str, content: str | None, file_: Path | None,
               summary: str | None, tags: tuple[str, ...], sources: tuple[str, ...], allow_empty: bool,
               as_json: bool) -> None:
    """Create or replace the page TITLE in CATEGORY (body from --content, --file or stdin)."""
    if content is not None and file_ is not None:
        _fail("give either --content or --file, not both")
    if content is None:
        if file_ is not None and str(file_) != "-":
            content = _read_text(file_)
        elif sys.stdin.isatty():
            _fail("give the page body with --content, --file, or on standard input")
        else:
            content = sys.stdin.read()
    if not content.strip() and not allow_empty:
        _fail("the page body is empty (no --content and nothing on standard input or in --file); nothing was "
              "written; pass --allow-empty to write an empty page")
    kb = _open(ctx, create=True)
    data = kb.wiki.write_page(category, title, content, summary=summary, tags=list(tags) or None,
                              source_documents=list(sources) or None, allow_empty=allow_empty)
    _emit(data, as_json, _written)


@wiki.command("read")
@click.argument("ref", nargs=-1, required=True)
@json_option
@click.pass_context
@handle_errors
def wiki_read(ctx: click.Context, ref: tuple[str, ...], as_json: bool) -> None:
    """Show a page: REF is a SLUG (as `wiki list` shows it, CATEGORY/SLUG, or just SLUG), or CATEGORY TITLE."""
    kb = _open(ctx)
    where = _page_ref(ref)
    data = (kb.wiki.read_page_by_slug(where["slug"]) if "slug" in where
            else kb.wiki.read_page(where["category"], where["title"]))
    _emit(data, as_json, lambda d: f"{d['category']}/{d['slug']} — {d['title']} ({d['path']})\n\n{d['content']}")


@wiki.command("list")
@click.option("--category", help="Only this category.")
@click.option("--limit", type=click.IntRange(min=0), default=None)
@click.option("--offset", type=click.IntRange(min=0), default=0)
@json_option
@click.pass_context
@handle_errors
def wiki_list(ctx: click.Context, category: str | None, limit: int | None, offset: int, as_json: bool) -> None:
    """Pages by category and title."""
    kb = _open(ctx)
    _emit(kb.wiki.list_pages(category, limit, offset), as_json,
          lambda rows: "\n".join(f"{r['category']}/{r['slug']} — {r['title']}" + (f": {r['summary']}"
                                                                                    if r["summary"] else "")
                                 for r in rows) or "no pages")


@wiki.command("search")
@query_argument("query")
@click.option("-k", "k", type=click.IntRange(min=1), default=10, show_default=True)
@click.option("--category", help="Only this category.")
@json_option
@click.pass_context
@handle_errors
def wiki_search(ctx: click.Context, query: str, k: int, category: str | None, as_json: bool) -> None:
    """Full-text (BM25) search over pages, with snippets."""
    kb = _open(ctx)
    _emit(kb.wiki.search_wiki(query, k, category), as_json,
          lambda hits: "\n".join(f"{rel:.2f}  {h['category']}/{h['slug']} — {h['title']}\n    "
                                 + " ".join(h["snippet"].split())
                                 for h, rel in zip(hits, relative_scores(hits))) or "no matching pages")


@wiki.command("log")
@click.option("-n", "last_n", type=click.IntRange(min=0), default=20, show_default=True)
@json_option
@click.pass_context
@handle_errors
def wiki_log(ctx: click.Context, last_n: int, as_json: bool) -> None:
    """The last entries of log.md."""
    kb = _open(ctx)
    _emit(kb.wiki.get_log(last_n), as_json, lambda rows: "\n".join(r["line"] for r in rows) or "log is empty")


def _render_lint(r: dict[str, Any]) -> str:
    from ..wiki.lint import LINT_KEYS

    out: list[str] = []
    for key in LINT_KEYS:
        value = r[key]
        n = sum(len(v) for v in value.values()) if isinstance(value, dict) else len(value)
        if not n:
            continue
        out.append(f"{key} ({n}):")
        if isinstance(value, dict):
            for slug, items in value.items():
                out += [f"  {slug}:{i['line']} -> [[{i['target']}]]" for i in items]
        else:
            for item in value:
                if isinstance(item, str):
                    out.append(f"  {item}")
                else:
                    line = f":{item['line']}" if "line" in item else ""
                    rest = {k: v for k, v in item.items() if k not in ("slug", "line")}
                    out.append(f"  {item['slug']}{line}  " + "; ".join(f"{k}={v}" for k, v in rest.items()))
    for kind, items in (r.get("fixed") or {}).items():
        if items:
            out.append(f"fixed {kind}: {items if not isinstance(items, list) else ', '.join(map(str, items))}")
    out.append(f"{r['problems']} problem{'s' if r['problems'] != 1 else ''}")
    return "\n".join(out)


@wiki.command("lint")
@click.option("--fix", is_flag=True, help="Repair what is mechanical (index orphans, drop missing, rewrite "
                                          "index.md, add cross references) and report the rest.")
@click.option("--create-stubs", is_flag=True, help="Also create stub pages for broken links (implies --fix).")
@json_option
@click.pass_context
@handle_errors
def wiki_lint(ctx: click.Context, fix: bool, create_stubs: bool, as_json: bool) -> None:
    """Check the wiki: orphans, missing pages, broken links, isolated/unlinked pages, stale
    pages, contradictions, uncited claims, missing cross references, stubs. Exit 1 on problems."""
    kb = _open(ctx)
    report = kb.wiki.lint_wiki(fix=fix, create_stubs=create_stubs)
    _emit(report, as_json, _render_lint)
    if report["problems"]:
        sys.exit(1)


@wiki.command("rm")
@click.argument("ref", nargs=-1, required=True)
@json_option
@click.pass_context
@handle_errors
def wiki_rm(ctx: click.Context, ref: tuple[str, ...], as_json: bool) -> None:
    """Delete a page: REF is a SLUG, or CATEGORY TITLE."""
    kb = _open(ctx)
    where = _page_ref(ref)
    data = kb.wiki.delete_page(where.get("category"), where.get("title"), slug=where.get("slug"))
    _emit(data, as_json, lambda d: f"deleted {d['category']}/{d['slug']}")


@wiki.command("sync")
@json_option
@click.pass_context
@handle_errors
def wiki_sync(ctx: click.Context, as_json: bool) -> None:
    """Re-index pages edited, added or deleted by hand in the wiki folder."""
    kb = _open(ctx)
    _emit(kb.wiki.sync(), as_json,
          lambda d: f"{len(d['indexed'])} indexed, {len(d['removed'])} removed, {d['unchanged']} unchanged, "
                    f"{d['regenerated']} generated pages refreshed"
                    + (f", {len(d['failed'])} could not be (see the notes)" if d.get("failed") else "")
                    + "".join(f"\n  skipped {s['path']}: {s['reason']}" for s in d["skipped"]))


@wiki.command("backlinks")
@click.argument("slug")
@json_option
@click.pass_context
@handle_errors
def wiki_backlinks(ctx: click.Context, slug: str, as_json: bool) -> None:
    """Pages that link to SLUG, with line numbers."""
    kb = _open(ctx)
    _emit(kb.wiki.backlinks(slug), as_json,
          lambda rows: "\n".join(f"{r['slug']}:{r['line']} — {r['title']}" for r in rows) or "no backlinks")

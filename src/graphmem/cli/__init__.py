"""The ``graphmem`` command line: parse, call one library function, print.

Every command takes ``--home DIR`` (or ``GRAPHMEM_HOME``; default ``./.graphmem``) and, where it
returns data, ``--json``. Errors caused by input exit with status 1 and one line on stderr.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from ..config import set_config_value
from ..config_sections import check_store_url, has_password, redact_url
from ..errors import Conflict, InvalidInput
from ..extraction import load_extraction_file
from . import (
    entity_retype,  # noqa: F401 - registers `entity retype`
    render,
)
from .agent_io import skill as skill_group
from .app import _emit, _fail, _open, _read_text, cli, entity, handle_errors, json_option, query_argument
from .config import config as config_group
from .events import events as events_group
from .mcp import mcp as mcp_group
from .memory import memory as memory_group
from .model_folder import absolute_spec
from .outcome import EXIT_CODES_HELP, ingest_outcome
from .portability import backup_cmd, check_cmd, export_cmd, restore_cmd
from .portability import import_group as portable_import_group
from .progress import _Progress, _progress_mode
from .serve import serve as serve_command
from .shared_options import add_shared_options
from .skills import skills as skills_group
from .store_ops import migrate_cmd, status_cmd
from .wiki import wiki as wiki_group

__all__ = ["main", "cli"]


@cli.command()
@click.option("--embedder", metavar="SPEC",
              help="Embedding model: model2vec:<id or folder>, sentence-transformers:<id or folder>, "
                   "openai:<model> or none (written to config.toml).")
@click.option("--store", "store_url", metavar="URL",
              help="Keep the store on a PostgreSQL server: postgresql://user@host/db (written to config.toml; "
                   "env GRAPHMEM_STORE wins over it). Default: graph.db in the folder.")
@json_option
@click.pass_context
@handle_errors
def init(ctx: click.Context, embedder: str | None, store_url: str | None, as_json: bool) -> None:
    """Create the knowledge base (folder, config.toml, graph.db or a PostgreSQL store, wiki/) if absent."""
    home: Path = ctx.obj["home"]
    existed = (home / "graph.db").exists() or (store_url is not None and (home / "config.toml").exists())
    if embedder is not None:
        # reject a bad SPEC before creating anything; a local folder is saved absolute (works from anywhere)
        embedder = absolute_spec(embedder)
    url = check_store_url(store_url, "--store") if store_url is not None else None
    if url and has_password(url):  # config.toml is an ordinary readable file: a password does not belong there
        raise InvalidInput(f"--store: {redact_url(url)!r} holds a password, which init would write into "
                           "config.toml; leave it out of the url and put it in PGPASSWORD or ~/.pgpass")
    if url is not None and (home / "graph.db").exists():
        raise Conflict(f"{home} keeps its store in graph.db; copy it to the server with `graphmem --home {home} "
                       "migrate --to URL`, then point a folder at it with `graphmem --home NEW init --store URL`")
    kb = _open(ctx, create=True, check_model=embedder is None, config={"store": {"url": url}} if url else None)
    if embedder is not None or url:
        kb.store.refuse_write()  # config.toml of a read-only knowledge base is not rewritten either
    if embedder is not None:
        set_config_value(kb.home, "embeddings", "model", embedder)
    if url:
        set_config_value(kb.home, "store", "url", url)
    data = {"home": str(kb.home), "created": not existed, "config": str(kb.home / "config.toml"),
            "embedder": embedder or kb.config.embeddings.model}
    if url:  # the store's place (password left out), only when it is not the folder's graph.db
        data.update({"backend": kb.store.backend, "store_url": kb.status()["store_url"]})
    _emit(data, as_json, lambda d: f"{'created' if d['created'] else 'already initialised'}: {d['home']} "
                                   f"(embedder {d['embedder']}"
                                   + (f", store {d['store_url']}" if d.get("store_url") else "") + ")")


_WARNINGS_SHOWN = 5  # enough to see what kind of warnings they are, few enough to keep the summary short


def _render_summary(s: dict[str, Any]) -> str:
    lines = [
        f"{s['documents']} documents: {s['added']} added, {s['new_versions']} new versions, "
        f"{s['unchanged']} unchanged; {len(s['skipped'])} skipped, {len(s['failed'])} failed "
        f"({s['elapsed_s']:.2f} s, {s['docs_per_s'] or 0:g} docs/s, extractor {s['extractor']})",
        f"  chunks {s['chunks']}, entities added {s['entities']}, relations added {s['relations']}, "
        f"mentions {s['mentions']}, warnings {s['warnings_count']}",
    ]
    shown = s["warnings"][:_WARNINGS_SHOWN]
    lines += [f"  warning {w}" for w in shown]
    if s["warnings_count"] > len(shown):
        lines.append(f"  … and {s['warnings_count'] - len(shown)} more warnings (see --json)")
    for sk in s["skipped"][:50]:
        path = sk["path"] if sk["path"].isprintable() else repr(sk["path"])  # a newline in a name: one line still
        where = f"{path}:{sk['line']}" if sk["line"] else path
        lines.append(f"  skipped {where}: {sk['reason']}")
    if len(s["skipped"]) > 50:
        lines.append(f"  … and {len(s['skipped']) - 50} more skipped (see --json)")
    for f in s["failed"][:20]:
        lines.append(f"  failed {f['path']}: {f['reason']}")
    for doc_id in s["pruned"]:
        lines.append(f"  pruned {doc_id} (file gone)")
    if s["interrupted"]:
        lines.append("interrupted: finished documents are committed; run the same command to resume")
    return "\n".join(lines)


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--extraction", "extraction_file", type=click.Path(dir_okay=False, path_type=Path),
              help="EXTRACTION.json for a single FILE: {entities: [...], relations: [...]} (agent-supplied).")
@click.option("--id", "doc_id", help="Document id with --extraction (default: the file name without extension).")
@click.option("--title", help="Title with --extraction (default: the file name).")
@click.option("--source", help="Source with --extraction (default: the file path).")
@click.option("--extractor", type=click.Choice(["offline", "llm", "none"]), default=None,
              help="Entity/relation extractor (default: config ingest.extractor, 'offline').")
@click.option("--glob", "glob_", metavar="PATTERN", help="Only files whose name or path matches, e.g. '*.md'.")
@click.option("--exclude", "excludes", multiple=True, metavar="PATTERN",
              help=".gitignore-style pattern to skip (repeatable; .gitignore files are honoured too).")
@click.option("--jsonl", is_flag=True, help="Read every PATH as JSONL records, whatever its extension.")
@click.option("--prune", is_flag=True, help="Delete documents whose files under PATHS are gone.")
@click.option("--follow-symlinks", is_flag=True,
              help="Follow symbolic links (files, folders, and PATHS that are links); by default they are "
                   "skipped and listed in the summary.")
@json_option
@click.pass_context
@handle_errors
def ingest(ctx: click.Context, paths: tuple[Path, ...], extraction_file: Path | None, doc_id: str | None,
           title: str | None, source: str | None, extractor: str | None, glob_: str | None,
           excludes: tuple[str, ...], jsonl: bool, prune: bool, follow_symlinks: bool, as_json: bool) -> None:
    """Ingest files and folders: documents, chunks, entities, relations, evidence.

    Folders are walked recursively (hidden files and .gitignore'd paths skipped). Unchanged
    files are skipped by content hash; changed ones become new versions. Symbolic links are
    not followed without --follow-symlinks. With --extraction, FILE is ingested with the
    entities and relations you supply.

    Document ids are paths relative to the folder that holds each PATH, so they do not depend on
    where the command runs: `ingest docs/` names docs/a.md 'docs/a.md', a FILE given alone is its
    name. A file inside a folder ingested before keeps that folder's ids (a subfolder or one file
    re-ingested adds nothing); ids stored by older versions (relative to the working directory)
    are kept. Two files that would get the same id in one command are refused.
    """
    if extraction_file is not None:
        if len(paths) != 1 or not paths[0].is_file():
            _fail("--extraction applies to exactly one FILE")
        for given in (paths[0], extraction_file):
            if given.is_symlink() and not follow_symlinks:
                _fail(f"{given}: is a symbolic link, not followed; pass --follow-symlinks to read it")
        extraction = load_extraction_file(extraction_file)
        content = _read_text(paths[0])
        kb = _open(ctx, create=True)
        the_id = doc_id or paths[0].stem
        # no --title: the file's name for a new document, the stored title for a known one (not a retitle)
        data = kb.ingest(the_id, title or (None if kb.documents.exists(the_id) else paths[0].name),
                         source or str(paths[0]), content, extraction).to_dict()
        _emit(data, as_json, render.ingest)
        return
    kb = _open(ctx, create=True)
    with _Progress(_progress_mode(as_json)) as progress:
        summary = kb.ingest_paths(list(paths), glob=glob_, extractor=extractor, excludes=excludes, prune=prune,
                                  on_progress=progress, as_jsonl=jsonl, follow_symlinks=follow_symlinks,
                                  on_stage=progress.stage)
    data = summary.to_dict()
    _emit(data, as_json, _render_summary)
    if summary.interrupted:
        sys.exit(130)
    _exit_for_outcome(data, paths)


def _exit_for_outcome(summary: dict[str, Any], paths: tuple[Path, ...]) -> None:
    code, message = ingest_outcome(summary, paths)
    if message:
        click.echo(f"error: {message}", err=True)
    if code:
        sys.exit(code)


ingest.help = f"{ingest.help}\n\n{EXIT_CODES_HELP}"


@cli.command()
@query_argument()
@click.option("--evidence", is_flag=True, help="Include supporting documents, spans and the evidence chain.")
@json_option
@click.pass_context
@handle_errors
def query(ctx: click.Context, text: str, evidence: bool, as_json: bool) -> None:
    """Subgraph around the entities TEXT names (BFS, depth <= 2, confidence >= 0.6)."""
    kb = _open(ctx)
    if evidence:
        _emit(kb.query_with_evidence(text), as_json, render.evidence)
    else:
        _emit(kb.query(text), as_json, render.subgraph)


@cli.command("search")
@query_argument()
@click.option("-k", "k", type=click.IntRange(min=1), default=10, show_default=True,
              help="Number of hits in total (shared between the kinds asked for).")
@click.option("--kind", "kinds", type=click.Choice(["chunk", "entity", "document", "page"]), multiple=True,
              help="What to return (repeatable; default chunk). 'document' ranks whole documents.")
@click.option("--strategy", type=click.Choice(["ppr", "bfs", "none"]), default=None,
              help="Graph expansion (default from the preset: ppr).")
@click.option("--preset", default=None, help="Named configuration: auto, default, facts, feedback, facts+feedback, "
                                            "bm25, dense, rrf, hybrid, bfs, ppr.")
@click.option("--context", "as_context", is_flag=True, help="Print a prompt-ready block of the best evidence.")
@click.option("--budget", type=click.IntRange(min=20), default=1000, show_default=True,
              help="Token budget of --context.")
@json_option
@click.pass_context
@handle_errors
def search_cmd(ctx: click.Context, text: str, k: int, kinds: tuple[str, ...], strategy: str | None,
               preset: str | None, as_context: bool, budget: int, as_json: bool) -> None:
    """Hybrid search: BM25 + embeddings + entities, graph expansion, rerank, evidence."""
    kb = _open(ctx)
    result = kb.search(text, kinds=list(kinds) or ["chunk"], k=k, strategy=strategy, preset=preset,
                       as_context=as_context, token_budget=budget)
    result.hits = render.share_between_kinds(result.hits, k)
    if as_json:
        _emit(result.to_dict(), True, str)
    elif as_context:
        click.echo(result.context)
    else:
        click.echo(render.search(result.to_dict()))


@cli.command()
@json_option
@click.pass_context
@handle_errors
def reindex(ctx: click.Context, as_json: bool) -> None:
    """Re-embed every chunk and entity with the configured embedding model."""
    kb = _open(ctx)
    with _Progress(_progress_mode(as_json), label="reindex") as progress:
        out = kb.reindex(lambda done, total: progress(done, total, ""))
    _emit(out, as_json, lambda d: f"re-embedded {d['chunks']} chunks and {d['entities']} entities with "
                                  f"{d['model']} (dropped {d['dropped']} old vectors)")


@cli.group()
def docs() -> None:
    """List, show, search and delete documents."""


@docs.command("list")
@click.option("--limit", type=click.IntRange(min=0), default=None, help="At most this many.")
@click.option("--offset", type=click.IntRange(min=0), default=0)
@json_option
@click.pass_context
@handle_errors
def docs_list(ctx: click.Context, limit: int | None, offset: int, as_json: bool) -> None:
    """Latest version of every document."""
    kb = _open(ctx)
    data = [{k: v for k, v in d.to_dict().items() if k != "content"} for d in kb.documents.list(limit, offset)]
    _emit(data, as_json, render.documents)


@docs.command("show")
@click.argument("doc_id")
@click.option("--version", type=click.IntRange(min=1), default=None, help="A specific version.")
@click.option("--chunks", "show_chunks", is_flag=True, help="List the chunks instead of the content.")
@json_option
@click.pass_context
@handle_errors
def docs_show(ctx: click.Context, doc_id: str, version: int | None, show_chunks: bool, as_json: bool) -> None:
    """Show one document (content or chunks) and its versions."""
    kb = _open(ctx)
    doc = kb.documents.get(doc_id, version)
    chunks = [c.to_dict() for c in kb.documents.chunks(doc_id, doc.version)]
    versions = [d.version for d in kb.documents.versions(doc_id)]
    if as_json:
        _emit(doc.to_dict() | {"chunks": chunks, "versions": versions}, True, str)
    else:
        click.echo(render.document(doc.to_dict(), chunks if show_chunks else None, versions))


@docs.command("search")
@query_argument()
@click.option("-k", "k", type=click.IntRange(min=1), default=10, show_default=True)
@json_option
@click.pass_context
@handle_errors
def docs_search(ctx: click.Context, text: str, k: int, as_json: bool) -> None:
    """Full-text (BM25) search over chunks."""
    kb = _open(ctx)
    _emit([h.to_dict() for h in kb.documents.search(text, k)], as_json, render.chunk_hits)


@docs.command("rm")
@click.argument("doc_id")
@json_option
@click.pass_context
@handle_errors
def docs_rm(ctx: click.Context, doc_id: str, as_json: bool) -> None:
    """Delete a document (all versions) and the evidence it gave.

    Entities and relations left without evidence are removed unless added by hand.
    """
    kb = _open(ctx)
    _emit(kb.documents.delete(doc_id), as_json,
          lambda r: f"deleted {r['doc_id']} ({r['versions_deleted']} version(s)); removed "
                    f"{r['nodes_removed']} entities and {r['edges_removed']} relations left without evidence")


@entity.command("show")
@click.argument("name")
@json_option
@click.pass_context
@handle_errors
def entity_show(ctx: click.Context, name: str, as_json: bool) -> None:
    """An entity (by name, alias or id) with its relations and evidence."""
    kb = _open(ctx)
    _emit(kb.graph.get_entity(name), as_json, render.entity)


@entity.command("add")
@click.argument("name")
@click.option("--type", "type_", default="concept", show_default=True, help="Entity type (normalised).")
@click.option("--alias", "aliases", multiple=True, help="An alias (repeatable).")
@json_option
@click.pass_context
@handle_errors
def entity_add(ctx: click.Context, name: str, type_: str, aliases: tuple[str, ...], as_json: bool) -> None:
    """Add an entity by hand (kept even without evidence)."""
    kb = _open(ctx, create=True)
    node_id = kb.graph.add_node(name, type_, aliases)
    _emit({"id": node_id, "name": name}, as_json, lambda d: f"entity {d['name']} ({d['id']})")


@entity.command("merge")
@click.argument("keep")
@click.argument("other")
@json_option
@click.pass_context
@handle_errors
def entity_merge(ctx: click.Context, keep: str, other: str, as_json: bool) -> None:
    """Merge entity OTHER into KEEP (OTHER's names become aliases)."""
    kb = _open(ctx)
    _emit(kb.graph.merge(keep, other), as_json,
          lambda r: f"merged {r['merged']} into {r['kept']}: {r['edges_moved']} relations moved, "
                    f"{r['edges_folded']} folded into existing ones")


@cli.group()
def relation() -> None:
    """Add relations by hand."""


@relation.command("add")
@click.argument("source")
@click.argument("type_", metavar="RELATION")
@click.argument("target")
@click.option("--confidence", type=float, default=1.0, show_default=True)
@json_option
@click.pass_context
@handle_errors
def relation_add(ctx: click.Context, source: str, type_: str, target: str, confidence: float,
                 as_json: bool) -> None:
    """Add SOURCE --[RELATION]--> TARGET between existing entities ("is part of" swaps ends)."""
    kb = _open(ctx)
    data = kb.graph.get_edge(kb.graph.add_edge(source, target, type_, confidence))
    _emit(data, as_json, lambda d: f"{d['source_name']} --[{d['type']}]--> {d['target_name']} ({d['id']})")


@cli.command()
@json_option
@click.pass_context
@handle_errors
def stats(ctx: click.Context, as_json: bool) -> None:
    """Counts of documents, chunks, entities, relations, evidence and events."""
    kb = _open(ctx)
    _emit(kb.stats(), as_json, render.stats)


for _group in (events_group, wiki_group, skills_group, memory_group, config_group, mcp_group, portable_import_group,
               skill_group, serve_command, export_cmd, backup_cmd, restore_cmd, check_cmd, status_cmd, migrate_cmd):
    cli.add_command(_group)

add_shared_options(cli)  # last: every command registered above gets --home / --read-only


def _note(message: Warning | str, category: type[Warning], filename: str, lineno: int, file: Any = None,
          line: str | None = None) -> None:
    # Library notes (e.g. "no embedding model available") are one line for a person, not a
    # Python warning with a file name and a source line.
    click.echo(f"note: {message}", err=True)


def main() -> None:
    """Console-script entry point."""
    import warnings

    warnings.showwarning = _note
    cli(obj={}, prog_name="graphmem")

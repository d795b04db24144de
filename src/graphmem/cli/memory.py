"""``graphmem memory ...``: add, search, list, show, update, rm, history, decay, backfill, stats.

Each command parses its arguments, calls one ``kb.memory`` method and prints the result
(``--json`` for machines).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

import click

from .app import _emit, _fail, _open, handle_errors, json_option, query_argument
from .progress import _Progress, _progress_mode

__all__ = ["memory"]

F = TypeVar("F", bound=Callable[..., Any])


def scope_options(fn: F) -> F:
    """``--user``, ``--agent``, ``--run``, ``--tenant``."""
    for name, help_ in (("tenant", "Tenant id."), ("run", "Run (session) id."), ("agent", "Agent id."),
                        ("user", "User id.")):
        fn = click.option(f"--{name}", f"{name}_id", default=None, help=help_)(fn)
    return fn


def _meta(raw: str | None) -> dict[str, Any] | None:
    if raw is None:
        return None
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        _fail(f"--metadata: not valid JSON ({exc.msg} at position {exc.pos}); e.g. '{{\"doc_id\": \"a\"}}'")
    if not isinstance(data, dict):
        _fail("--metadata: expected a JSON object, e.g. '{\"doc_id\": \"a\"}'")
    return data


def _line(m: dict[str, Any]) -> str:
    who = " ".join(f"{k[:-3]}={m[k]}" for k in ("user_id", "agent_id", "run_id") if m.get(k))
    return f"{m['id']}  [{who}]  {m['memory']}"


@click.group()
def memory() -> None:
    """Memories: what the agent was told, auto-linked, scoped by user/agent/run, decaying."""


@memory.command("add")
@click.argument("text", nargs=-1, required=True)
@scope_options
@click.option("--metadata", help="Metadata as a JSON object.")
@click.option("--timestamp", help="When it was said (ISO-8601; default now).")
@click.option("--role", help="Speaker role (user, assistant, ...).")
@json_option
@click.pass_context
@handle_errors
def memory_add(ctx: click.Context, text: tuple[str, ...], user_id: str | None, agent_id: str | None,
               run_id: str | None, tenant_id: str | None, metadata: str | None, timestamp: str | None,
               role: str | None, as_json: bool) -> None:
    """Remember TEXT (each argument is one memory, in order)."""
    kb = _open(ctx, create=True)
    items: list[Any] = [{"role": role, "content": t} for t in text] if role else list(text)
    data = kb.memory.add(items if len(items) > 1 or role else items[0], user_id=user_id, agent_id=agent_id,
                         run_id=run_id, tenant_id=tenant_id, metadata=_meta(metadata), timestamp=timestamp)
    _emit(data, as_json, lambda d: "\n".join(f"added {r['id']}: {r['memory']}" for r in d["results"])
          + f"\n{d['edges']} edge(s)")


def _search_text(d: dict[str, Any]) -> str:
    if not d["results"]:
        return "no memories found"
    lines = []
    for r in d["results"]:
        cg = r["context_graph"]
        lines.append(f"{r['score']:.3f}  {r['id']}  {r['memory']}\n       dense {cg['dense']:.2f}  lexical "
                     f"{cg['lexical']:.2f}  graph {cg['graph']:.2f}{'  (seed)' if cg['was_seed'] else ''}")
    for e in d.get("subgraph", []):
        lines.append(f"  {e['src']} -[{e['type']} {e['weight']}]-> {e['dst']}")
    return "\n".join(lines)


@memory.command("search")
@query_argument("query")
@scope_options
@click.option("-k", "--limit", default=10, show_default=True, help="Results.")
@click.option("--strategy", type=click.Choice(["bfs", "ppr"]), help="Expansion (default: config).")
@click.option("--no-graph", is_flag=True, help="Rank without the context graph.")
@click.option("--archived", is_flag=True, help="Include archived memories.")
@json_option
@click.pass_context
@handle_errors
def memory_search(ctx: click.Context, query: str, user_id: str | None, agent_id: str | None, run_id: str | None,
                  tenant_id: str | None, limit: int, strategy: str | None, no_graph: bool, archived: bool,
                  as_json: bool) -> None:
    """Search memories of a scope: seeds, context-graph expansion, rerank."""
    kb = _open(ctx)
    data = kb.memory.search(query, user_id=user_id, agent_id=agent_id, run_id=run_id, tenant_id=tenant_id,
                            limit=limit, use_context_graph=False if no_graph else None,
                            include_archived=archived, strategy=strategy)
    _emit(data, as_json, _search_text)


@memory.command("list")
@scope_options
@click.option("-n", "--limit", default=100, show_default=True)
@click.option("--offset", default=0, show_default=True, help="Skip this many (the next page of a long list).")
@click.option("--archived", is_flag=True, help="Include archived memories.")
@json_option
@click.pass_context
@handle_errors
def memory_list(ctx: click.Context, user_id: str | None, agent_id: str | None, run_id: str | None,
                tenant_id: str | None, limit: int, offset: int, archived: bool, as_json: bool) -> None:
    """List memories of a scope, oldest first."""
    kb = _open(ctx)
    data = kb.memory.get_all(limit=limit, user_id=user_id, agent_id=agent_id, run_id=run_id, tenant_id=tenant_id,
                             include_archived=archived, offset=offset)
    _emit(data, as_json, lambda d: "\n".join(_line(m) for m in d["results"]) or "no memories")


@memory.command("show")
@click.argument("memory_id")
@json_option
@click.pass_context
@handle_errors
def memory_show(ctx: click.Context, memory_id: str, as_json: bool) -> None:
    """Show one memory."""
    kb = _open(ctx)
    _emit(kb.memory.get(memory_id), as_json,
          lambda m: _line(m) + f"\n  said {m['timestamp']}  relevance {m['relevance']:.3f}  version {m['version']}"
          + ("  (archived)" if m["archived"] else "") + (f"\n  metadata {json.dumps(m['metadata'])}"
                                                         if m["metadata"] else ""))


@memory.command("update")
@click.argument("memory_id")
@click.argument("text")
@json_option
@click.pass_context
@handle_errors
def memory_update(ctx: click.Context, memory_id: str, text: str, as_json: bool) -> None:
    """Replace a memory's text (the old version is kept)."""
    kb = _open(ctx)
    _emit(kb.memory.update(memory_id, text), as_json,
          lambda d: f"updated {d['id']} (previous version {d['previous_version']})")


@memory.command("rm")
@click.argument("memory_id")
@json_option
@click.pass_context
@handle_errors
def memory_rm(ctx: click.Context, memory_id: str, as_json: bool) -> None:
    """Delete a memory (its history stays)."""
    kb = _open(ctx)
    _emit(kb.memory.delete(memory_id), as_json, lambda d: f"deleted {d['id']} and {d['edges']} edge(s)")


@memory.command("history")
@click.argument("memory_id")
@json_option
@click.pass_context
@handle_errors
def memory_history(ctx: click.Context, memory_id: str, as_json: bool) -> None:
    """What happened to a memory, oldest first."""
    kb = _open(ctx)
    _emit(kb.memory.history(memory_id), as_json, lambda rows: "\n".join(
        f"{r['ts']}  v{r['version']}  {r['event']}  {r['old_text'] or ''}"
        f"{' -> ' if r['old_text'] and r['new_text'] else ''}{r['new_text'] or ''}" for r in rows))


@memory.command("decay")
@json_option
@click.pass_context
@handle_errors
def memory_decay(ctx: click.Context, as_json: bool) -> None:
    """Run a decay pass now (prune weak edges, archive faded memories)."""
    kb = _open(ctx)
    _emit(kb.memory.tick_decay(), as_json,
          lambda d: f"decayed {d['decayed']}, pruned {d['pruned']} edge(s), archived {d['archived']} memory(ies)")


@memory.command("backfill")
@scope_options
@click.option("--batch-size", default=500, show_default=True)
@json_option
@click.pass_context
@handle_errors
def memory_backfill(ctx: click.Context, user_id: str | None, agent_id: str | None, run_id: str | None,
                    tenant_id: str | None, batch_size: int, as_json: bool) -> None:
    """Link memories stored before the context graph was on (idempotent)."""
    kb = _open(ctx)
    with _Progress(_progress_mode(as_json), label="backfill") as progress:
        data = kb.memory.backfill_context_graph(user_id=user_id, agent_id=agent_id, run_id=run_id,
                                                tenant_id=tenant_id, batch_size=batch_size,
                                                on_progress=lambda done, total: progress(done, total, ""))
    _emit(data, as_json, lambda d: f"linked {d['nodes']} memory(ies) with {d['edges']} new edge(s)")


@memory.command("stats")
@scope_options
@json_option
@click.pass_context
@handle_errors
def memory_stats(ctx: click.Context, user_id: str | None, agent_id: str | None, run_id: str | None,
                 tenant_id: str | None, as_json: bool) -> None:
    """Counts of memories and their edges."""
    kb = _open(ctx)
    data = kb.memory.stats(user_id=user_id, agent_id=agent_id, run_id=run_id, tenant_id=tenant_id)
    _emit(data, as_json, lambda d: f"memories {d['memories']} (archived {d['archived']}), edges {d['edges']}"
          + "".join(f"\n  {t}: {n}" for t, n in d["edge_types"].items()) + f"\nmentions {d['mentions']}")

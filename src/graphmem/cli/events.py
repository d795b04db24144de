"""``graphmem events``: list the change log; ``follow`` it to stdout; forward it to a ``webhook``."""

from __future__ import annotations

import json
from pathlib import Path

import click

from . import render
from .app import _emit, _open, handle_errors, json_option
from .portability import EXPORT_FORMATS

__all__ = ["events"]


@click.group(invoke_without_command=True)
@click.option("--after", type=click.IntRange(min=0), default=0, help="Only events after this id.")
@click.option("--type", "types", multiple=True, help="Only events of this type (repeatable).")
@click.option("--limit", type=click.IntRange(min=0), default=50, show_default=True)
@json_option
@click.pass_context
@handle_errors
def events(ctx: click.Context, after: int, types: tuple[str, ...], limit: int, as_json: bool) -> None:
    """The change log, oldest first (subcommands follow it and forward it)."""
    if ctx.invoked_subcommand is not None:
        return
    kb = _open(ctx)
    _emit([e.to_dict() for e in kb.events.list(after, list(types) or None, None, limit)], as_json, render.events)


@events.command("follow")
@click.option("--type", "types", multiple=True,
              help="Only events of this type (repeatable; graphmem types or ContextKit names).")
@click.option("--from", "from_id", type=click.IntRange(min=0), default=None,
              help="Start after this event id (0: the whole log; default: only new events).")
@click.option("--poll", type=click.FloatRange(min=0.001), default=0.05, show_default=True,
              help="Seconds between looks at the log when nothing is new.")
@json_option
@click.pass_context
@handle_errors
def follow_cmd(ctx: click.Context, types: tuple[str, ...], from_id: int | None, poll: float, as_json: bool) -> None:
    """Print events as they are committed, by this or any other process, until interrupted (--json: one
    JSON object per line). Resume after a crash with --from and the last id printed."""
    kb = _open(ctx)
    start = kb.events.last_id() if from_id is None else from_id
    for event in kb.events.follow(start, list(types) or None, poll=poll):
        if as_json:
            click.echo(json.dumps(event.to_dict(), ensure_ascii=False, default=str))
        else:
            click.echo(render.events([event.to_dict()]))


@events.command("webhook")
@click.argument("url")
@click.option("--secret", required=True, envvar="GRAPHMEM_WEBHOOK_SECRET",
              help="Shared secret for the HMAC-SHA256 signature (or GRAPHMEM_WEBHOOK_SECRET).")
@click.option("--type", "types", multiple=True, help="Only events of this type (repeatable).")
@click.option("--from", "from_id", type=click.IntRange(min=0), default=0, show_default=True,
              help="Where a forwarder that never ran starts (one that ran resumes where it stopped).")
@click.option("--retries", type=click.IntRange(min=0), default=5, show_default=True)
@click.option("--backoff", type=click.FloatRange(min=0), default=0.5, show_default=True,
              help="Seconds before the first retry (doubled each time).")
@click.option("--dead-letter", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="JSONL file of undeliverable events (default: webhook-dead-letter.jsonl in the knowledge base).")
@click.option("--max-events", type=click.IntRange(min=1), default=None, help="Stop after this many (default: run on).")
@json_option
@click.pass_context
@handle_errors
def webhook_cmd(ctx: click.Context, url: str, secret: str, types: tuple[str, ...], from_id: int, retries: int,
                backoff: float, dead_letter: Path | None, max_events: int | None, as_json: bool) -> None:
    """Forward every event to URL as a signed JSON POST, recording after each one where it got to, so a
    restart resumes after the last event handled."""
    from ..feed.sinks import WebhookSink  # urllib, http and ssl only for the command that posts

    kb = _open(ctx)
    sink = WebhookSink(url, secret, retries=retries, backoff=backoff,
                       dead_letter=dead_letter or kb.home / "webhook-dead-letter.jsonl")
    name = f"webhook:{url}"
    sent = kb.events.forward(sink, name, from_id, list(types) or None, max_events=max_events)
    _emit({"url": url, "sent": sent, "cursor": kb.events.cursor(name)}, as_json,
          lambda d: f"forwarded {d['sent']} events to {d['url']} (last id {d['cursor']})")


def _view_counts(view: object) -> dict[str, int]:
    stats = view.stats()  # type: ignore[attr-defined]
    pages = len(view.wiki.list_pages())  # type: ignore[attr-defined]
    memories = view.memory.stats().to_dict()  # type: ignore[attr-defined]
    return {"documents": stats["documents"], "chunks": stats["chunks"], "entities": stats["entities"],
            "relations": stats["edges"], "memories": memories["memories"], "pages": pages}


@events.command("replay")
@click.option("--until", required=True, metavar="ID|TIME",
              help="An event id, or an ISO-8601 time (the last event at or before it).")
@json_option
@click.pass_context
@handle_errors
def replay_cmd(ctx: click.Context, until: str, as_json: bool) -> None:
    """Rebuild the knowledge base as it was at --until and print what it held then."""
    kb = _open(ctx)
    with kb.events.replay(until) as view:
        data = {**view.replay_stats, **_view_counts(view)}
    _emit(data, as_json, lambda d: f"at event {d['until']}: {d['documents']} documents, {d['entities']} entities, "
                                   f"{d['relations']} relations, {d['memories']} memories, {d['pages']} pages "
                                   f"({d['undone']} later changes undone)")


@events.command("export")
@click.argument("out", type=click.Path(path_type=Path))
@click.option("--until", required=True, metavar="ID|TIME", help="An event id, or an ISO-8601 time.")
@click.option("--format", "fmt", type=click.Choice(EXPORT_FORMATS), default="jsonl", show_default=True)
@json_option
@click.pass_context
@handle_errors
def export_until_cmd(ctx: click.Context, out: Path, until: str, fmt: str, as_json: bool) -> None:
    """Write the knowledge base as it was at --until to OUT (any `graphmem export` format; no wiki files)."""
    from ..portability import export

    kb = _open(ctx)
    with kb.events.replay(until) as view:
        data = {"until": view.until, **export(view.ctx, fmt, out)}
    _emit(data, as_json, lambda d: f"exported the state at event {d['until']} as {d['format']} to {d['out']}")

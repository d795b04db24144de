"""Regenerating the generated pages that ingests marked stale, in chunks, so that one page
that cannot be made never blocks the others.

A chunk of marks is one operation (:meth:`WikiCore.apply`). When it fails with a graphmem
error, it is split in halves and each half is tried again, down to single marks: the marks
that still fail are reported and left marked (a later flush or ``wiki sync`` retries them),
and every other page is written. A single bad mark among 2,000 costs about 2·log2(2000) = 22
extra attempts; the number of failed attempts per flush is capped, so an error that hits every
page (a full disk) does not turn into thousands of attempts. StoreBusy is not split: waiting
for the lock again per half would only multiply the wait.
"""

from __future__ import annotations

from typing import Any

from ..errors import GraphmemError, StoreBusy
from .core import Plan, WikiCore
from .generate import DOC, plan_auto_pages

__all__ = ["FLUSH_KEYS", "regenerate"]

FLUSH_KEYS = 2000  # generated pages per transaction when catching up
MAX_FAILED_ATTEMPTS = 64  # per flush; past it a failing chunk is reported whole


def regenerate(core: WikiCore, label: str | None = None, skip: set[str] | frozenset[str] = frozenset()
               ) -> dict[str, Any]:
    """Regenerate every marked page except the marks in ``skip``: ``{"pages": n, "documents":
    m, "failed": [{"key", "error"}]}``. ``label``: the log line's reason (else "ingest")."""
    store = core.ctx.store
    total: dict[str, Any] = {"pages": 0, "documents": 0, "failed": []}
    done: set[str] = set(skip)
    budget = [MAX_FAILED_ATTEMPTS]
    relinks = _Relinks()
    while True:
        keys = [k for k in store.wiki_dirty(FLUSH_KEYS + len(done)) if k not in done][:FLUSH_KEYS]
        if not keys:
            return total
        done.update(keys)
        # The summaries the previous round marked (and nothing else): only the pages that round
        # can have changed are rendered again (see generate.relink_scope).
        created = relinks.created if relinks.complete and set(keys) <= relinks.marked else None
        relinks = _Relinks()
        _apply_keys(core, keys, label, done, total, budget, relinks, created)


class _Relinks:
    """What the rounds of one pass marked for the next: the summaries, the entities whose new
    pages they now link; ``complete`` is False when a round moved pages (its marks then include
    pages linking a renamed one, which are rendered in full)."""

    def __init__(self) -> None:
        self.marked: set[str] = set()
        self.created: set[str] = set()
        self.complete = True

    def note(self, info: dict[str, Any]) -> None:
        self.marked.update(info["relink"])
        self.created.update(info["created"])
        self.complete = self.complete and not info["moved"]


def _apply_keys(core: WikiCore, keys: list[str], label: str | None, done: set[str], total: dict[str, Any],
                budget: list[int], relinks: _Relinks, created: set[str] | None) -> None:
    try:
        plan = core.apply(lambda: _make_plan(core, keys, label, created))
    except StoreBusy:
        raise
    except GraphmemError as exc:
        budget[0] -= 1
        if len(keys) == 1 or budget[0] <= 0:
            total["failed"] += [{"key": k, "error": str(exc)} for k in keys]
            return
        half = len(keys) // 2
        _apply_keys(core, keys[:half], label, done, total, budget, relinks, created)
        _apply_keys(core, keys[half:], label, done, total, budget, relinks, created)
        return
    relinks.note(plan.info)
    # Entities a document brought along are up to date now: a later chunk skips them.
    done.update(plan.clear_dirty)
    total["pages"] += len(plan.saved)
    total["documents"] += len(plan.info.get("documents", []))


def _make_plan(core: WikiCore, keys: list[str], label: str | None, created: set[str] | None) -> Plan:
    store = core.ctx.store
    plan = plan_auto_pages(core, keys, core.ctx.now(), sorted(created) if created is not None else None)
    # Unmark the entities a document brought along too, so a later chunk does not render them again.
    plan.clear_dirty = sorted(set(keys) | set(plan.info["subjects"]))
    if plan.info["relink"]:
        store.mark_wiki_dirty(plan.info["relink"])
    info = plan.info
    if plan.writes and label:
        plan.log += [f"update | {w.category}/{w.slug} — {label}" for w in plan.writes]
    elif plan.writes:
        docs = info["documents"]
        summaries = [w for w in plan.writes if w.subject and w.subject.startswith(DOC)]
        n_ent = info["entity"]
        if len(docs) == 1 and summaries:
            head = f"{summaries[0].category}/{summaries[0].slug} — {docs[0]}"
        else:
            head = f"wiki — {len(docs)} documents: {info['summary']} summary pages"
        plan.log.append(f"ingest | {head}; {n_ent} entity page{'s' if n_ent != 1 else ''} updated")
    return plan

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
from .scope import LastRound

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
        # can have changed are rendered again (see scope.relink_scope).
        last = relinks.last if relinks.complete and set(keys) <= relinks.marked else None
        relinks = _Relinks()
        _apply_keys(core, keys, label, done, total, budget, relinks, last)


class _Relinks:
    """What the rounds of one pass marked for the next: the summaries (``marked``) and what the
    relink round may assume about them (``last``); ``complete`` is False when a round moved pages
    (its marks then include pages linking a renamed one, which are rendered in full)."""

    def __init__(self) -> None:
        self.marked: set[str] = set()
        self.last = LastRound(rendered=set())
        self.complete = True
        self._rounds = 0

    def note(self, info: dict[str, Any]) -> None:
        self.marked.update(info["relink"])
        for nid, listed in info["created"].items():
            # Created by two rounds (a retried half): what its page lists is not known for sure.
            self.last.created[nid] = set() if nid in self.last.created else set(listed)
        self._rounds += 1
        # Only one round's pages were rendered knowing every new slug (a later round's are not).
        self.last.rendered = set(info["rendered"]) if self._rounds == 1 else None
        self.complete = self.complete and not info["moved"]


def _apply_keys(core: WikiCore, keys: list[str], label: str | None, done: set[str], total: dict[str, Any],
                budget: list[int], relinks: _Relinks, last: LastRound | None) -> None:
    try:
        plan = core.apply(lambda: _make_plan(core, keys, label, last))
    except StoreBusy:
        raise
    except GraphmemError as exc:
        budget[0] -= 1
        if len(keys) == 1 or budget[0] <= 0:
            total["failed"] += [{"key": k, "error": str(exc)} for k in keys]
            return
        half = len(keys) // 2
        _apply_keys(core, keys[:half], label, done, total, budget, relinks, last)
        _apply_keys(core, keys[half:], label, done, total, budget, relinks, last)
        return
    relinks.note(plan.info)
    # Entities a document brought along are up to date now: a later chunk skips them.
    done.update(plan.clear_dirty)
    total["pages"] += len(plan.saved)
    total["documents"] += len(plan.info.get("documents", []))


def _make_plan(core: WikiCore, keys: list[str], label: str | None, last: LastRound | None) -> Plan:
    store = core.ctx.store
    plan = plan_auto_pages(core, keys, core.ctx.now(), last)
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

"""Calls a stranger makes by mistake: a knowledge base used after close(), a lone surrogate given to a
method a face inherits, a timestamp outside the calendar. Each is InvalidInput naming the call, and
writes nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.conftest import snapshot

import graphmem
from graphmem.errors import InvalidInput


def test_a_closed_knowledge_base_says_so(tmp_path: Path) -> None:
    """Used after close() (or after its ``with`` block), every call raised sqlite3.ProgrammingError."""
    kb = graphmem.open(tmp_path / "kb")
    kb.memory.add("I like green tea", user_id="u")
    kb.close()
    kb.close()  # harmless
    for call in (lambda: kb.memory.search("tea", user_id="u"), lambda: kb.search("tea"),
                 lambda: kb.skills.retrieve("tea"), lambda: kb.documents.list(), lambda: kb.wiki.list_pages(),
                 lambda: kb.query_with_evidence("tea"), lambda: kb.events.list()):
        with pytest.raises(InvalidInput, match=r"the knowledge base .*kb is closed; open it again"):
            call()
    with graphmem.open(tmp_path / "kb") as again:
        assert [m["memory"] for m in again.memory.get_all(user_id="u")["results"]] == ["I like green tea"]


def test_methods_a_face_inherits_check_their_arguments_too(kb: graphmem.KnowledgeBase) -> None:
    """backfill_context_graph and reset_context_graph come from a mixin: a lone surrogate in user_id reached
    SQLite (UnicodeEncodeError) instead of the InvalidInput every other method gives."""
    for method in ("backfill_context_graph", "reset_context_graph"):
        with pytest.raises(InvalidInput, match=rf"memory\.{method}: user_id holds a lone surrogate"):
            getattr(kb.memory, method)(user_id="u\ud800")


@pytest.mark.parametrize("when", [1e20, -1e15, -62135596801, "0001-01-01T00:00:00+05:00", "9999-12-31T23:00:00-05:00"])
def test_a_timestamp_outside_the_calendar_is_refused_by_name(kb: graphmem.KnowledgeBase, when: Any) -> None:
    """OverflowError / ValueError ('year 0 is out of range') came out of memory.add."""
    before = snapshot(kb)
    with pytest.raises(InvalidInput, match=r"timestamp: .* is outside the years 1 to 9999 \(UTC\)"):
        kb.memory.add("hello", user_id="u", timestamp=when)
    assert snapshot(kb) == before


def test_the_edges_of_the_calendar_are_kept(kb: graphmem.KnowledgeBase) -> None:
    from datetime import datetime, timedelta, timezone

    kb.memory.add("first", user_id="u", timestamp=datetime(1, 1, 1, 5, tzinfo=timezone(timedelta(hours=5))))
    kb.memory.add("last", user_id="u", timestamp="9999-12-31T23:59:59Z")
    said = sorted(m["timestamp"] for m in kb.memory.get_all(user_id="u")["results"])
    assert said == ["0001-01-01T00:00:00.000Z", "9999-12-31T23:59:59.000Z"]

"""Filtering the log by event type: ContextKit's names work in every face (subscribe and follow took them,
list did not), and a name that is no event type is refused by name instead of answering nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

import graphmem
from graphmem.errors import InvalidInput


def _kb(tmp_path: Path) -> graphmem.KnowledgeBase:
    kb = graphmem.open(tmp_path / "kb", config={"wiki": {"auto_pages": False}})
    kb.graph.add_node("alpha")
    kb.memory.add("I like green tea", user_id="u")
    return kb


def test_list_takes_contextkit_names_as_follow_does(tmp_path: Path) -> None:
    with _kb(tmp_path) as kb:
        assert [e.type for e in kb.events.list(types=["node_added"])] == ["node.added", "memory.added"]
        assert [e.type for e in kb.events.list(types="memory.added")] == ["memory.added"]
        followed = kb.events.follow(0, ["node_added"])
        assert [next(followed).type, next(followed).type] == ["node.added", "memory.added"]


@pytest.mark.parametrize("bad", ["nope", "node.add", "", "wiki."])
def test_an_unknown_type_is_refused_in_list_follow_and_subscribe(tmp_path: Path, bad: str) -> None:
    with _kb(tmp_path) as kb:
        with pytest.raises(InvalidInput, match=rf"types: {bad!r} is not an event type; use one of graphmem's"):
            kb.events.list(types=[bad])
        with pytest.raises(InvalidInput, match="is not an event type"):
            next(kb.events.follow(0, [bad]))
        with pytest.raises(InvalidInput, match=r"event_types: .* is not an event type"):
            kb.events.subscribe(lambda e: None, [bad], 0)
        assert kb.events.list(types=["wiki.rename"]) == []  # wiki.<operation> stays open


def test_every_event_graphmem_writes_is_a_type_a_filter_accepts() -> None:
    """kb.migrated was written (portability/migrate.py) but missing from EVENT_TYPES, so filtering on it was
    refused. Every append_event("x.y", ...) in the source must name a listed type."""
    import re

    from graphmem.feed.types import EVENT_TYPES, filter_types

    src = Path(graphmem.__file__).parent
    written = {m for f in src.rglob("*.py") for m in re.findall(r'append_event\(\s*"([a-z_]+\.[a-z_]+)"',
                                                                 f.read_text(encoding="utf-8"))}
    assert len(written) > 20 and written - set(EVENT_TYPES) == set()
    assert filter_types(sorted(written)) is not None
    with pytest.raises(InvalidInput, match="types: expected an event type or a list of them, got int"):
        filter_types(5)  # type: ignore[arg-type]


def test_any_iterable_of_names_is_a_filter(tmp_path: Path) -> None:
    from graphmem.feed.types import EVENT_TYPES

    with _kb(tmp_path) as kb:
        assert len(kb.events.list(types=EVENT_TYPES.keys())) == len(kb.events.list())
        assert [e.type for e in kb.events.list(types=(t for t in ["node.added"]))] == ["node.added"]

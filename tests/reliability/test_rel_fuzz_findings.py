"""What bench/reliability_fuzz.py found, pinned: each call used to escape with a TypeError."""

from __future__ import annotations

import pytest

import graphmem
from graphmem.errors import InvalidInput

pytestmark = pytest.mark.reliability


@pytest.mark.parametrize("kinds", [True, 3.5, 7, {"chunk": 1}, [["chunk"]], [None]])
def test_search_with_kinds_that_are_not_kinds_is_invalid_input(kb: graphmem.KnowledgeBase, kinds: object) -> None:
    with pytest.raises(InvalidInput, match="kind"):
        kb.search("anything", kinds=kinds)  # type: ignore[arg-type]


@pytest.mark.parametrize("config", [1, "bm25", ["preset"]])
def test_search_with_a_config_that_is_not_a_mapping_is_invalid_input(kb: graphmem.KnowledgeBase,
                                                                      config: object) -> None:
    with pytest.raises(InvalidInput, match="config"):
        kb.search("anything", config=config)  # type: ignore[arg-type]


@pytest.mark.parametrize("tags", [1.5, True, 9, {"a": "b"}])
def test_write_page_with_tags_that_are_not_a_list_is_invalid_input(kb: graphmem.KnowledgeBase, tags: object) -> None:
    before = kb.stats()["events"]
    with pytest.raises(InvalidInput, match="tags"):
        kb.wiki.write_page("topic", "Tagged", "Body.\n", tags=tags)  # type: ignore[arg-type]
    assert kb.stats()["events"] == before

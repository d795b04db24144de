"""A first-round passage whose document title the query names keeps its place in the fusion of the rounds
(MuSiQue: "What currency predated the Euro in the country Signmark is from?" lost the page "Signmark",
first-round rank 4, to passages of the second round)."""

from __future__ import annotations

from pathlib import Path

import pytest

import graphmem
from graphmem.errors import InvalidInput
from graphmem.retrieval.hits import Hit
from graphmem.retrieval.search import title_named

QUESTION = "What currency predated the euro in the country Signmark is from?"
DOCS = [
    ("page", "Signmark", "A rapper from Finland who signs his songs."),
    ("tour1", "Tour dates", "Signmark played Helsinki, Berlin and Oslo; tickets cost euro currency in every country of "
                            "the tour, the currency of each country."),
    ("tour2", "Tour prices", "Signmark tickets: the euro currency in each country, a currency that predated nothing."),
    ("tour3", "Tour merchandise", "Signmark shirts were sold for euro in the country, any currency."),
    ("cities", "Cities", "Helsinki, Berlin and Oslo hosted concerts."),
]


def _hit(cid: str, title: str) -> Hit:
    return Hit("chunk", cid, 0.0, {}, False, title, "", cid, cid, 1)


def test_a_title_is_named_by_its_words_as_one_phrase() -> None:
    hits = [_hit("a", "Signmark"), _hit("b", "Henry Worrall (artist)"), _hit("c", "Worrall Henry"),
            _hit("d", "The"), _hit("e", "Notes"), _hit("f", ""), _hit("g", "Euro"), _hit("h", "Sign")]
    assert title_named(QUESTION, hits) == {"a", "g"}  # "Sign" is a word of no query word: no
    assert title_named("Where did Henry Worrall die?", hits) == {"b"}  # the disambiguation is set aside
    assert title_named("where are the notes?", hits) == {"e"}
    assert title_named("what is the", hits) == set()  # a title of stop words alone is named by no query


@pytest.fixture
def kb(tmp_path: Path):
    with graphmem.open(tmp_path / "kb", config={"embeddings": {"model": "none"}, "wiki": {"auto_pages": False}}) as kb:
        for doc_id, title, text in DOCS:
            kb.ingest_with_content(doc_id, title, f"{doc_id}.md", text, [], [])
        yield kb


def test_the_page_the_question_names_is_not_pushed_down_by_the_rounds(kb) -> None:
    res = kb.search(QUESTION, k=5, config={"feedback_passages": 1})
    titles = [h.title for h in res.hits]
    assert titles[0] == "Signmark"
    assert res.hits[0].parts["title_named"] > 0
    assert all(h.parts["title_named"] == 0 for h in res.hits[1:])
    # Without the term the page falls to where the first round put it (below three passages that repeat the
    # query's words), which is what the rule changes.
    off = kb.search(QUESTION, k=5, config={"feedback_passages": 1, "title_named_weight": 0})
    assert [h.title for h in off.hits].index("Signmark") == 3
    assert all(h.parts["title_named"] == 0 for h in off.hits)


def test_the_weight_is_checked(kb) -> None:
    with pytest.raises(InvalidInput, match="title_named_weight"):
        kb.search(QUESTION, config={"feedback_passages": 1, "title_named_weight": -1})

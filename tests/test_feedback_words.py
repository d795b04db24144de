"""feedback_words: the feedback round's second query takes only the first N words of the passage."""

from __future__ import annotations

import graphmem
from graphmem.errors import InvalidInput
from spies import record_rank_queries


def test_the_second_query_is_cut_to_feedback_words(tmp_path, monkeypatch) -> None:
    text = "Ada Lovelace wrote the first published program for the Analytical Engine of Charles Babbage."
    seen = record_rank_queries(monkeypatch)
    with graphmem.open(tmp_path / "kb") as kb:
        kb.ingest_with_content("ada", "Ada Lovelace", "ada.md", text, [], [])
        kb.search("who wrote the first program?", k=3, config={"feedback_passages": 1, "feedback_words": 4,
                                                                 "feedback_terms": "words",
                                                                 "feedback_with_query": True})
        assert seen[-1] == "who wrote the first program?\nAda Lovelace wrote the"
        kb.search("who wrote the first program?", k=3, config={"feedback_passages": 1, "feedback_words": 0,
                                                                 "feedback_terms": "words",
                                                                 "feedback_with_query": True})
        assert seen[-1] == "who wrote the first program?\n" + text  # 0: the whole passage
        try:
            kb.search("x", config={"feedback_words": -1})
        except InvalidInput as exc:
            assert "feedback_words" in str(exc)
        else:
            raise AssertionError("a negative feedback_words was accepted")

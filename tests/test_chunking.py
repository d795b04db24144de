"""Chunking: sentence/word boundaries, exact offsets, overlap, full coverage."""

from __future__ import annotations

import random

import pytest

from graphmem import InvalidInput
from graphmem.ingest.chunking import chunk_spans, split_sentences


def _check(text, spans, size, overlap):
    assert spans, "non-empty text must give chunks"
    covered = [False] * len(text)
    for i, (s, e) in enumerate(spans):
        assert 0 <= s < e <= len(text)
        assert e - s <= size
        assert not text[s].isspace() and not text[e - 1].isspace()
        for j in range(s, e):
            covered[j] = True
        if i:
            ps, pe = spans[i - 1]
            assert s > ps, "chunks advance"
            assert pe - s <= overlap, "overlap bounded"
    assert all(covered[j] or text[j].isspace() for j in range(len(text))), "every character is in a chunk"


def test_short_text_is_one_chunk():
    assert chunk_spans("Hello world.", 500, 100) == [(0, 12)]


def test_leading_and_trailing_space_trimmed():
    assert chunk_spans("   Hello world.  \n", 500, 100) == [(3, 15)]


def test_whitespace_only_gives_no_chunk():
    assert chunk_spans(" \n\t ", 500, 100) == []


def test_cuts_at_sentence_end_when_possible():
    text = ("Alpha beta gamma delta. " * 30).strip()
    spans = chunk_spans(text, 200, 40)
    _check(text, spans, 200, 40)
    for s, e in spans[:-1]:
        assert text[e - 1] == ".", text[s:e]


def test_never_cuts_words_when_spaces_exist():
    rng = random.Random(1)
    words = ["".join(rng.choice("abcdefghij") for _ in range(rng.randint(1, 12))) for _ in range(2000)]
    text = " ".join(words)  # no sentence ends at all
    spans = chunk_spans(text, 500, 100)
    _check(text, spans, 500, 100)
    for s, e in spans:
        assert s == 0 or text[s - 1] == " "
        assert e == len(text) or text[e] == " "


def test_overlap_is_used():
    text = " ".join(f"word{i}" for i in range(400))
    spans = chunk_spans(text, 300, 80)
    _check(text, spans, 300, 80)
    overlaps = [spans[i - 1][1] - spans[i][0] for i in range(1, len(spans))]
    assert all(o > 40 for o in overlaps)


def test_overlong_token_is_hard_cut():
    text = "x" * 1200
    spans = chunk_spans(text, 500, 100)
    _check(text, spans, 500, 100)
    assert spans[0] == (0, 500)


@pytest.mark.parametrize("seed", range(20))
def test_random_texts_hold_invariants(seed):
    rng = random.Random(seed)
    pieces = []
    for _ in range(rng.randint(1, 300)):
        w = "".join(rng.choice("abcdefghijklmnopqrstuvwxyzABC") for _ in range(rng.randint(1, 30)))
        pieces.append(w + rng.choice([" ", " ", " ", ". ", "! ", "\n", "\n\n", "? ", ", "]))
    text = "".join(pieces)
    size = rng.choice([50, 120, 500, 1000])
    overlap = rng.randint(0, size // 2 - 1)
    spans = chunk_spans(text, size, overlap)
    if text.strip():
        _check(text, spans, size, overlap)


@pytest.mark.parametrize("size,overlap", [(10, 0), (500, 250), (500, -1), (500, 400)])
def test_bad_settings_rejected(size, overlap):
    with pytest.raises(InvalidInput, match="chunking"):
        chunk_spans("text", size, overlap)


def test_split_sentences():
    text = 'One. Two! "Three?" Four\n\nFive'
    assert [text[s:e] for s, e in split_sentences(text)] == ["One.", "Two!", '"Three?"', "Four", "Five"]

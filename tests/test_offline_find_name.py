"""The offline extractor finds a document's title in its text without compiling a pattern per title (ASCII text):
the same offset as the whole-word, case-insensitive pattern it replaces, on every case below."""

from __future__ import annotations

import re

import pytest

from graphmem.ingest.extractors.offline import _find_name


def _by_pattern(text: str, name: str) -> int | None:
    m = re.search(r"(?<!\w)" + re.escape(name) + r"(?!\w)", text, re.I)
    return m.start() if m else None


CASES = [
    ("The Lothair II of Lotharingia", "lothair ii"),
    ("Lothair IIx and lothair II.", "Lothair II"),  # the first is part of a longer word
    ("_Paris Paris_ (Paris)", "paris"),  # "_" is a word character on both sides
    ("9Paris Paris9 Paris", "Paris"),  # so are digits
    ("no such name here", "Paris"),
    ("C++ and c++11 and C++.", "C++"),  # a name ending in non-word characters
    ("(1999 film) is a 1999 film", "(1999 film)"),
    ("aaa aa a", "aa"),  # overlapping candidates
    ("Café Paris and cafe paris", "Cafe Paris"),  # non-ASCII text: the pattern itself
    ("ǅemal and ǆemal", "Ǆemal"),  # titlecase letters fold under re.I
    ("the K (Kelvin K) and k", "k"),
    ("Title", "Title"),
    ("xTitle", "title"),
]


@pytest.mark.parametrize(("text", "name"), CASES)
def test_the_title_is_found_where_the_pattern_finds_it(text: str, name: str) -> None:
    assert _find_name(text, name) == _by_pattern(text, name)


def test_the_cases_cover_found_and_not_found() -> None:
    found = [_find_name(t, n) for t, n in CASES]
    assert None in found and 0 in found and any(f and f > 0 for f in found)

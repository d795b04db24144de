"""FoldedText keeps its meaning with a sparse offset map (it used ~36 bytes a character)."""

from __future__ import annotations

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from graphmem.text import FoldedText  # noqa: E402

pytestmark = pytest.mark.reliability


def _reference(text: str) -> tuple[str, list[int]]:
    """The original per-character implementation."""
    chars: list[str] = []
    index: list[int] = []
    prev_space = True
    for i, ch in enumerate(text):
        if ch.isspace():
            if prev_space:
                continue
            chars.append(" ")
            index.append(i)
            prev_space = True
        else:
            low = ch.lower()
            chars.append(low if len(low) == 1 else ch)
            index.append(i)
            prev_space = False
    return "".join(chars), index


_ALPHABET = st.sampled_from(list("aAbB zZ\t\n\r\u00a0\u2003.,ΣσςİIıßẞ\u0301x1"))


@given(st.text(_ALPHABET, max_size=60), st.data())
def test_folded_text_matches_the_per_character_reference(text, data):
    folded, index = _reference(text)
    ft = FoldedText(text)
    assert ft.folded == folded
    for p in range(len(folded)):
        assert ft._original(p) == index[p]
    if folded.strip():
        a = data.draw(st.integers(0, len(folded) - 1))
        b = data.draw(st.integers(a + 1, len(folded)))
        needle = text[index[a]:index[b - 1] + 1]
        span = ft.find(needle)
        ref_needle = _reference(needle)[0].strip()
        if ref_needle:
            pos = folded.find(ref_needle)
            assert span == (index[pos], index[pos + len(ref_needle) - 1] + 1)


def test_folded_text_of_a_big_document_keeps_a_small_map():
    text = ("Alpha  uses Beta.\n\nGamma uses   Delta. " * 50_000)
    ft = FoldedText(text)
    assert len(ft._seg_folded) <= 4 * 50_000 + 1  # one entry per multi-space run, not per character
    assert ft.find("gamma USES delta") == (text.index("Gamma uses   Delta"),
                                           text.index("Gamma uses   Delta") + len("Gamma uses   Delta"))


def test_whitespace_table_is_every_unicode_space():
    import sys

    from graphmem.text import WHITESPACE

    assert set(WHITESPACE) == {chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()}

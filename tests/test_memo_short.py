"""text.memo_short: a cache for pure functions of one string that never holds long strings (a client-supplied
200 KB entity name would otherwise stay in memory, with its result, for the life of the process)."""

from __future__ import annotations

import pytest

from graphmem.text import memo_short, normalize_name
from graphmem.wiki.markdown import link_target


def test_short_strings_are_computed_once_long_ones_every_time() -> None:
    calls: list[str] = []

    @memo_short(8, longest=4)
    def upper(text: str) -> str:
        calls.append(text)
        return text.upper()

    assert [upper("abcd"), upper("abcd")] == ["ABCD", "ABCD"]
    assert calls == ["abcd"]
    assert [upper("abcde"), upper("abcde")] == ["ABCDE", "ABCDE"]
    assert calls == ["abcd", "abcde", "abcde"]  # past `longest`: not kept, so asked again


def test_the_cached_functions_answer_as_before_at_any_length() -> None:
    long_name = "  Zoë's   CAFÉ " * 20_000
    assert normalize_name(long_name) == " ".join(["zoë's café"] * 20_000)
    assert normalize_name("  Ledger   DB ") == "ledger db"
    assert link_target("notes/Ledger DB.md") == "ledger db"
    assert link_target("x" * 1000 + ".MD") == "x" * 1000


@pytest.mark.parametrize("bad", [None, 7, ["a"]])
def test_a_non_string_fails_as_the_function_itself_does(bad: object) -> None:
    with pytest.raises(TypeError):
        normalize_name(bad)  # type: ignore[arg-type]

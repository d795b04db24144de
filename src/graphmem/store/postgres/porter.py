"""The Porter stemmer as SQLite FTS5's ``porter`` tokenizer applies it (tokens of 3 to 64 bytes are
stemmed, others pass through; only ASCII letters are vowels), so that terms indexed here are the
terms FTS5 indexes and BM25 over them ranks alike."""

from __future__ import annotations

from functools import lru_cache

__all__ = ["stem"]

_MAX_TOKEN = 64


def _is_cons(w: str, i: int) -> bool:
    c = w[i]
    if c in "aeiou":
        return False
    if c == "y":
        return i == 0 or not _is_cons(w, i - 1)
    return True


def _m(stem: str) -> int:
    """Porter's measure: the number of vowel-consonant sequences of ``stem``."""
    n, i, size = 0, 0, len(stem)
    while i < size and _is_cons(stem, i):
        i += 1
    while i < size:
        while i < size and not _is_cons(stem, i):
            i += 1
        if i >= size:
            break
        while i < size and _is_cons(stem, i):
            i += 1
        n += 1
    return n


def _has_vowel(stem: str) -> bool:
    return any(not _is_cons(stem, i) for i in range(len(stem)))


def _double_cons(w: str) -> bool:
    return len(w) >= 2 and w[-1] == w[-2] and _is_cons(w, len(w) - 1)


def _cvc(w: str) -> bool:
    """Ends consonant-vowel-consonant, the last not w, x or y (Porter's *o)."""
    n = len(w)
    return (n >= 3 and _is_cons(w, n - 3) and not _is_cons(w, n - 2) and _is_cons(w, n - 1)
            and w[-1] not in "wxy")


_STEP2 = (("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"), ("izer", "ize"),
          ("bli", "ble"), ("alli", "al"), ("entli", "ent"), ("eli", "e"), ("ousli", "ous"),
          ("ization", "ize"), ("ation", "ate"), ("ator", "ate"), ("alism", "al"), ("iveness", "ive"),
          ("fulness", "ful"), ("ousness", "ous"), ("aliti", "al"), ("iviti", "ive"), ("biliti", "ble"),
          ("logi", "log"))
_STEP3 = (("icate", "ic"), ("ative", ""), ("alize", "al"), ("iciti", "ic"), ("ical", "ic"), ("ful", ""),
          ("ness", ""))
_STEP4 = ("al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion", "ou", "ism",
          "ate", "iti", "ous", "ive", "ize")


def _by_last_letter(pairs: tuple[tuple[str, str], ...]) -> dict[str, list[tuple[str, str]]]:
    # Porter's switch on the second-to-last... here simply: longest suffix first among those that fit
    out: dict[str, list[tuple[str, str]]] = {}
    for suffix, repl in pairs:
        out.setdefault(suffix[-1], []).append((suffix, repl))
    for v in out.values():
        v.sort(key=lambda p: -len(p[0]))
    return out


_STEP2_BY = _by_last_letter(_STEP2)
_STEP3_BY = _by_last_letter(_STEP3)
_STEP4_BY = _by_last_letter(tuple((s, "") for s in _STEP4))


def _replace_first(w: str, table: dict[str, list[tuple[str, str]]], min_m: int) -> str:
    """The longest listed suffix ``w`` ends with is replaced when the stem's measure is above ``min_m``;
    when it is not, nothing changes (a shorter suffix is not tried), as in Porter's algorithm."""
    for suffix, repl in table.get(w[-1:], ()):
        if w.endswith(suffix) and len(w) > len(suffix):
            stem = w[: -len(suffix)]
            if suffix == "ion" and not stem.endswith(("s", "t")):
                return w
            return stem + repl if _m(stem) > min_m else w
    return w


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """The Porter stem of a lower-case token (FTS5's rules for which tokens are stemmed)."""
    size = len(word.encode("utf-8"))
    if size > _MAX_TOKEN or size < 3:
        return word
    w = word
    # Step 1a
    if w.endswith(("sses", "ies")):
        w = w[:-2]
    elif w.endswith("ss"):
        pass
    elif w.endswith("s"):
        w = w[:-1]
    # Step 1b
    again = False
    if w.endswith("eed"):
        if _m(w[:-3]) > 0:
            w = w[:-1]
    elif w.endswith("ed") and _has_vowel(w[:-2]):
        w, again = w[:-2], True
    elif w.endswith("ing") and _has_vowel(w[:-3]):
        w, again = w[:-3], True
    if again:
        if w.endswith(("at", "bl", "iz")):
            w += "e"
        elif _double_cons(w) and w[-1] not in "lsz":
            w = w[:-1]
        elif _m(w) == 1 and _cvc(w):
            w += "e"
    # Step 1c
    if w.endswith("y") and _has_vowel(w[:-1]):
        w = w[:-1] + "i"
    # Steps 2 to 4
    if w:
        w = _replace_first(w, _STEP2_BY, 0)
    if w:
        w = _replace_first(w, _STEP3_BY, 0)
    if w:
        w = _replace_first(w, _STEP4_BY, 1)
    # Step 5a
    if w.endswith("e"):
        base = w[:-1]
        m = _m(base)
        if m > 1 or (m == 1 and not _cvc(base)):
            w = base
    # Step 5b
    if w.endswith("ll") and _m(w[:-1]) > 1:
        w = w[:-1]
    return w

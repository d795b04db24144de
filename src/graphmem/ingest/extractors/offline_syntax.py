"""Tokens, relation predicates and noun-phrase chunks of one sentence: the syntax layer of the offline
extractor (``offline.py`` turns them into entities and relations)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from .offline_lexicon import (
    _ADVERBS,
    _ALLCAPS_WORDS,
    _ASSOC,
    _AUX,
    _BE,
    _CAMEL,
    _CODE_CAMEL,
    _COMMON_VERBS,
    _DETERMINERS,
    _DUE_SKIP,
    _ED_NOUNS,
    _HAVE,
    _HEDGE,
    _IRREGULAR,
    _LY_NOUNS,
    _NEG,
    _NUMBER_UNIT,
    _PRONOUNS,
    _SINGULAR_KEEP,
    _STOPLIKE,
    _TOKEN,
    _VERBS,
    _VERSION,
    BASE,
    ING,
    LINKED_CONFIDENCE,
    MAX_NP_WORDS,
    PAST,
    PP,
)


@dataclass(slots=True)
class _Tok:
    text: str
    low: str
    kind: str  # "w" word, "q" quoted term, "c" backticked code, "p" punctuation
    initial: bool  # first word of the sentence or of a line: its capital says nothing
    special: bool = False  # spelling is identity: acronym, CamelCase, digits, code
    code: bool = False


@dataclass(slots=True)
class _Chunk:
    start: int  # first token, determiners included
    end: int  # one past the last word
    words: list[int]
    negated: bool = False  # "no X"
    of_split: int = 0  # "exhaustion of the pool": index in words where the "of" part begins


@dataclass(slots=True)
class _Pred:
    head: int
    vg_start: int  # auxiliaries, negation and adverbs before the head belong to the predicate
    obj_start: int
    phrase: str
    passive: bool = False
    conf: float = 1.0
    is_a: bool = False
    due: bool = False


def _is_adverb(low: str) -> bool:
    return low in _ADVERBS or (len(low) > 4 and low.endswith("ly") and low not in _LY_NOUNS)


def _is_neg(low: str) -> bool:
    return low in _NEG or low.endswith(("n't", "n’t"))


def _is_vg(low: str) -> bool:
    return low in _AUX or low in _HEDGE or _is_neg(low) or _is_adverb(low)


def _is_ed(low: str) -> bool:
    return len(low) > 4 and low.endswith("ed") and low not in _ED_NOUNS


@lru_cache(maxsize=1 << 16)  # words repeat a lot; the answer depends on the word alone (4096 missed 1 in 6)
def _flags(w: str) -> tuple[bool, bool]:
    """(special, code): is the spelling of ``w`` its identity (acronym, CamelCase, digits, code)?"""
    if w in _ALLCAPS_WORDS or (w.isalpha() and w.islower()):
        return False, False  # the common case, decided fast
    core = w[:-1] if w.endswith("s") else w  # "APIs"
    acronym = core[:1].isalpha() and core.isupper() and core.replace("&", "").isalnum() \
        and sum(c.isupper() for c in core) >= 2
    digits = any(c.isdigit() for c in w) and any(c.isalpha() for c in w) and not _NUMBER_UNIT.fullmatch(w)
    code = _is_code(w)
    return acronym or digits or code or bool(_CAMEL.fullmatch(w)), code


def _is_code(w: str) -> bool:
    """snake_case, camelCase, dotted.names (not versions, not "e.g") and calls()."""
    if w.endswith("()") or _CODE_CAMEL.fullmatch(w) or ("_" in w.strip("_") and any(c.isalpha() for c in w)):
        return True
    parts = w.split(".")
    return len(parts) > 1 and w.islower() and max(map(len, parts)) > 1 and not parts[0].isdigit()


def _singular(word: str) -> str:
    """Singular of a lowercase plural noun by simple rules (leaks -> leak, dependencies -> dependency)."""
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if len(word) <= 3 or not word.endswith("s") or word in _SINGULAR_KEEP or not word.isalpha() \
            or word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "zzes", "ches", "shes")):
        return word[:-2]
    return word[:-1]


def _tokens(sentence: str) -> list[_Tok]:
    toks: list[_Tok] = []
    append = toks.append
    last_end, first, lines = 0, True, "\n" in sentence
    for m in _TOKEN.finditer(sentence):
        text = m.group()
        c = text[0]
        if lines:
            if "\n" in sentence[last_end:m.start()]:
                first = True  # a new line (list item, heading) starts like a sentence
            last_end = m.end()
        if c.isalnum() or c == "_":  # a word ("`", quotes and punctuation are not alphanumeric)
            if len(text) > 2 and text[-2:] in ("'s", "’s"):
                text = text[:-2]  # "the JVM's collector": the name is JVM
            append(_Tok(text, text.lower(), "w", first, *_flags(text)))
            first = False
        else:
            kind = "c" if c == "`" and len(text) > 2 else "q" if c in "\"“" and len(text) > 2 else "p"
            append(_Tok(text, text.lower(), kind, False))
            if kind != "p":
                first = False
    return toks


def _np_ok(t: _Tok) -> bool:
    """Can this token be a word of a noun phrase (ignoring predicate positions)?"""
    if t.kind in "qc":
        return True
    return t.kind == "w" and _np_word(t.low)


@lru_cache(maxsize=1 << 16)  # asked for every token of every sentence; the answer depends on the word alone
def _np_word(low: str) -> bool:
    """:func:`_np_ok` of a word token, from its lowercase form."""
    return not (low in _STOPLIKE or _is_adverb(low) or _is_neg(low))


def _np_starts(toks: list[_Tok], j: int) -> bool:
    n = len(toks)
    while j < n and (toks[j].low in _DETERMINERS or _VERSION.fullmatch(toks[j].low)):
        j += 1
    return j < n and _np_ok(toks[j])


def _vg_start(toks: list[_Tok], i: int, due: bool = False) -> int:
    """First token of the verb group ending before ``i`` (for "due to" also "failed", "went down")."""
    k = i - 1
    while k >= 0 and (_is_vg(toks[k].low) or (due and (toks[k].low in _DUE_SKIP or toks[k].low in _COMMON_VERBS
                                                        or _is_ed(toks[k].low)))):
        k -= 1
    return k + 1


def _match(toks: list[_Tok], i: int) -> _Pred | None:
    """The relation predicate whose head is token ``i``, if one is stated there."""
    n = len(toks)
    low = toks[i].low
    nxt = toks[i + 1].low if i + 1 < n else ""
    if (low in ("due", "owing") and nxt == "to") or (low == "because" and nxt == "of"):
        p = _Pred(i, _vg_start(toks, i, due=True), i + 2, "due to", due=True)
        return p if _np_starts(toks, p.obj_start) else None
    if low in _BE:
        j = i + 1
        while j < n and _is_vg(toks[j].low) and toks[j].low not in _BE:
            j += 1
        w = [toks[k].low for k in range(j, min(j + 3, n))] + ["", "", ""]
        art = w[0] in ("a", "an")
        if w[art] == "part" and w[art + 1] == "of":
            phrase, obj, conf, is_a = "is part of", j + art + 2, 1.0, False
        elif art and w[1] in ("kind", "type", "sort", "form") and w[2] == "of":
            phrase, obj, conf, is_a = "is a", j + 3, 1.0, False
        elif art:
            phrase, obj, conf, is_a = "is a", j + 1, 1.0, True
        elif w[0] in _ASSOC and w[1] in ("to", "with"):
            phrase, obj, conf, is_a = "affects", j + 2, LINKED_CONFIDENCE, False
        elif w[0] == "dependent" and w[1] == "on":
            phrase, obj, conf, is_a = "depends on", j + 2, 1.0, False
        else:
            return None
        p = _Pred(i, _vg_start(toks, i), obj, phrase, conf=conf, is_a=is_a)
        return p if _np_starts(toks, obj) else None
    for slots, particle, phrase in _VERBS.get(low, ()):
        j = i + 1
        if j < n and _is_adverb(toks[j].low):  # "depends heavily on"
            j += 1
        passive = False
        if PP in slots and (particle is None or phrase in ("writes to", "reads from")) and j < n \
                and toks[j].low == "by":
            passive, obj = True, j + 1
        elif particle is not None:
            if phrase in ("writes to", "reads from"):  # "writes access logs to disk": skip the data
                k = j
                while k < min(n, j + MAX_NP_WORDS + 1) and (toks[k].low in _DETERMINERS or _np_ok(toks[k])):
                    k += 1
                j = k if k < n and toks[k].low == particle else j
            if not (j < n and toks[j].low == particle):
                continue
            obj = j + 1
        else:
            obj = i + 1
        vg = _vg_start(toks, i)
        aux = {toks[k].low for k in range(vg, i)}
        if vg == i and i > 0 and toks[i - 1].low in _DETERMINERS and toks[i - 1].low != "that":
            continue  # "the uses of", "a need": a noun
        if not passive:
            if slots == {ING} and not aux & _BE:
                continue  # a bare gerund ("including", "using") is not a statement
            if PP in slots and PAST not in slots and not aux & _HAVE:
                continue  # "written" alone
            if PP in slots and aux & _BE and phrase != "connects to":
                continue  # agentless passive: "X is used to store Y" names no user
            if phrase == "calls" and PAST in slots and not aux:
                continue  # "a service called Foo" names, it does not call
            if slots <= {BASE, PAST, PP} and vg > 0 and toks[vg - 1].low == "to":
                continue  # infinitive: "needs to use"
        if phrase == "results in" and vg == i and i > 0 and (toks[i - 1].low in _VERBS or toks[i - 1].low in
                                                              _COMMON_VERBS or _is_ed(toks[i - 1].low)):
            continue  # "returns results in JSON": a noun after a verb
        if _np_starts(toks, obj):
            k = obj
            while k < n and toks[k].low in _DETERMINERS:
                k += 1
            if phrase == "results in" and (toks[k].special or (toks[k].text[:1].isupper() and k > 0)):
                continue  # "caches results in Redis": a place, not an effect
            conf = LINKED_CONFIDENCE if low.startswith("correlat") else 1.0
            return _Pred(i, vg, obj, phrase, passive=passive, conf=conf)
        if obj < n and toks[obj].low in _PRONOUNS:
            return _Pred(i, vg, obj + 1, "")  # "depends on it": a verb (so no noun phrase) but no named end
    return None


# The words _match can find a predicate at (its three branches' heads): the sentence loop tests a token against
# them before calling it, and most tokens head nothing.
_PREDICATE_HEADS = frozenset({"due", "owing", "because", *_BE, *_VERBS})


def _chunks(toks: list[_Tok], blocked: list[bool]) -> list[_Chunk]:
    """Noun-phrase chunks: determiners then up to five noun-phrase words; "X of Y" joined."""
    n = len(toks)
    ok = [not b and (t.kind in "qc" or (t.kind == "w" and _np_word(t.low))) for b, t in zip(blocked, toks)]  # _np_ok
    out: list[_Chunk] = []
    i = 0
    while i < n:
        start, negated = i, False
        while i + 1 < n and not blocked[i] and toks[i].low in _DETERMINERS and \
                (ok[i + 1] or toks[i + 1].low in _DETERMINERS):
            negated = negated or toks[i].low == "no"
            i += 1
        words: list[int] = []
        while i < n and ok[i]:
            words.append(i)
            i += 1
        if not words:
            i = start + 1
            continue
        while len(words) > 1 and _VERSION.fullmatch(toks[words[0]].low):
            words.pop(0)  # "3 replicas"
        while words and toks[words[-1]].text.islower() and _is_ed(toks[words[-1]].low):
            words.pop()  # a trailing participle is a verb, not the head
        if words:
            out.append(_Chunk(start, words[-1] + 1, words[-MAX_NP_WORDS:], negated))
    merged: list[_Chunk] = []
    for c in out:
        prev = merged[-1] if merged else None
        if prev and prev.end + 1 == c.start and toks[prev.end].low == "of" and not prev.of_split \
                and len(prev.words) + len(c.words) <= MAX_NP_WORDS:
            merged[-1] = _Chunk(prev.start, c.end, prev.words + c.words, prev.negated or c.negated, len(prev.words))
        else:
            merged.append(c)
    return merged

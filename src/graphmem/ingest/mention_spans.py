"""Where a document names its entities: the spans that become mentions (entity <-> chunk links).

Every occurrence of a name (whole words, any case, an optional plural) is a mention, the longest
names first: where "memory leak" is written, the entity "memory leak" is mentioned, not "memory".
Two cases used to leave an entity the extraction lists for a document without any mention there:

* **nested names**: an extraction that lists both "Spotsylvania, Virginia" and "Virginia" (GPT-3.5's
  OpenIE on MuSiQue does so for ~12% of its entities) saw every "Virginia" claimed by the longer
  name, so the passage never linked to "Virginia" - the entity other passages share, the bridge a
  multi-hop walk needs. An entity left without any mention in the document now gets its occurrences
  inside longer names (only then: where it is also written on its own, the longer names keep theirs);
* **case folding that changes lengths**: a document holding "İ" (Turkish capital dotted I; its
  lowercase is two characters) got no mentions at all. The text is now folded character by
  character wherever folding keeps one character, so offsets stay those of the document.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

__all__ = ["fold_keeping_offsets", "mention_spans"]


def fold_keeping_offsets(text: str) -> str:
    """``text`` casefolded, of the same length: characters whose casefold (or else lowercase) is
    longer than one character stay as they are."""
    folded = text.casefold()
    if len(folded) == len(text):
        return folded
    out = []
    for ch in text:
        f = ch.casefold()
        if len(f) != 1:
            f = ch.lower()
            if len(f) != 1:
                f = ch
        out.append(f)
    return "".join(out)


def _is_word_char(text: str, i: int) -> bool:
    return 0 <= i < len(text) and (text[i].isalnum() or text[i] == "_")


def _occurrences(text: str, name: str) -> list[tuple[int, int]]:
    """Whole-word occurrences of ``name`` in ``text`` (both folded), each with its plural ending."""
    out: list[tuple[int, int]] = []
    pos = 0
    while True:
        i = text.find(name, pos)
        if i < 0:
            return out
        pos = i + 1
        j = i + len(name)
        for suffix in ("es", "s"):  # plural forms count as mentions
            if text.startswith(suffix, j) and not _is_word_char(text, j + len(suffix)):
                j += len(suffix)
                break
        if not (_is_word_char(text, i - 1) or _is_word_char(text, j)):
            out.append((i, j))


def mention_spans(content: str, names: Mapping[str, str], per_entity: int,
                  in_chunk: Callable[[int, int], bool]) -> list[tuple[str, int, int]]:
    """``(node id, start, end)`` of every mention in ``content`` of the entities ``names`` maps
    (normalised name or alias -> node id), sorted by start: longer names claim their characters
    first; an entity with no mention of its own is mentioned where it occurs inside longer names
    (see the module doc). At most ``per_entity`` mentions per name; ``in_chunk(start, end)``: a
    span some chunk holds (others are no mention)."""
    text = fold_keeping_offsets(content)
    taken = bytearray(len(text))  # 1 where a longer name has claimed the character
    out: list[tuple[str, int, int]] = []
    mentioned: set[str] = set()
    nested: dict[str, list[tuple[int, int]]] = {}  # name -> its occurrences inside longer names
    for name in sorted(names, key=len, reverse=True):  # "memory leak" before "memory"
        count = 0
        for i, j in _occurrences(text, name):
            if count >= per_entity:
                break
            if taken.find(1, i, j) >= 0:
                nested.setdefault(name, []).append((i, j))
                continue
            if not in_chunk(i, j):
                continue
            taken[i:j] = b"\x01" * (j - i)
            count += 1
            out.append((names[name], i, j))
            mentioned.add(names[name])
    seen: set[tuple[str, int, int]] = set()
    for name, spans in nested.items():
        nid = names[name]
        if nid in mentioned:
            continue
        for i, j in [(i, j) for i, j in spans if in_chunk(i, j)][:per_entity]:
            if (nid, i, j) not in seen:  # two aliases of one entity may cover the same words
                seen.add((nid, i, j))
                out.append((nid, i, j))
    out.sort(key=lambda m: m[1])  # stable: at one start, the order the names were tried in
    return out

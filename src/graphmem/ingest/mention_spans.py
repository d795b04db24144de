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
from typing import TypeVar

__all__ = ["fold_keeping_offsets", "mention_spans"]

C = TypeVar("C")  # whatever the caller's chunk_of returns for a span a chunk holds


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


def mention_spans(content: str, names: Mapping[str, str], per_entity: int,
                  chunk_of: Callable[[int, int], C | None]) -> list[tuple[str, int, int, C]]:
    """``(node id, start, end, chunk)`` of every mention in ``content`` of the entities ``names``
    maps (normalised name or alias -> node id), sorted by start: longer names claim their
    characters first; an entity with no mention of its own is mentioned where it occurs inside
    longer names (see the module doc). At most ``per_entity`` mentions per name;
    ``chunk_of(start, end)``: the chunk holding a span, or None (then it is no mention)."""
    text = fold_keeping_offsets(content)
    n = len(text)
    taken = bytearray(n)  # 1 where a longer name has claimed the character
    found: list[tuple[int, int, str, C]] = []
    mentioned: set[str] = set()
    nested: dict[str, list[tuple[int, int]]] = {}  # name -> its occurrences inside longer names
    # A word character is alphanumeric or "_"; the test is written out inline below: it runs for every
    # occurrence of every name, and a function call for it was a fifth of this loop.
    for name in sorted(names, key=len, reverse=True):  # "memory leak" before "memory"
        nid, count, pos, size = names[name], 0, 0, len(name)
        while count < per_entity:
            i = text.find(name, pos)
            if i < 0:
                break
            pos = i + 1
            if i and ((c := text[i - 1]).isalnum() or c == "_"):
                continue
            j = i + size
            # plural forms count as mentions ("es" first; "s" cannot start where "es" does)
            if text.startswith("es", j):
                if not (j + 2 < n and ((c := text[j + 2]).isalnum() or c == "_")):
                    j += 2
            elif text.startswith("s", j) and not (j + 1 < n and ((c := text[j + 1]).isalnum() or c == "_")):
                j += 1
            if j < n and ((c := text[j]).isalnum() or c == "_"):
                continue
            if taken.find(1, i, j) >= 0:
                nested.setdefault(name, []).append((i, j))
                continue
            chunk = chunk_of(i, j)
            if chunk is None:
                continue
            taken[i:j] = b"\x01" * (j - i)
            count += 1
            found.append((i, j, nid, chunk))
            mentioned.add(nid)
    seen: set[tuple[str, int, int]] = set()
    for name, spans in nested.items():
        nid = names[name]
        if nid in mentioned:
            continue
        held = [(i, j, chunk) for i, j in spans if (chunk := chunk_of(i, j)) is not None][:per_entity]
        for i, j, chunk in held:
            if (nid, i, j) not in seen:  # two aliases of one entity may cover the same words
                seen.add((nid, i, j))
                found.append((i, j, nid, chunk))
    found.sort(key=lambda f: f[0])  # stable: at one start, the order the names were tried in
    return [(nid, i, j, chunk) for i, j, nid, chunk in found]

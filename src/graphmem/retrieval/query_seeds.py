"""Seeds of the entity query: only the entities a question names *specifically*.

``kb.query`` used to seed from every entity any query word matched, so on real text a question
seeded from ``II``, ``Father``, ``Out`` or ``first`` and answered with relations such as
``old territory --[extends]--> Father``. Here a match only seeds when it names something:

* never a stop entity (generic nouns, ordinals, pronoun-like words, regnal numbers: the offline
  extractor's own list, :func:`is_stop_entity`);
* a name of two or more content words matched exactly, contiguously or word by word (stems
  aside, and close together: "memory leaks" names "memory leak", "label printing" names "Label
  Printer"; "citizen ... of the country" does not name "citizen of country");
* a one-word name when the question writes it as a name: a digit, an inner capital as in
  "PgBouncer", an acronym, a capital that does not start the question, or a capital spelled just
  as the knowledge base spells the name; or when the knowledge base spells it in such a shape
  ("pgbouncer" names "PgBouncer"). "why did dispatch
  fail" does not name the entity "Dispatch"; "Why did Dispatch fail" does. A word that is only
  spelled like an entity ("performer", "charlie") seeds only when the question names nothing
  else;
* a match inside a longer match is the longer one's ("notification storm", not "Notification");
* hubs step back: when the question names several things, a name mentioned in at least
  ``HUB_RATIO`` times as many passages as the most specific one (and in ``HUB_MIN_PASSAGES`` or
  more) is not a seed ("American" beside "Inception"). A question that names only hubs keeps
  them: they are what it asks about.

A named seed the graph holds no relation for ("Redis", when the relations are the "Redis
cache"'s) stands for the entities named after it that the text uses at least as often: names
that start with its words (at most ``MAX_EXTENSIONS``), so the walk has somewhere to go.

When nothing is named specifically, the callers fall back to the search pipeline's seeds.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..context import Context
from ..ingest.extractors.offline_entities import is_stop_entity
from ..models import ENTITY, SKILL, Node
from ..text import STOP_WORDS, normalize_name

__all__ = ["NamedSeed", "StemSet", "named_seeds", "same_word", "content_words", "HUB_RATIO", "HUB_MIN_PASSAGES"]

HUB_RATIO = 20
HUB_MIN_PASSAGES = 20
MAX_EXTENSIONS = 3
_MAX_PHRASE = 6
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class NamedSeed:
    """An entity the question names: its id and the query words (token positions) naming it."""

    node_id: str
    positions: frozenset[int]
    passages: int


def _plural(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def same_word(query_word: str, word: str) -> bool:
    """Do two lowercased words share a stem? Plural aside, the first five letters (four for a
    four-letter word) decide: "printing" ~ "printer", "fail" ~ "failed", "caused" ~ "causes"."""
    a, b = _plural(query_word), _plural(word)
    if a == b:
        return True
    k = min(5, len(a), len(b))
    return k >= 4 and a[:k] == b[:k]


class StemSet:
    """Words to test many query words against with :func:`same_word`, by set lookups."""

    def __init__(self, words: Iterable[str]) -> None:
        stripped = {_plural(w) for w in words}
        self.exact = stripped
        self.heads5 = {w[:5] for w in stripped if len(w) >= 5}
        self.heads4 = {w[:4] for w in stripped if len(w) >= 4}
        self.four = {w for w in stripped if len(w) == 4}

    def has(self, query_word: str) -> bool:
        """Is some word of the set :func:`same_word` as ``query_word``?"""
        q = _plural(query_word)
        if q in self.exact:
            return True
        if len(q) >= 5:
            return q[:5] in self.heads5 or q[:4] in self.four
        return len(q) == 4 and q in self.heads4


def content_words(text: str) -> list[str]:
    """Lowercased words of ``text`` that are not stop words."""
    return [w for w in (m.group().casefold() for m in _WORD.finditer(text)) if w not in STOP_WORDS]


def _name_shaped(token: str, first: bool) -> bool:
    """Is a query token written as a name (not merely a word that starts a sentence)?"""
    if any(c.isdigit() for c in token) or any(c.isupper() for c in token[1:]):
        return True
    return token[:1].isupper() and not first


def _find(tokens: list[str], words: list[str]) -> tuple[int, ...] | None:
    """Positions of the first contiguous occurrence of ``words`` among ``tokens``."""
    n = len(words)
    for i in range(len(tokens) - n + 1):
        if tokens[i : i + n] == words:
            return tuple(range(i, i + n))
    return None


def _covered(tokens: list[str], words: list[str]) -> tuple[int, ...] | None:
    """Positions of query tokens that match every content word of a name, stems aside."""
    content = [w for w in words if w not in STOP_WORDS]
    # Two words that name something each: "first president" does not name "First Presidency".
    if len(content) < 2 or sum(not is_stop_entity(w) for w in content) < 2:
        return None
    got: list[int] = []
    for w in content:
        hit = next((i for i, t in enumerate(tokens) if t not in STOP_WORDS and i not in got and same_word(t, w)),
                   None)
        if hit is None:
            return None
        got.append(hit)
    # Close together, as a name is written ("memory leaks", "label printing"), not scattered over
    # the question ("citizen ... country").
    if max(got) - min(got) > len(content):
        return None
    return tuple(sorted(got))


def _specificity(node: Node, name: str, positions: Sequence[int], raw: list[str], tokens: list[str]) -> int:
    """2: the question names it; 1: a one-word match spelled as the knowledge base spells it but not
    written as a name ("performer", "charlie": a seed only when nothing better is named); 0: no seed."""
    if is_stop_entity(name) or is_stop_entity(node.name):
        return 0
    content = [p for p in positions if tokens[p] not in STOP_WORDS]
    if len(content) >= 2:
        return 2
    if len(content) != 1:
        return 0
    p = content[0]
    surface = raw[p]
    if _name_shaped(surface, first=p == 0):
        return 2
    spelled = {w for n in (node.name, *node.aliases) for w in _WORD.findall(n)}
    # The knowledge base's own spelling can be a name's shape too ("pgbouncer" for "PgBouncer"),
    # and a capitalised first word spelled just as the knowledge base spells it is that name
    # ("Zeta Alpha").
    if any(w.casefold() == tokens[p] and _name_shaped(w, first=True) and len(w) > 1 and not is_stop_entity(w)
           for w in spelled) or (surface in spelled and surface[:1].isupper()):
        return 2
    return 1 if surface in spelled else 0


def named_seeds(ctx: Context, text: str, limit: int, with_skills: bool = True) -> list[NamedSeed]:
    """The entities (and skills) ``text`` names specifically, best first (see the module doc)."""
    if limit <= 0 or not text.strip():
        return []
    raw = _WORD.findall(text)
    tokens = [w.casefold() for w in raw]
    # 1. exact phrases (longest first), 2. candidates from the name index matched contiguously
    # or word by word.
    grams: dict[str, tuple[int, ...]] = {}
    for n in range(min(_MAX_PHRASE, len(tokens)), 0, -1):
        for i in range(len(tokens) - n + 1):
            if tokens[i] in STOP_WORDS or tokens[i + n - 1] in STOP_WORDS:
                continue
            grams.setdefault(normalize_name(" ".join(tokens[i : i + n])), tuple(range(i, i + n)))
    found = ctx.store.find_nodes(ENTITY, list(grams)) if grams else {}
    if grams and with_skills:
        for g, nid in ctx.store.find_nodes(SKILL, list(grams)).items():
            found.setdefault(g, nid)
    matches: dict[str, tuple[int, ...]] = {}
    for g, nid in found.items():
        if nid not in matches or len(grams[g]) > len(matches[nid]):
            matches[nid] = grams[g]
    for nid, _score in ctx.store.search_node_names(text, ENTITY, max(limit * 5, 20)):
        if nid not in matches:
            matches[nid] = ()
    nodes = ctx.store.get_nodes(list(matches))
    picked: dict[str, tuple[int, ...]] = {}
    tier: dict[str, int] = {}
    for nid, pos in matches.items():
        node = nodes.get(nid)
        if node is None:
            continue
        for name in (node.name, *node.aliases):
            words = [w.casefold() for w in _WORD.findall(name)]
            hit = pos if pos and normalize_name(" ".join(words)) in grams else (
                _find(tokens, words) or _covered(tokens, words))
            if not hit:
                continue
            level = _specificity(node, name, hit, raw, tokens)
            if level and (level, len(hit)) > (tier.get(nid, 0), len(picked.get(nid, ()))):
                picked[nid], tier[nid] = hit, level
    # Words that are merely spelled like an entity seed only when the question names nothing.
    if any(t == 2 for t in tier.values()):
        picked = {nid: p for nid, p in picked.items() if tier[nid] == 2}
    # A one-word match inside a longer one belongs to the longer one ("Notification" in "notification
    # storm"); a name of its own inside a longer one is a variant the text may use instead ("Van Helsing"
    # in "Abraham Van Helsing") and stays.
    kept = {nid: set(p) for nid, p in picked.items()
            if sum(tokens[i] not in STOP_WORDS for i in p) >= 2
            or not any(o != nid and set(p) < set(q) for o, q in picked.items())}
    counts = ctx.store.entity_chunk_counts(list(kept))
    seeds = [NamedSeed(nid, frozenset(p), counts.get(nid, 0)) for nid, p in kept.items()]
    seeds = _without_hubs(seeds)
    # Longer names first, then the rarer; ties in query order.
    seeds.sort(key=lambda s: (-len(s.positions), s.passages, min(s.positions)))
    return _extend(ctx, seeds, nodes, strong={nid for nid, t in tier.items() if t == 2})[:limit]


def _without_hubs(seeds: list[NamedSeed]) -> list[NamedSeed]:
    if len(seeds) < 2:
        return seeds
    rarest = min(max(s.passages, 1) for s in seeds)
    rest = [s for s in seeds if not (s.passages >= HUB_MIN_PASSAGES and s.passages >= HUB_RATIO * rarest)]
    return rest or seeds


def _extend(ctx: Context, seeds: list[NamedSeed], nodes: dict[str, Node], strong: set[str]) -> list[NamedSeed]:
    """Named seeds without any relation are joined by the entities named after them that the
    text uses at least as often ("Redis" -> "Redis cache"; not "Namibia" -> "Namibia Act")."""
    if not seeds:
        return seeds
    ids = [s.node_id for s in seeds]
    linked = {nid for row in ctx.store.adjacency(ids, 0.0, 8 * len(ids) + 50) for nid in (row[0], row[2])}
    out = list(seeds)
    have = set(ids)
    for s in seeds:
        node = nodes.get(s.node_id)
        if s.node_id in linked or s.node_id not in strong or node is None or node.kind != ENTITY:
            continue
        head = [w.casefold() for w in _WORD.findall(node.name)]
        if not head:
            continue
        cands = ctx.store.search_node_names(node.name, ENTITY, 30)
        cnodes = ctx.store.get_nodes([c for c, _ in cands if c not in have])
        longer = [n for n in cnodes.values()
                  if [w.casefold() for w in _WORD.findall(n.name)][: len(head)] == head
                  and len(_WORD.findall(n.name)) > len(head) and not is_stop_entity(n.name)]
        if not longer:
            continue
        counts = ctx.store.entity_chunk_counts([n.id for n in longer])
        longer = [n for n in longer if counts.get(n.id, 0) >= max(s.passages, 1)]
        longer.sort(key=lambda n: (-counts.get(n.id, 0), n.name))
        for n in longer[:MAX_EXTENSIONS]:
            have.add(n.id)
            out.append(NamedSeed(n.id, s.positions, counts.get(n.id, 0)))
    return out

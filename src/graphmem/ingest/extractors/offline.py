"""The offline extractor: entities and *stated* relations from plain text, by rules.

No model, no network, standard library only, deterministic, linear time. Per sentence (a run-on
"sentence" over 1,000 characters is cut at whitespace so evidence stays short):

* **Entities**: multi-word proper nouns, acronyms and CamelCase (API, PgBouncer), names with
  digits (S3, ext4, Python 3.11, HTTP/2), quoted and backticked terms, code identifiers
  (snake_case, camelCase, dotted.names, calls()), the noun phrases on both sides of a relation
  phrase and the subjects of other verbs ("objects are ..."). Noun phrases lose determiners,
  keep at most five words, are lowercased unless a word is a name; the head is singularised.
* **Relations** only where a sentence states one with the ontology's lexicon: active, passive
  with "by", "due to"/"because of", "is part of", "is a", lists, "A reads from B and writes to
  C", "B, which calls C".

Decisions the contract leaves open:

* Types are emitted *canonical and oriented*: each phrase goes through
  ``Ontology.normalize_relation`` here, so "wheel is part of car" comes out as
  ``car --contains--> wheel`` and "B is caused by A" / "B due to A" as ``A --causes--> B``.
  Canonical types normalise to themselves at ingest, so nothing is swapped twice.
* "is linked to / associated with / correlated with / related to / tied to" -> ``affects`` at
  0.8, in sentence order (the text does not say which way the influence goes).
* Hedges (may, might, could, can, would, should, possibly, probably, likely, perhaps, ...),
  "or" alternatives and conditional sentences cap confidence at 0.6.
* A relation *inside* an if/unless/whether/assuming clause is not asserted: dropped. One in the
  main clause of a conditional sentence is kept at 0.6. Negations (not, never, no, n't, cannot,
  no longer, neither/nor) and questions give no relation; their noun phrases stay entities.
"""


from __future__ import annotations

import re

from ...extraction import EntitySpec, Extraction, RelationSpec
from ...ontology import Ontology
from ...text import normalize_name
from ..chunking import chunk_spans, split_sentences
from .base import SourceDocument
from .offline_entities import is_stop_entity, merge_variants, same_person, title_name
from .offline_lexicon import (
    _ALLCAPS_WORDS,
    _AUX,
    _COMMON_NOUNS,
    _COMMON_VERBS,
    _COND_END,
    _CONDITIONAL,
    _HEAD_TYPES,
    _HEDGE,
    _HEDGE_START,
    _ISSUE_HEADS,
    _LIST_SEP,
    _LOWER_WORD,
    _NOUN_SUFFIXES,
    _PLURAL_ACRONYM,
    _PP_PREPS,
    _REL_PRONOUNS,
    _RELATIONAL_HEADS,
    _SCOPE_BOUNDARY,
    _STOPLIKE,
    _VERBS,
    _VERSION,
    HEDGED_CONFIDENCE,
    MAX_SENTENCE,
)
from .offline_syntax import (
    _PREDICATE_HEADS,
    _Chunk,
    _chunks,
    _is_ed,
    _is_neg,
    _match,
    _Pred,
    _singular,
    _Tok,
    _tokens,
)

__all__ = ["OfflineExtractor", "MAX_SENTENCE"]

_NAME_CONNECTORS = frozenset(["of", "de", "del", "der", "di", "du", "van", "von", "da"])


def _same_thing(title: str, name: str) -> bool:
    """Do a title and a name name the same thing: equal, a person-name variant, or one's words a
    contiguous run of the other's (at least two words)?"""
    a, b = normalize_name(title).split(), normalize_name(name).split()
    if a == b or same_person(title, name) or same_person(name, title):
        return True
    short, long = (a, b) if len(a) <= len(b) else (b, a)
    return len(short) >= 2 and any(long[i:i + len(short)] == short for i in range(len(long) - len(short) + 1))


class OfflineExtractor:
    """Rule-based extractor: entities from names and noun phrases, relations only where stated."""

    name = "offline"

    def __init__(self, ontology: Ontology | None = None) -> None:
        """Use ``ontology`` (default: the built-in tables) to map relation phrases to types."""
        self.ontology = ontology or Ontology()

    def extract(self, doc: SourceDocument) -> Extraction:
        """Entities and stated relations of ``doc.text``; supporting text is the exact sentence.

        The document's title is its first entity when the text names it (see offline_entities)."""
        text = doc.text or ""
        # Words seen in lowercase tell a sentence-initial "Caches" (a common noun) from "Redis".
        state = _DocState(self.ontology, {m.group() for m in _LOWER_WORD.finditer(text)}, text)
        title = title_name(doc.title or "")
        if not (any(c.isupper() for c in title) and not is_stop_entity(title)):
            title = ""  # a file name or an id: no name to give the document
        spans = _split_title_line(text, title, split_sentences(text))
        found = _find_name(text, title) if title else None
        for start, end in spans:
            if found is not None and start <= found < end:
                state.title = state._entity(title, state._head_type(title.split()[-1]), text[start:end])
            if end - start <= MAX_SENTENCE:
                state.sentence(text[start:end])
            else:  # a run-on "sentence" is cut at whitespace, offsets kept exact
                for s, e in chunk_spans(text[start:end], MAX_SENTENCE, 0):
                    state.sentence(text[start + s:start + e])
        if title and state.title is None and spans:
            state.title_as_subject(title, text[spans[0][0]:spans[0][1]])
        entities, relations = merge_variants(state.entities, state.relations.values(), state.title or "")
        return Extraction(tuple(entities), tuple(relations))


def _split_title_line(text: str, title: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """A first line that is the title is a sentence of its own, whatever its case."""
    nl = text.find("\n")
    if not (title and spans and nl > 0 and spans[0][1] > nl):
        return spans
    line = text[:nl].strip().lstrip("#").strip()
    if normalize_name(title_name(line)) != normalize_name(title):
        return spans
    rest = nl
    while rest < spans[0][1] and text[rest].isspace():
        rest += 1
    head = (spans[0][0], spans[0][0] + len(text[spans[0][0]:nl].rstrip()))
    return [head, (rest, spans[0][1]), *spans[1:]]


def _find_name(text: str, name: str) -> int | None:
    """Offset of the first whole-word, case-insensitive occurrence of ``name`` in ``text``."""
    if text.isascii() and name.isascii():
        # What the pattern below finds, without compiling a pattern per title (a title rarely repeats, so the
        # regex cache missed every document: an eighth of the extractor's time): in ASCII text, case-insensitive is
        # lower() on both sides and a word character is [A-Za-z0-9_].
        low, key, pos = text.lower(), name.lower(), 0
        while (i := low.find(key, pos)) >= 0:
            j = i + len(key)
            if not (i and _ascii_word(low[i - 1])) and not (j < len(low) and _ascii_word(low[j])):
                return i
            pos = i + 1
        return None
    m = re.search(r"(?<!\w)" + re.escape(name) + r"(?!\w)", text, re.I)
    return m.start() if m else None


def _ascii_word(c: str) -> bool:
    return c.isalnum() or c == "_"


class _DocState:
    """Entities and relations of one document, deduplicated as sentences are added."""

    def __init__(self, ontology: Ontology, lower_words: set[str], text: str = "") -> None:
        self.ontology = ontology
        self.lower_words = lower_words
        self.text = text.lower()  # how often a common noun phrase recurs tells a topic from a description
        self.entities: list[EntitySpec] = []
        self.by_key: dict[str, str] = {}  # normalised name -> the entity's name as listed
        self.relations: dict[tuple[str, str, str], RelationSpec] = {}
        self.title: str | None = None  # the title entity's listed name, once added

    def title_as_subject(self, title: str, first: str) -> None:
        """The text does not repeat the title: when the first sentence's first entity names the same
        thing ("Lothair II" / "Lothair II of Lotharingia"), it becomes the title entity's alias."""
        subject = next((e for e in self.entities if e.supporting_text == first), None)
        if subject is None or not _same_thing(title, subject.name):
            return
        i = self.entities.index(subject)
        self.entities[i] = EntitySpec(title, subject.type, first, (subject.name, *subject.aliases))
        old, new = normalize_name(subject.name), normalize_name(title)
        self.by_key[new] = title
        self.title = title
        for key, r in list(self.relations.items()):
            if old in (key[0], key[2]):
                del self.relations[key]
                src, dst = (title if normalize_name(r.source) == old else r.source,
                            title if normalize_name(r.target) == old else r.target)
                self._relate(src, r.type, dst, r.confidence, r.supporting_text)

    # -- entities ---------------------------------------------------------------------------

    def _entity(self, name: str, etype: str, sentence: str, aliases: tuple[str, ...] = ()) -> str | None:
        name = name.strip(" \t\n.,;:!?'\"")
        key = normalize_name(name)
        if not any(c.isalnum() for c in key) or is_stop_entity(name):
            return None
        if key not in self.by_key:  # the first mention keeps its sentence
            self.by_key[key] = name
            self.entities.append(EntitySpec(name=name, type=etype, supporting_text=sentence, aliases=aliases))
        return self.by_key[key]

    def _head_type(self, head: str) -> str:
        head = _singular(head.lower())
        if head in _ISSUE_HEADS:
            return "issue"
        if head in _HEAD_TYPES:
            return _HEAD_TYPES[head]
        return self.ontology.normalize_type(head) if head in self.ontology.type_synonyms else "concept"

    def _common(self, low: str) -> bool:
        sing = _singular(low)
        # A regular plural or an abstract-noun suffix is a common noun; names rarely look so.
        return sing != low or low.endswith(_NOUN_SUFFIXES) or any(
            w in _COMMON_NOUNS or w in self.lower_words for w in (low, sing))

    def _word(self, toks: list[_Tok], c: _Chunk, k: int) -> str:
        t = toks[c.words[k]]
        if t.kind in "qc":
            return t.text[1:-1].strip()
        if t.special:
            return t.text
        if not t.text[:1].isupper():
            return t.low
        if not t.initial:
            return t.text  # a capital inside a sentence marks a name
        nxt = toks[c.words[k + 1]] if k + 1 < len(c.words) else None
        if nxt is not None and (nxt.text[:1].isupper() or nxt.special):
            return t.text  # "Payment Gateway uses ..."
        if len(c.words) == 1 and not self._common(t.low):
            return t.text  # "Redis uses ..."
        return t.low

    def chunk_entity(self, toks: list[_Tok], c: _Chunk, sentence: str, subject_only: bool = False) -> str | None:
        """Add the entity named by chunk ``c``; return its listed name.

        ``subject_only``: the chunk is only the subject of some verb (no stated relation). A common
        noun phrase there ("the population was", "the unincorporated community was founded") is an
        entity only when its head names a system part or an issue (the lexicon's heads) or the
        document says it more than once ("the retry storm ... the retry storm"); names always are."""
        parts = [self._word(toks, c, k) for k in range(len(c.words))]
        last = toks[c.words[-1]]
        if len(parts) > 1 and not c.of_split and (last.special or parts[-1][:1].isupper()) \
                and all(p in _HEAD_TYPES for p in parts[:-1]):
            # "the class UserService" is UserService, and the noun says what kind it is
            return self._entity(parts[-1], "component" if last.code else self._head_type(parts[-2]), sentence)
        h = (c.of_split or len(parts)) - 1
        head = toks[c.words[h]]
        if head.kind == "w" and parts[h] == head.low:
            parts[h] = _singular(parts[h])
        elif head.kind == "w" and _PLURAL_ACRONYM.fullmatch(parts[h]):
            parts[h] = parts[h][:-1]  # "APIs" -> "API"
        etype = "component" if head.kind == "c" or head.code else self._head_type((parts[h].split() or [""])[-1])
        if c.of_split:
            parts.insert(c.of_split, "of")
        name = " ".join(p for p in parts if p)
        if subject_only and name == name.lower() and not any(toks[w].special or toks[w].kind in "qc" for w in c.words) \
                and etype == "concept" and _singular(head.low) not in _COMMON_NOUNS and self.text.count(name) < 2:
            return None  # said once, as a subject: a description ("the population was"), not a topic
        return self._entity(name, etype, sentence)

    def _names(self, toks: list[_Tok], sentence: str) -> None:
        """Proper nouns, acronyms, names with digits, quoted terms and code identifiers."""
        n, i = len(toks), 0
        # Whether each token is a capitalised word that may be part of a name (asked again for the words ahead).
        caps = [t.kind == "w" and t.text[0].isupper() and t.low not in _STOPLIKE and t.text not in _ALLCAPS_WORDS
                for t in toks]
        while i < n:
            t = toks[i]
            if t.kind == "q":
                words = t.text[1:-1].strip(" .,;:!?").split()
                if words:
                    self._entity(" ".join(words), self._head_type(words[-1]), sentence)
            elif t.kind == "c":
                self._entity(t.text[1:-1], "component", sentence)
            elif caps[i]:
                j = i + 1
                while j < n:
                    if caps[j] or (toks[j].kind == "w" and _VERSION.fullmatch(toks[j].low)):
                        j += 1
                        continue
                    # "Reign of Terror", "House of the Lords", "Ludwig van Beethoven": one name, not two
                    k = j + 1 + (j + 2 < n and toks[j].low == "of" and toks[j + 1].low == "the")
                    if toks[j].low in _NAME_CONNECTORS and k < n and caps[k]:
                        j = k
                        continue
                    break
                run = toks[i:j]
                if run[0].initial and len(run) > 1 and not run[0].special and \
                        (run[0].low in _VERBS or _is_ed(run[0].low) or run[0].low.endswith("ing")):
                    run = run[1:]  # "Using Redis": the verb is not part of the name
                # A lone capitalised first word is a sentence start, not evidence of a name.
                if len(run) > 1 or run[0].special or not run[0].initial:
                    words = [r.text for r in run]
                    if _PLURAL_ACRONYM.fullmatch(words[-1]):
                        words[-1] = words[-1][:-1]
                    self._entity(" ".join(words), "component" if run[-1].code else self._head_type(words[-1]),
                                 sentence)
                i = j
                continue
            elif t.special:
                self._entity(t.text, "component" if t.code else "concept", sentence)
            i += 1

    # -- relations --------------------------------------------------------------------------

    def _relate(self, src: str, typ: str, dst: str, conf: float, sentence: str) -> None:
        key = (normalize_name(src), typ, normalize_name(dst))
        old = self.relations.get(key)
        if key[0] != key[2] and (old is None or conf > old.confidence):
            self.relations[key] = RelationSpec(src, dst, typ, conf, sentence)

    def sentence(self, sentence: str) -> None:
        """Extract from one sentence (its exact text is the supporting text of everything found)."""
        toks = _tokens(sentence)
        if not toks:
            return
        self._names(toks, sentence)
        n = len(toks)
        preds: list[_Pred] = []
        i = 0
        while i < n:
            p = _match(toks, i) if toks[i].low in _PREDICATE_HEADS else None
            preds += [p] if p else []
            i = p.obj_start if p else i + 1
        blocked = [False] * n
        for p in preds:
            blocked[p.vg_start:p.obj_start] = [True] * (p.obj_start - p.vg_start)
        chunks = _chunks(toks, blocked)
        by_start = {c.start: c for c in chunks}
        by_end = {c.end: c for c in chunks}
        vg_starts = {p.vg_start for p in preds}
        # Subjects of any verb are entities too ("objects are not released").
        for c in chunks:
            nt = toks[c.end].low if c.end < n else ""
            if nt in _AUX or nt in _COMMON_VERBS or _is_ed(nt) or c.end in vg_starts:
                self.chunk_entity(toks, c, sentence, subject_only=True)
        if sentence.rstrip("\"')]” ").endswith("?") or toks[0].low in ("does", "do", "did"):
            return  # a question states nothing
        in_cond = [False] * n
        k = 0
        while k < n:
            if toks[k].low in _CONDITIONAL:
                while k < n and toks[k].low not in _COND_END:
                    in_cond[k] = True
                    k += 1
            k += 1
        capped = any(in_cond) or toks[0].low in _HEDGE_START
        lower = 0
        prev: tuple[list[_Chunk], list[_Chunk]] | None = None
        for p in preds:
            if not p.phrase:
                lower = max(lower, p.obj_start)
                continue
            subjects, relative, s_or = self._subjects(toks, by_end, p, lower)
            objects, o_or = self._objects(toks, by_start, p.obj_start, vg_starts)
            if not subjects and prev and p.vg_start > 0 and toks[p.vg_start - 1].low == "and" \
                    and prev[1][-1].end in (p.vg_start - 1, p.vg_start - 2):
                subjects, relative = prev[0], True  # "A reads from B and writes to C": shared subject
            if not subjects and p.due and objects and objects[-1].end < n and toks[objects[-1].end].low == ",":
                front = by_start.get(objects[-1].end + 1)  # "Due to A, B crashes."
                subjects = [front] if front else []
            region = lower
            lower = max(lower, objects[-1].end if objects else p.obj_start)
            if not subjects or not objects or in_cond[p.head]:
                continue
            # The phrases on both sides are entities even when the relation is negated.
            names = {id(c): self.chunk_entity(toks, c, sentence) for c in subjects + objects}
            if p.is_a and (any(o.of_split for o in objects) or
                           _singular(toks[subjects[-1].words[-1]].low) in _RELATIONAL_HEADS):
                continue  # "X is a cause of Y", "the root cause was Z": not kind-of statements
            prev = (subjects, objects)
            scope = list(range(p.vg_start, p.obj_start))  # the verb group, plus the clause opening
            b = subjects[0].start - 1
            while not relative and b >= region and toks[b].low not in _SCOPE_BOUNDARY:
                scope.append(b)  # "It is not true that A causes B"
                b -= 1
            lows = [toks[x].low for x in scope]
            norm = self.ontology.normalize_relation(p.phrase)
            if any(_is_neg(w) for w in lows) or not norm.type:
                continue
            conf = p.conf
            if capped or s_or or o_or or any(w in _HEDGE for w in lows):
                conf = min(conf, HEDGED_CONFIDENCE)
            for s in subjects:
                for o in objects:
                    a, b_ = names[id(s)], names[id(o)]
                    if s.negated or o.negated or a is None or b_ is None:
                        continue  # "no service uses X"
                    src, dst = (b_, a) if p.passive != norm.swapped else (a, b_)
                    self._relate(src, norm.type, dst, conf, sentence)

    @staticmethod
    def _subjects(toks: list[_Tok], by_end: dict[int, _Chunk], p: _Pred,
                  lower: int) -> tuple[list[_Chunk], bool, bool]:
        """Subject chunks ending at the predicate ("A, B and C use"), relative flag, "or" flag."""
        end, relative = p.vg_start, False
        if end > 0 and toks[end - 1].low in _REL_PRONOUNS and by_end.get(end) is None:
            end -= 1 + (end > 1 and toks[end - 2].low == ",")
            relative = True  # "B, which causes C": the antecedent is the subject
        first = by_end.get(end)
        if first is None or (first.start < lower and not relative):
            return [], relative, False
        for _ in range(2):  # "a memory leak in the parser led to": the subject is the leak
            pp = not relative and first.start > 0 and toks[first.start - 1].low in _PP_PREPS
            head = by_end.get(first.start - 1) if pp else None
            if head is None or head.start < lower:
                break
            first = head
        items, saw_conj, saw_or = [first], False, False
        while True:
            s = items[0].start
            if s >= 2 and toks[s - 1].low in ("and", "or"):
                j = s - 1 - (toks[s - 2].low == ",")
                saw_conj, saw_or = True, saw_or or toks[s - 1].low == "or"
            elif s >= 2 and toks[s - 1].low == "," and saw_conj:
                j = s - 1
            else:
                break
            before = by_end.get(j)
            if before is None or before.start < lower:
                break
            if toks[s - 1].low == "," and before.start > lower and toks[before.start - 1].low not in _LIST_SEP:
                break  # "In production, A and B use C": "production" is not in the list
            items.insert(0, before)
        return items, relative, saw_or

    @staticmethod
    def _objects(toks: list[_Tok], by_start: dict[int, _Chunk], start: int,
                 vg_starts: set[int]) -> tuple[list[_Chunk], bool]:
        """Object chunks from ``start`` ("uses B, C and D"), and whether they were "or" alternatives."""
        first = by_start.get(start)
        if first is None:
            return [], False
        n = len(toks)
        items, saw_conj, saw_or = [first], False, False
        while True:
            j, conj = items[-1].end, ""
            while j < n and toks[j].low in _LIST_SEP:
                conj = toks[j].low if toks[j].low != "," else conj
                j += 1
            nxt = by_start.get(j) if j > items[-1].end else None
            if nxt is None or nxt.end in vg_starts or (nxt.end < n and toks[nxt.end].low in _AUX):
                break  # "A uses B and C calls D": C starts a new clause
            items.append(nxt)
            saw_conj, saw_or = saw_conj or bool(conj), saw_or or conj == "or"
        if not saw_conj:  # no "and": adjectives ("a fast, reliable store") or an apposition
            adjectives = items[-1].start == items[-1].words[0] and all(
                len(c.words) == 1 and toks[c.words[0]].text.islower() for c in items[:-1])
            items = items[-1:] if adjectives else items[:1]
        return items, saw_or

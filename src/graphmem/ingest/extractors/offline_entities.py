"""Which names the offline extractor keeps as entities, and which names are one entity.

Measured on MuSiQue against GPT-3.5's entities (bench/entity_quality.py), the old extractor's
entities were diluted by names that cannot bridge two passages or that bridge everything:

* **stop entities**: generic nouns ("film", "population", "city"), ordinals ("first"),
  pronoun-like, adverbial and particle words ("later", "having", "out"), honorifics, single
  letters and lone roman numerals ("Mr", "C", "II"), units and era markers ("MHz", "BC"), a
  month, weekday or season alone. A stop entity is never emitted; a relation to one is dropped.
* **name variants**: "Christopher Nolan" and "Christopher Edward Nolan" (same first and last
  word) are one entity, the shorter an alias; a lone surname ("Nolan") after the full name in
  the same document is that person, not an entity of its own (no alias: a surname alone would
  merge different people across documents).
* **the title**: a document's title is its first entity; when the text does not repeat it but
  the first sentence's subject names the same thing, the subject becomes an alias of the title
  (a page titled "Lothair II" links to the "Lothair II" its text is about).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from ...extraction import EntitySpec, RelationSpec
from ...text import normalize_name

__all__ = ["is_stop_entity", "person_like", "same_person", "merge_variants", "title_name"]


def _words(s: str) -> frozenset[str]:
    return frozenset(s.split())


# Generic nouns: they classify (a film, a city) rather than name; as entities they are hubs.
_GENERIC_NOUNS = _words(
    "population film movie song album single record series show episode season book novel story poem play "
    "magazine newspaper journal article city town village community municipality county district province "
    "region area country nation state capital place location site neighborhood neighbourhood suburb river lake "
    "mountain island sea ocean valley station airport road street highway building house hotel church school "
    "college university company corporation organization organisation group band team club party government "
    "army name title term word language people person man woman men women child member family year years day "
    "days month months time times century decade period era age part number type kind sort form way thing "
    "things character role career life death birth work works game games event events award prize "
    "census-designated place unincorporated community"
) | _words("president king queen emperor prince princess duke governor mayor minister director author writer "
           "actor actress singer player leader founder chairman")
_ORDINALS = _words("first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth last next "
                   "final former latter later earlier previous following")
# Pronoun-like, adverbial or verbal words that the noun-phrase rules can pick up at a clause start.
_PRONOUN_LIKE = _words("having being well however also thus then now today yesterday tomorrow here there "
                       "everyone everything someone something anyone anything none nothing another other others "
                       "whose whom which what who where when out up off down away back over")
_HONORIFICS = _words("mr mrs ms dr prof sir st jr sr inc ltd co corp no vol")
_CALENDAR = _words("january february march april may june july august september october november december "
                   "monday tuesday wednesday thursday friday saturday sunday spring summer autumn fall winter")
# Units and era markers: acronyms by spelling, names of nothing.
_UNITS = _words("kw mw gw kwh mhz khz ghz hz fm am bc ad bce ce km kg mph rpm")
_STOP_ENTITIES = _GENERIC_NOUNS | _ORDINALS | _PRONOUN_LIKE | _HONORIFICS | _CALENDAR | _UNITS
_ORDINAL_NUMBER = re.compile(r"\d+(?:st|nd|rd|th)|[ivx]{1,4}")  # "19th"; a regnal number alone ("II")
_PLURAL_S = re.compile(r"(?<=[a-z]{3})s$")


def is_stop_entity(name: str) -> bool:
    """Is ``name`` a word that names no specific thing (see the module doc)?"""
    key = normalize_name(name).strip(" .'’")
    if len(key) <= 1 or _ORDINAL_NUMBER.fullmatch(key):
        return True
    return key in _STOP_ENTITIES or (" " not in key and _PLURAL_S.sub("", key) in _GENERIC_NOUNS)


# A long name of this shape is a person's or a thing's proper name; one with a connector ("University of
# London") or a place prefix ("New York") is not a first + last name pair.
_CONNECTORS = _words("of the and de del der di du la le van von da y for on in at")
_PLACE_PREFIX = _words("new north south east west san santa saint st los las fort mount lake port upper lower "
                       "great little")
_ORG_HEADS = _words("university college school company corporation church river county city state district "
                    "province island islands lake mountain street road station airport hotel club team band party "
                    "railway records league association society institute museum hospital park bridge festival")


def person_like(name: str) -> bool:
    """2-4 capitalised words, no connector, no place prefix, no organisation head: first [middle] last."""
    words = name.split()
    if not 2 <= len(words) <= 4 or any(not w[:1].isupper() or not w.replace(".", "").replace("-", "").isalpha()
                                       for w in words):
        return False
    low = [w.lower().strip(".") for w in words]
    return not (set(low) & _CONNECTORS or low[0] in _PLACE_PREFIX or low[-1] in _ORG_HEADS)


def same_person(short: str, long: str) -> bool:
    """Are two person-like names variants ("Christopher Nolan" / "Christopher Edward Nolan")?"""
    s, lg = short.lower().split(), long.lower().split()
    return len(s) < len(lg) and s[0] == lg[0] and s[-1] == lg[-1]


def title_name(title: str) -> str:
    """The name a title gives its entity: without a trailing "(disambiguation)" part."""
    return re.sub(r"\s*\([^()]*\)\s*$", "", title).strip()


def merge_variants(entities: Sequence[EntitySpec], relations: Iterable[RelationSpec],
                   preferred: str = "") -> tuple[list[EntitySpec], list[RelationSpec]]:
    """Join name variants of one document into one entity each and point relations at it.

    ``preferred`` (the title's name) stays the canonical name when it is one of the variants."""
    keep = {normalize_name(e.name): e for e in entities}
    canon: dict[str, str] = {}  # normalised name -> normalised canonical name
    aliases: dict[str, list[str]] = {}
    persons = [e for e in entities if person_like(e.name)]
    by_ends: dict[tuple[str, str], list[EntitySpec]] = {}  # (first, last) word -> names: linear, not pairwise
    for e in persons:
        w = e.name.lower().split()
        by_ends.setdefault((w[0], w[-1]), []).append(e)
    pref = normalize_name(preferred)
    for short in persons:
        w = short.name.lower().split()
        longs = [lg for lg in by_ends[(w[0], w[-1])] if same_person(short.name, lg.name)]
        if len(longs) != 1:
            continue  # no variant, or several people share the first and last name: leave them apart
        a, b = normalize_name(short.name), normalize_name(longs[0].name)
        if a == pref:
            a, b = b, a  # the title's form is the name; the other is its alias
        if b in canon or a in canon:
            continue
        canon[a] = b
        aliases.setdefault(b, []).append(keep[a].name)
    surnames: dict[str, set[str]] = {}
    for e in persons:
        key = normalize_name(e.name)
        surnames.setdefault(e.name.split()[-1].lower(), set()).add(canon.get(key, key))
    for e in entities:
        key = normalize_name(e.name)
        owners = surnames.get(key, set())
        if " " not in key and len(owners) == 1 and key not in canon:
            canon[key] = next(iter(owners))  # "Nolan" after "Christopher Nolan": the same person, no alias
    out: list[EntitySpec] = []
    for e in entities:
        key = normalize_name(e.name)
        if key in canon:
            continue
        have = {normalize_name(x) for x in e.aliases}
        extra = tuple(a for a in aliases.get(key, ()) if normalize_name(a) not in have)
        out.append(EntitySpec(e.name, e.type, e.supporting_text, e.aliases + extra) if extra else e)
    names = {normalize_name(e.name): e.name for e in out}
    rels: dict[tuple[str, str, str], RelationSpec] = {}
    for r in relations:
        src = names.get(canon.get(normalize_name(r.source), normalize_name(r.source)))
        dst = names.get(canon.get(normalize_name(r.target), normalize_name(r.target)))
        if src is None or dst is None or src == dst:
            continue
        rkey = (normalize_name(src), r.type, normalize_name(dst))
        if rkey not in rels or r.confidence > rels[rkey].confidence:
            rels[rkey] = RelationSpec(src, dst, r.type, r.confidence, r.supporting_text)
    return out, list(rels.values())

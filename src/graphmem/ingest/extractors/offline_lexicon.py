"""Word lists and patterns of the offline extractor (kept apart from its logic)."""

from __future__ import annotations

import re

# ruff: noqa: E501


MAX_SENTENCE = 1000  # characters; longer runs are cut so supporting text stays readable
MAX_NP_WORDS = 5
LINKED_CONFIDENCE = 0.8
HEDGED_CONFIDENCE = 0.6

# Every pattern is linear in its input: quoted terms are bounded (<= 6 words of <= 40
# characters) so an unmatched quote costs constant work, and the fullmatch patterns only put
# a star after a class disjoint from what precedes it, so a long token never backtracks.
_TOKEN = re.compile(
    r"`[^`\n]{1,80}`"
    r'|"[^"\s]{1,40}(?: [^"\s]{1,40}){0,5}"'
    r"|“[^“”\s]{1,40}(?: [^“”\s]{1,40}){0,5}”"
    r"|\w+(?:[./-]\w+)*(?:['’]\w+)?(?:\(\))?"
    r"|\S"
)
_LOWER_WORD = re.compile(r"\b[a-z]+\b")
_CAMEL = re.compile(r"[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*|[a-z]{1,2}[A-Z][A-Za-z0-9]*")  # PgBouncer, iOS
_CODE_CAMEL = re.compile(r"[a-z][a-z0-9]+[A-Z][A-Za-z0-9]*")  # getUserById
_VERSION = re.compile(r"v?\d+(?:\.\d+)*")
_PLURAL_ACRONYM = re.compile(r"[A-Z][A-Z0-9]+s")
_NUMBER_UNIT = re.compile(r"\d[\d.,]*(?:[mun]?s|m|h|d|k|[kmgt]b|x|th|st|nd|rd|px|[kmg]?hz|bits?|%)?", re.I)


def _words(s: str) -> frozenset[str]:
    return frozenset(s.split())


_ALLCAPS_WORDS = _words("OK TODO NOTE FIXME XXX WARNING IMPORTANT TL DR FAQ")
_BE = _words("is are was were be been being am")
_HAVE = _words("has have had")
_AUX = _BE | _HAVE | _words("do does did will would shall should may might must can could cannot")
_NEG = _words("not never no cannot neither nor unlikely without")
_HEDGE = _words("may might could can would should possibly probably likely perhaps maybe potentially presumably "
                "apparently reportedly seemingly allegedly supposedly")
_HEDGE_START = _HEDGE - _AUX  # "Possibly, A causes B" hedges the whole sentence
_ADVERBS = _words("also often always usually sometimes still already just only even then now longer again typically "
                  "generally frequently directly indirectly eventually ultimately actually mainly mostly largely "
                  "partly partially primarily commonly rarely occasionally further")
_DETERMINERS = _words("the a an this that these those our its their his her my your some any each every all both "
                      "either many several no such another more most much few enough certain various multiple "
                      "additional")
_FUNCTION = _words("of in on at by for with from to into onto over under via through during after before between "
                   "within across per about against among than as like upon behind beyond around near along toward "
                   "towards throughout despite and or but nor yet so i you he she it we they me him us them myself "
                   "itself themselves which who whom whose what where when why how there here whatever whichever "
                   "whoever if unless whether because since although though while once until whenever wherever "
                   "something anything nothing everything someone anyone everyone nobody one ones other others same "
                   "own etc vs due owing instead rather thus therefore however hence moreover furthermore meanwhile "
                   "otherwise yes please")
# Verbs outside the relation lexicon end a noun phrase and mark the one before as a subject
# ("-ed" forms need no listing: a trailing participle never heads a noun phrase).
_COMMON_VERBS = frozenset(
    f for v in ["occur", "happen", "fail", "run", "start", "stop", "return", "get", "make", "become", "seem", "appear", "remain", "allow", "enable", "provide", "send", "receive", "keep", "go", "come", "take", "grow", "say", "know", "think", "see", "show", "mean", "let"] for f in (v, v + "s")
) | _words("goes ran got made became sent kept went came took grew said knew thought saw meant")
_STOPLIKE = _FUNCTION | _AUX | _NEG | _HEDGE | _ADVERBS | _COMMON_VERBS | _DETERMINERS
_LY_NOUNS = _words("anomaly assembly family supply reply rally ally italy monopoly jelly belly")
_ED_NOUNS = _words("speed feed seed need embed hundred bed red shed")
_REL_PRONOUNS = _words("which that who")
_PRONOUNS = _words("it them this that these those us me him her itself themselves one both all each")
_CONDITIONAL = _words("if unless whether suppose supposing assuming")
_COND_END = _words(", ; : then")
_LIST_SEP = _words(", and or")
_SCOPE_BOUNDARY = _words(", ; : and but or ( ) so when while since although though because until once whenever")
_DUE_SKIP = _words("down up out offline away")  # "the service went down due to ..."
_ASSOC = _words("linked associated correlated related tied")
_PP_PREPS = _words("in on at for from with within inside under behind across during")
_NOUN_SUFFIXES = ("tion", "sion", "ment", "ness", "ity", "ance", "ence", "ing")
# "X is a cause of Y" / "the root cause was Z": relational nouns do not name kinds.
_RELATIONAL_HEADS = _words("cause reason result effect consequence symptom source fix solution problem issue goal "
                           "purpose answer question idea point difference outcome")
_ISSUE_HEADS = _words("leak crash error failure bug outage timeout exhaustion exception fault defect incident "
                      "deadlock regression overload bottleneck vulnerability problem issue panic corruption "
                      "degradation contention starvation slowdown downtime")
_HEAD_TYPES: dict[str, str] = {
    **dict.fromkeys(_words("service app application library package program software framework tool daemon "
                           "microservice sdk runtime engine compiler interpreter kernel plugin browser"), "software"),
    **dict.fromkeys(_words("module class function method component object handler worker parser scheduler "
                           "controller driver layer middleware pool client variable field"), "component"),
    **dict.fromkeys(_words("server host machine node cluster container pod vm instance network gateway proxy "
                           "balancer router firewall datacenter queue broker"), "infrastructure"),
    **dict.fromkeys(_words("database db datastore storage cache store bucket disk volume table"), "storage"),
}
# Nouns common enough that a capitalised first word of a sentence is just a sentence start.
_COMMON_NOUNS = _ISSUE_HEADS | frozenset(_HEAD_TYPES) | _words(
    "system memory user application process thread request query file network job task latency traffic load data "
    "config configuration log code test connection session token index schema backup deployment release version "
    "update event message team customer payment order account feature change developer engineer operator admin "
    "monitoring logging caching authentication security performance throughput model value key record page "
    "document response interface endpoint")
_SINGULAR_KEEP = _words("status bus analysis class series species news means lens chaos atlas canvas bias alias gas "
                        "https dns aws ios macos kubernetes redis postgres jenkins express pandas physics analytics "
                        "diagnostics semantics graphics mathematics economics ethics always perhaps sometimes")
_IRREGULAR = {
    "caches": "cache", "niches": "niche", "headaches": "headache", "indices": "index", "vertices": "vertex",
    "matrices": "matrix", "analyses": "analysis", "buses": "bus", "statuses": "status", "aliases": "alias",
    "viruses": "virus", "children": "child", "people": "person", "criteria": "criterion", "cookies": "cookie",
    "movies": "movie", "zombies": "zombie", "leaves": "leaf", "halves": "half", "lives": "life",
}

# The relation lexicon: "verb[/particle]" -> the phrase that Ontology.normalize_relation maps
# to a canonical type (swapping the ends for inverse phrases such as "belongs to").
_LEXICON = {
    "cause": "causes", "lead/to": "leads to", "result/in": "results in", "result/from": "results from",
    "trigger": "triggers", "depend/on": "depends on", "require": "requires", "need": "needs", "use": "uses",
    "call": "calls", "belong/to": "belongs to", "contain": "contains", "include": "includes",
    "consist/of": "consists of", "affect": "affects", "impact": "impacts", "create": "creates",
    "connect/to": "connects to", "extend": "extends", "inherit/from": "inherits from", "read/from": "reads from",
    "write/to": "writes to", "prevent": "prevents", "correlate/with": "affects",
}
_IRREGULAR_VERBS = {"lead": ("led", "led"), "read": ("read", "read"), "write": ("wrote", "written")}
BASE, _3SG, PAST, PP, ING = range(5)


def _build_verbs() -> dict[str, list[tuple[frozenset[int], str | None, str]]]:
    """Inflected form -> [(slots it fills, particle, phrase)]: "caused" is both PAST and PP."""
    table: dict[str, list[tuple[frozenset[int], str | None, str]]] = {}
    for key, phrase in _LEXICON.items():
        verb, _, particle = key.partition("/")
        stem = verb[:-1] if verb.endswith("e") else verb
        past, pp = _IRREGULAR_VERBS.get(verb, (stem + "ed", stem + "ed"))
        slots: dict[str, set[int]] = {}
        for slot, form in enumerate((verb, verb + "s", past, pp, stem + "ing")):
            slots.setdefault(form, set()).add(slot)
        for form, s in slots.items():
            table.setdefault(form, []).append((frozenset(s), particle or None, phrase))
    return table


_VERBS = _build_verbs()

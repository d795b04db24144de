"""Entity seeds: the entities a text names (phrases, then word-level matches over names).

Shared by passage search, the seed's entity query and memories (which link to the entities they
name): one matcher, so "the entities a text names" means the same everywhere.
"""

from __future__ import annotations

from ..context import Context
from ..models import ENTITY, SKILL
from ..text import STOP_WORDS, normalize_name, query_words

__all__ = ["find_seed_entities"]

_MAX_PHRASE = 6


def _stem(word: str) -> str:
    # Enough to match "leaks" to "leak" and "borders" to "border" without a stemmer.
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def find_seed_entities(ctx: Context, text: str, limit: int, strict: bool = False,
                       with_skills: bool = False) -> list[str]:
    """Entity ids named in ``text``, best first.

    1. exact phrase matches of a name or alias (longest first);
    2. names whose words occur contiguously in the text, punctuation aside ("KAGH-FM",
       "Johnnycake, West Virginia");
    3. names all of whose words occur in the text (plural-insensitive);
    4. only when none of the above matched and not ``strict``: other word-level full-text
       matches (BM25 over names).
    Stop words never make a match on their own.
    """
    if limit <= 0:
        return []
    tokens = query_words(text, keep_stop_words=True)
    phrases: list[str] = []
    for n in range(min(_MAX_PHRASE, len(tokens)), 0, -1):
        for i in range(len(tokens) - n + 1):
            gram = tokens[i : i + n]
            if gram[0] in STOP_WORDS or gram[-1] in STOP_WORDS:
                continue
            phrases.append(normalize_name(" ".join(gram)))
    found = ctx.store.find_nodes(ENTITY, phrases) if phrases else {}
    if phrases and with_skills:  # a skill named in the text (its graph is the same graph)
        for p, nid in ctx.store.find_nodes(SKILL, phrases).items():
            found.setdefault(p, nid)
    seeds: list[str] = []
    for p in phrases:  # longest phrases first
        hit = found.get(p)
        if hit and hit not in seeds:
            seeds.append(hit)
    if len(seeds) >= limit:
        return seeds[:limit]
    joined = " " + " ".join(tokens) + " "
    stems = {_stem(t) for t in tokens if t not in STOP_WORDS}
    # The candidates come with their spellings (name and aliases): one read, no whole nodes.
    contiguous: list[str] = []
    covered: list[str] = []
    partial: list[str] = []
    for nid, _score, spellings in ctx.store.search_node_spellings(text, ENTITY, limit * 5):
        if nid in seeds:
            continue
        best = 0
        for name in spellings:
            words = query_words(name, keep_stop_words=True)
            content = [w for w in words if w not in STOP_WORDS]
            if not content:
                continue
            if " " + " ".join(words) + " " in joined:
                best = max(best, 2)
            elif {_stem(w) for w in content} <= stems:
                best = max(best, 1)
        (contiguous if best == 2 else covered if best == 1 else partial).append(nid)
    ordered = contiguous + covered
    if not strict and not seeds and not ordered:
        ordered = partial  # nothing named exactly: fall back to word-level matches
    for nid in ordered:
        if nid not in seeds:
            seeds.append(nid)
    return seeds[:limit]

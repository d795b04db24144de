"""The one retrieval pipeline for passages: seeds -> expand -> rerank -> evidence.

1. Seeds: BM25 over chunks (FTS5), dense top-k over chunk vectors, fused (RRF or a
   normalised weighted sum); entities named in the query (phrases, stemmed words) or close
   to it in embedding space.
2. Expand over one graph whose vertices are passages (chunks) and entities: passages connect
   to the entities they mention, entities to each other through relations (weight =
   confidence). Personalised PageRank by local push (cost follows the neighbourhood) or BFS.
   Query entities get HippoRAG's node specificity: weight / number of passages mentioning it.
3. Rerank: ``(alpha*dense + beta*lexical + gamma*graph) * relevance``, each part normalised
   by its maximum over the candidates and reported per hit. Optionally (``feedback_passages``,
   on by default with a model) steps 1-3 run again for the query followed by its best passage's
   text (the static class: that passage's names alone), and the two passage rankings are fused
   by reciprocal rank; a first-round passage whose title the query names gets one more term
   (``title_named_weight``: as if a third ranking put it first, divided among the candidates whose
   text names that title too), which never lifts it over the passage both rounds rank first.
4. Evidence: every hit carries citations (document, version, chunk, span, text) and the path
   from a seed; ``context`` packs the best evidence into a token budget.

Steps 1-3 of one round are :func:`.passages.rank` and :func:`.passages.rerank` (adapters over
:mod:`.core`); this module validates, resolves the configuration, runs the rounds and adds
documents, wiki pages and evidence.
"""

from __future__ import annotations

import math
import re
import reprlib
import time
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from ..context import Context
from ..errors import InvalidInput
from ..text import STOP_WORDS
from .config import (
    PassageConfig,
    SearchConfig,
    auto_preset,
    configured_preset,
    embedder_class,
    resolve_config,
)
from .evidence import build_context, estimate_tokens, subgraph_of
from .fusion import max_normalise
from .hits import KINDS, Hit, SearchResult
from .passages import GNode, PassageGraph, Round, fact_seeds, fill_texts, rank, rerank

_WORD = re.compile(r"\w+", re.UNICODE)

__all__ = ["Hit", "SearchResult", "search", "KINDS", "auto_preset_for", "build_context", "estimate_tokens",
           "fact_seeds"]


def auto_preset_for(ctx: Any) -> str:
    """Resolve preset "auto" from the embedder: nothing is counted or loaded (``ctx`` is a
    :class:`Context`; a knowledge base works too: both carry ``embeddings``)."""
    emb = ctx.embeddings
    return "default" if emb.model_id is None else auto_preset(emb.spec)


def _check(query: Any, kinds: Any, k: Any, config: Any, token_budget: Any = 1000) -> list[str]:
    if not isinstance(query, str):
        raise InvalidInput(f"query: expected a string, got {type(query).__name__}")
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InvalidInput(f"k: expected a positive integer, got {k!r}")
    if isinstance(token_budget, bool) or not isinstance(token_budget, int) or token_budget < 1:
        raise InvalidInput(f"token_budget: expected a positive number of tokens, got {token_budget!r}")
    if not isinstance(kinds, (str, list, tuple, set, frozenset)):
        raise InvalidInput(f"kinds: expected a kind or a list of kinds ({', '.join(KINDS)}), "
                           f"got {type(kinds).__name__}")
    kinds = [kinds] if isinstance(kinds, str) else list(kinds)
    for kind in kinds:
        if not isinstance(kind, str) or kind not in KINDS:
            raise InvalidInput(f"kind {reprlib.repr(kind)}: choose from {', '.join(KINDS)}")
    if config is not None and not isinstance(config, (PassageConfig, SearchConfig, Mapping)):
        raise InvalidInput(f"config: expected a mapping of search settings or a SearchConfig, "
                           f"got {type(config).__name__}")
    return kinds


def _resolve(ctx: Context, strategy: str | None, preset: str | None,
             config: PassageConfig | SearchConfig | Mapping[str, Any] | None) -> PassageConfig:
    if isinstance(config, SearchConfig):
        config = config.passages
    if isinstance(config, PassageConfig):
        return config if strategy is None else config.replace(strategy=strategy)
    overrides = dict(config or {})
    if strategy is not None:
        overrides["strategy"] = strategy
    name = preset or configured_preset(ctx.config)
    if name == "auto":
        name = auto_preset_for(ctx)
    emb = ctx.embeddings
    return resolve_config(name, overrides, embedder=embedder_class(emb.spec if emb.model_id else None))


def search(
    ctx: Context,
    query: str,
    *,
    kinds: Sequence[str] = ("chunk",),
    k: int = 10,
    strategy: str | None = None,
    preset: str | None = None,
    config: PassageConfig | SearchConfig | Mapping[str, Any] | None = None,
    as_context: bool = False,
    token_budget: int = 1000,
    with_subgraph: bool = True,
) -> SearchResult:
    """Search the knowledge base; see the module docstring for the pipeline.

    ``config``: a mapping of passage settings, a :class:`PassageConfig`, or a :class:`SearchConfig`
    (its ``passages``). ``with_subgraph=False`` skips the edges among the hits (for callers that
    build their own)."""
    kinds = _check(query, kinds, k, config, token_budget)
    cfg = _resolve(ctx, strategy, preset, config)
    # One search sees one state of what the store holds in RAM (the mention graph, vector indexes):
    # other processes' commits are looked for once, at its start, not before each of its ~19 mention reads.
    with ctx.store.read_scope():
        return _search(ctx, query, kinds, k, cfg, as_context, token_budget, with_subgraph)


def _search(ctx: Context, query: str, kinds: list[str], k: int, cfg: PassageConfig, as_context: bool,
            token_budget: int, with_subgraph: bool) -> SearchResult:
    t0 = time.perf_counter()
    want = max(k * (5 if "document" in kinds else 1), cfg.max_candidates)
    # Text and citations only for the hits a caller can get: the best k of each kind, unless
    # documents (their best passages) or a feedback round (its first-round texts) need more.
    detail = want if "document" in kinds or cfg.feedback_passages > 0 else k
    if list(kinds) == ["chunk"] and _one_channel(cfg):
        # One channel, no walk: its own order is the ranking, and each part is normalised by its
        # maximum (the best hit's, whatever the pool's depth), so the best k need only k candidates.
        want = detail
    # A feedback round ranks every candidate of both rounds but shows k of them: passage texts only
    # for the best first-round ones (the second query) and, after the fusion, the ones shown.
    texts = cfg.feedback_passages if cfg.feedback_passages > 0 and list(kinds) == ["chunk"] else None
    hits, first_round = _rank(ctx, query, cfg, kinds, want, detail, texts=texts)
    notes, timings = first_round.notes, first_round.timings
    if cfg.feedback_passages > 0 and ("chunk" in kinds or "document" in kinds):
        hits = _feedback_round(ctx, query, cfg, hits, want, first_round, texts is not None)
    if "document" in kinds:
        doc_hits = _document_hits(hits)
        if "chunk" not in kinds:
            hits = [h for h in hits if h.kind != "chunk"]
        hits.extend(doc_hits)
    order = {kind: i for i, kind in enumerate(kinds)}
    hits.sort(key=lambda h: (-h.score, order.get(h.kind, 9), h.id))
    hits = hits[:k] if len(kinds) == 1 else _interleave(hits, kinds, k)
    if texts is not None:
        fill_texts(ctx, hits)

    # 4. evidence ---------------------------------------------------------------------------
    store, min_conf, final = ctx.store, cfg.min_confidence, list(hits)
    result = SearchResult(query, hits, (lambda: subgraph_of(store, final, min_conf)) if with_subgraph else [],
                          notes, timings_ms=timings)
    if as_context:
        result.context = build_context(hits, result.subgraph, token_budget)
    timings["total"] = (time.perf_counter() - t0) * 1000
    return result


def _one_channel(cfg: PassageConfig) -> bool:
    """Whether passages are ranked by one first-stage channel alone (lexical or dense, no walk,
    no feedback round)."""
    return (cfg.strategy == "none" and cfg.use_lexical != cfg.use_dense and cfg.feedback_passages == 0
            and not cfg.protect_top and not cfg.protect_agreed)


def _rank(ctx: Context, query: str, cfg: PassageConfig, kinds: Sequence[str], want: int, detail: int | None = None,
          graph: PassageGraph | None = None, texts: int | None = None) -> tuple[list[Hit], Round]:
    """Steps 1-3 for one query: the best ``want`` candidates of each kind asked for (chunks stand
    in for documents), of which the best ``detail`` (default all) become hits, best first (the
    best ``texts``, default all, with their text and citations), and the round (notes, timings,
    the walk's neighbours)."""
    t0 = time.perf_counter()
    r = rank(ctx, query, cfg, kinds, want, graph)
    hits = rerank(ctx, r, cfg, kinds, want, detail, texts)
    if "page" in kinds:
        hits.extend(_page_hits(ctx, query, want, r.graph_score, cfg))
    r.timings["rerank"] = (time.perf_counter() - t0) * 1000 - r.timings["seeds"] - r.timings["expand"]
    return hits, r


def _feedback_round(ctx: Context, query: str, cfg: PassageConfig, hits: list[Hit], want: int,
                    first_round: Round, texts_later: bool = False) -> list[Hit]:
    """A second round for multi-hop questions: the query followed by the text of its best
    ``feedback_passages`` passages (or, ``feedback_with_query=False``, that text alone: see
    :func:`feedback_text`) finds what the first hop leads to (the passage names the bridge entity
    the question only describes). The two rankings of passages are fused by reciprocal rank; each
    passage reports both contributions (``first_round``, ``feedback``), its other parts and path
    come from the round that ranked it higher. The second round's walk reuses the first's
    neighbours; without new words there is no second round (the first is fused alone)."""
    t0 = time.perf_counter()
    first = [h for h in hits if h.kind == "chunk"]
    if not first:
        return hits
    text = feedback_text(query, [h.text for h in first[: cfg.feedback_passages]], cfg)
    notes, timings = first_round.notes, first_round.timings
    second: list[Hit] = []
    if text.strip():  # without new words a second round would only repeat the first
        second_query = f"{query}\n{text}" if cfg.feedback_with_query else text
        second, second_round = _rank(ctx, second_query, cfg, ["chunk"], want, graph=first_round.graph,
                                     texts=0 if texts_later else None)
        notes.extend(n for n in second_round.notes if n not in notes)
    rank1 = {h.id: r for r, h in enumerate(first, 1)}
    rank2 = {h.id: r for r, h in enumerate(second, 1)}
    by1, by2 = {h.id: h for h in first}, {h.id: h for h in second}
    # within the first round's candidate pool: a named title deeper down is not lifted over it (R@2 the same on
    # every default row, R@5 and R@10 the same or higher than with no limit; docs/benchmarks.md)
    pool = first[: cfg.pool_k]
    named = title_named(query, pool) if cfg.title_named_weight > 0 else set()
    specific = title_specificity(ctx, named, pool) if named else {}
    # The passage every round ranks first (the first round's best when there is no second) stays first: a title
    # the query names is a hint where the rounds disagree, not a reason to overrule them where they agree ("how
    # do I fix Redis running out of memory" named the topic note "Redis", which outranked the incident note both
    # rounds put first). On MuSiQue and 2Wiki R@2/5/10 are unchanged by the cap (docs/benchmarks.md).
    head = first[0].id if not second or second[0].id == first[0].id else None
    fused: list[Hit] = []
    for cid in by1.keys() | by2.keys():
        r1, r2 = rank1.get(cid), rank2.get(cid)
        h = by2[cid] if r1 is None or (r2 is not None and r2 < r1) else by1[cid]
        a = 1.0 / (cfg.feedback_rrf_k + r1) if r1 is not None else 0.0
        b = cfg.feedback_weight / (cfg.feedback_rrf_k + r2) if r2 is not None else 0.0
        t = cfg.title_named_weight * specific[cid] / (cfg.feedback_rrf_k + 1) if cid in named else 0.0
        h.parts = {**h.parts, "first_round": a, "feedback": b, "title_named": t}
        h.score = a + b + t
        h.seed = (cid in by1 and by1[cid].seed) or (cid in by2 and by2[cid].seed)
        fused.append(h)
    if head is not None and named - {head}:
        top = next(h.score for h in fused if h.id == head)
        over = sorted((h for h in fused if h.id != head and h.parts["title_named"] and h.score >= top),
                      key=lambda h: (-h.score, h.id))
        below = top
        for h in over:  # just below the head, in their own order (strictly: documents are sorted again by score)
            below = math.nextafter(below, 0.0)
            h.score = max(below, h.parts["first_round"] + h.parts["feedback"])
            h.parts["title_named"] = h.score - h.parts["first_round"] - h.parts["feedback"]
    fused.sort(key=lambda h: (-h.score, h.id))
    timings["feedback"] = (time.perf_counter() - t0) * 1000
    return fused[:want] + [h for h in hits if h.kind != "chunk"]


_DISAMBIGUATION = re.compile(r"\s*\([^()]*\)\s*$")


def title_named(query: str, passages: Sequence[Hit]) -> set[str]:
    """The passages whose document title the query names, the best-ranked one of each document
    (``passages`` in rank order; the other chunks of a long document would take the places the
    second hop needs). Named: the title's words, a trailing "(...)" set aside ("Henry Worrall
    (artist)"), appear in the query as one phrase (NFKC, case-folded, diacritics set aside), and one of them is a word
    of two letters or more that is not a stop word (a note titled "Notes" is named by "... my
    notes", one titled "1984" or "C" by no "... of 1984" or "vitamin C").
    The page of the thing asked about is a first hop the second round must not push down: in
    the fusion a feedback-only passage at its rank 1 outscored the first round's rank-4 page
    "Signmark" for "... the country Signmark is from?"."""
    words = f" {' '.join(_words(query))} "
    out: set[str] = set()
    seen: dict[str, bool] = {}  # title -> named
    docs: set[str | None] = set()
    for h in passages:
        if not h.title or h.doc_id in docs:
            continue
        named = seen.get(h.title)
        if named is None:
            title = _words(_DISAMBIGUATION.sub("", h.title))
            named = seen[h.title] = (any(w not in STOP_WORDS and sum(c.isalpha() for c in w) >= 2 for w in title)
                                     and f" {' '.join(title)} " in words)
        if named:
            out.add(h.id)
            docs.add(h.doc_id)
    return out


def title_specificity(ctx: Context, named: set[str], pool: Sequence[Hit]) -> dict[str, float]:
    """Per named passage, 1 / (1 + the number of other documents' passages in the pool whose text names its
    title too). A topic note ("Redis", "Python", "DNS") is named in many of the notes a question about it finds,
    and is seldom their answer; an entity page the question names ("Signmark") is named in few. Measured on
    MuSiQue, 2Wiki and the notes vaults together (docs/benchmarks.md, "the title's specificity")."""
    fill_texts(ctx, pool)  # a chunk search fills only the texts it shows; a title's mentions need them all
    texts = {h.id: f" {' '.join(_words(h.text or ''))} " for h in pool}
    out: dict[str, float] = {}
    for h in pool:
        if h.id in named:
            phrase = f" {' '.join(_words(_DISAMBIGUATION.sub('', h.title or '')))} "
            others = sum(1 for x in pool if x.doc_id != h.doc_id and phrase in texts[x.id])
            out[h.id] = 1.0 / (1 + others)
    return out


def _words(text: str) -> list[str]:
    """The words of ``text`` case-folded and without diacritics, as the full-text index compares them (FTS5's
    unicode61 folds "Café" and "cafe" together, so a query typed without the accent names the title too)."""
    bare = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return [w.casefold() for w in _WORD.findall(unicodedata.normalize("NFKC", bare))]


def feedback_text(query: str, passages: Sequence[str], cfg: PassageConfig) -> str:
    """What the second round adds to the query: the first ``feedback_words`` words of the best
    passages (0: all of them), or with ``feedback_terms="names"`` only their name-like words
    (capitalised or numeric, not already in the query): the bridge is a name the passage gives
    and the question only describes, and every other word is one more posting list to read."""
    words = " ".join(passages).split()
    if cfg.feedback_words > 0:
        words = words[: cfg.feedback_words]
    if cfg.feedback_terms == "names":
        asked = {w.casefold() for w in _WORD.findall(query)}
        keep = []
        for token in words:
            for w in _WORD.findall(token):
                if (w[0].isupper() or w[0].isdigit()) and w.casefold() not in asked and w.casefold() not in STOP_WORDS:
                    keep.append(w)
                    asked.add(w.casefold())
        words = keep
    return " ".join(words)


def _document_hits(hits: list[Hit]) -> list[Hit]:
    """Whole documents ranked by their best passage (citations: their best three)."""
    best: dict[str, Hit] = {}
    docs: dict[str, list[Hit]] = {}
    for h in sorted((h for h in hits if h.kind == "chunk"), key=lambda h: (-h.score, h.id)):
        if h.doc_id:
            docs.setdefault(h.doc_id, []).append(h)
            best.setdefault(h.doc_id, h)
    return [Hit("document", d, h.score, dict(h.parts), h.seed, h.title, h.text, d, h.chunk_id, h.version,
                [c for x in docs[d][:3] for c in x.citations], h.path, h.graph_move) for d, h in best.items()]


def _page_hits(ctx: Context, query: str, want: int, graph_score: Mapping[GNode, float],
               cfg: PassageConfig) -> list[Hit]:
    """Wiki pages: BM25 over title and text (the wiki layer's ``search_wiki`` hook), plus the pages
    of the entities the walk reached (graph part = the entity's share of the walk)."""
    found = ctx.hooks.first("search_wiki", query, want, default=[]) if cfg.use_lexical else []
    lexical = {h["slug"]: h for h in found}
    ents = sorted(((n[1], v) for n, v in graph_score.items() if n[0] == "n"), key=lambda t: -t[1])[:want]
    about = ctx.store.pages_by_subject(f"entity:{e}" for e, _ in ents)
    gs: dict[str, float] = {}
    for e, v in ents:
        page = about.get(f"entity:{e}")
        if page is not None:
            gs[page.slug] = max(gs.get(page.slug, 0.0), v)
    pages = ctx.store.pages_by_slug(set(lexical) | set(gs))
    lex_n = max_normalise({slug: h["score"] for slug, h in lexical.items()})
    graph_n = max_normalise(gs)
    out: list[Hit] = []
    for slug, page in pages.items():
        parts = {"dense": 0.0, "lexical": lex_n.get(slug, 0.0), "graph": graph_n.get(slug, 0.0), "relevance": 1.0}
        score = cfg.beta * parts["lexical"] + cfg.gamma * parts["graph"]
        if score <= 0:
            continue
        text = lexical[slug]["snippet"] if slug in lexical else (page.summary or page.title)
        cite = {"page": slug, "path": f"wiki/{page.path}", "title": page.title, "text": text}
        out.append(Hit("page", slug, score, parts, slug in lexical, page.title, text, citations=[cite]))
    out.sort(key=lambda h: (-h.score, h.id))
    return out[:want]


def _interleave(hits: list[Hit], kinds: Sequence[str], k: int) -> list[Hit]:
    """With several kinds asked for, keep the best k of each (scores are per kind)."""
    out: list[Hit] = []
    for kind in kinds:
        out.extend([h for h in hits if h.kind == kind][:k])
    return out

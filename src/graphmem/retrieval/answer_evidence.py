"""What answers a question about named entities, read off the graph and its evidence.

Three sources, each bounded and each one indexed lookup per seed or document, so the graph-only
fast path of ``query_with_evidence`` stays close to the cost of ``query``:

* **Documents about a seed**: a document whose title names the seed ("INC-2041: Dispatch outage"
  is about INC-2041, "Tracker Service" about the Tracker Service). The relations it states are
  relations about its subject even when the walk does not reach them ("The nightly vacuum leads
  to slow queries on ledger-db." in the incident report of INC-2041).
* **The question's own words in those documents**: their sentences that contain the question's
  other content words ("dispatch", "fail" → "the Dispatch API rejected most new orders for 47
  minutes"). The extractor turns few such sentences into relations, but they are the answer.
* **Sentences that name two seeds**: where the text says how two named things relate, also when
  no relation was extracted, notably negations ("The Label Printer service does not depend on
  Kafka.").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..context import Context
from ..ingest.chunking import split_sentences
from ..models import Chunk, Edge, Node, Provenance
from ..text import STOP_WORDS
from .query_seeds import StemSet

__all__ = ["AboutDocument", "Sentence", "about_documents", "document_claims", "question_sentences",
           "co_mention_sentences", "question_words"]

MAX_ABOUT_DOCUMENTS = 3
MAX_DOCUMENTS_PER_SEED = 20
MAX_CHUNKS_PER_DOCUMENT = 24
MAX_SENTENCES_PER_DOCUMENT = 4
MAX_CO_MENTION_SENTENCES = 6
MAX_MENTIONS_PER_SEED = 200
# Words that shape a question rather than say what it is about.
_QUESTION_ONLY = frozenset(["during", "out", "tell", "show", "give", "list", "find", "happen", "happened",
                            "happens", "please", "also", "just"])
_WORD = re.compile(r"\w+", re.UNICODE)
# A list item on a line of its own is a sentence of its own (timelines, runbooks).
_ITEM = re.compile(r"\n(?=[ \t]*(?:[-*•]|\d+[.)])[ \t])")


@dataclass(frozen=True)
class AboutDocument:
    """A document version whose title names a seed."""

    doc_id: str
    version: int
    title: str
    seed_id: str


@dataclass(frozen=True)
class Sentence:
    """A sentence of a chunk, offsets into the document version, and why it is evidence."""

    chunk_id: str
    doc_id: str
    version: int
    start: int
    end: int
    text: str
    supports: str


def _words(text: str) -> list[str]:
    return [w.casefold() for w in _WORD.findall(text)]


def _contains(words: Sequence[str], name: Sequence[str]) -> bool:
    n = len(name)
    return n > 0 and any(list(words[i : i + n]) == list(name) for i in range(len(words) - n + 1))


def about_documents(ctx: Context, seeds: Sequence[str], nodes: dict[str, Node]) -> list[AboutDocument]:
    """Latest document versions whose title names one of ``seeds`` (at most
    ``MAX_ABOUT_DOCUMENTS``, the first seeds' first)."""
    out: list[AboutDocument] = []
    seen: set[str] = set()
    for sid in seeds:
        node = nodes.get(sid)
        if node is None:
            continue
        names = [_words(n) for n in (node.name, *node.aliases)]
        refs = ctx.store.node_documents(sid, MAX_DOCUMENTS_PER_SEED).documents
        docs = ctx.store.latest_documents([r.doc_id for r in refs if r.doc_id not in seen])
        for ref in refs:
            doc = docs.get(ref.doc_id)
            if doc is None or doc.doc_id in seen:
                continue
            title = _words(doc.title)
            if any(_contains(title, n) for n in names):
                seen.add(doc.doc_id)
                out.append(AboutDocument(doc.doc_id, doc.version, doc.title, sid))
                if len(out) >= MAX_ABOUT_DOCUMENTS:
                    return out
    return out


def document_claims(ctx: Context, docs: Sequence[AboutDocument], min_confidence: float, limit: int
                    ) -> list[tuple[Edge, Provenance]]:
    """The relations the documents state (confidence floor applied), first stated first."""
    out: list[tuple[Edge, Provenance]] = []
    seen: set[str] = set()
    for d in docs:
        for claim in ctx.store.document_claims(d.doc_id, d.version, limit):
            if claim.edge.confidence >= min_confidence and claim.edge.id not in seen:
                seen.add(claim.edge.id)
                out.append((claim.edge, claim.evidence))
    return out[:limit]


def question_words(text: str, named_positions: Iterable[int]) -> list[str]:
    """The question's content words that are not part of a name it names."""
    named = set(named_positions)
    raw = [m.group().casefold() for m in _WORD.finditer(text)]
    return list(dict.fromkeys(w for i, w in enumerate(raw)
                              if i not in named and w not in STOP_WORDS and w not in _QUESTION_ONLY
                              and not w.isdigit()))


def _sentences(chunk: Chunk) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for s, e in split_sentences(chunk.text):
        cuts = [s, *(m.start() + 1 for m in _ITEM.finditer(chunk.text, s, e)), e]
        for a, b in zip(cuts, cuts[1:]):
            piece = chunk.text[a:b]
            lead = len(piece) - len(piece.lstrip())
            trail = len(piece.rstrip())
            if trail > lead:
                spans.append((a + lead, a + trail))
    return spans


def question_sentences(ctx: Context, docs: Sequence[AboutDocument], words: Sequence[str]) -> list[Sentence]:
    """Per document, the sentences holding most of the question's ``words`` (at most
    ``MAX_SENTENCES_PER_DOCUMENT``; ties in reading order; headings left out)."""
    if not words:
        return []
    out: list[Sentence] = []
    for d in docs:
        chunks = ctx.store.document_chunks(d.doc_id, d.version)[:MAX_CHUNKS_PER_DOCUMENT]
        scored: dict[tuple[int, int], tuple[int, Sentence]] = {}
        for ch in chunks:
            for s, e in _sentences(ch):
                text = ch.text[s:e]
                if text.startswith("#"):
                    continue
                sw = StemSet(_words(text))
                got = [q for q in words if sw.has(q)]
                span = (ch.start + s, ch.start + e)
                if got and span not in scored:
                    scored[span] = (len(got), Sentence(ch.chunk_id, d.doc_id, d.version, span[0], span[1], text,
                                                       f"question words: {', '.join(got)}"))
        best = sorted(scored.items(), key=lambda kv: (-kv[1][0], kv[0][0]))[:MAX_SENTENCES_PER_DOCUMENT]
        out.extend(sorted((v[1] for _, v in best), key=lambda x: x.start))
    return out


def co_mention_sentences(ctx: Context, seeds: Sequence[str], nodes: dict[str, Node]) -> list[Sentence]:
    """Sentences that mention two or more of ``seeds`` (at most ``MAX_CO_MENTION_SENTENCES``)."""
    if len(seeds) < 2:
        return []
    mentions = ctx.store.mentions_of(seeds, MAX_MENTIONS_PER_SEED)
    per_chunk: dict[str, list[tuple[str, int, int]]] = {}
    for nid, ms in mentions.items():
        for m in ms:
            per_chunk.setdefault(m.chunk_id, []).append((nid, m.start, m.end))
    shared = [c for c, ms in per_chunk.items() if len({nid for nid, _, _ in ms}) >= 2]
    if not shared:
        return []
    chunks = ctx.store.get_chunks(shared)
    out: list[Sentence] = []
    seen: set[tuple[str, int, int]] = set()
    for cid in sorted(shared, key=lambda c: (chunks[c].doc_id, chunks[c].start) if c in chunks else ("", 0)):
        ch = chunks.get(cid)
        if ch is None:
            continue
        for s, e in _sentences(ch):
            a, b = ch.start + s, ch.start + e
            named = {nid for nid, ms, me in per_chunk[cid] if a <= ms and me <= b}
            key = (ch.doc_id, a, b)
            if len(named) >= 2 and key not in seen:
                seen.add(key)
                names = " and ".join(sorted(nodes[n].name for n in named if n in nodes))
                out.append(Sentence(cid, ch.doc_id, ch.version, a, b, ch.text[s:e], f"names {names}"))
                if len(out) >= MAX_CO_MENTION_SENTENCES:
                    return out
    return out


"""Pages from every ingest, deterministic and without an LLM.

An ingest marks, in its own transaction, the pages it makes stale: ``doc:<id>`` (the
document's summary page) and ``entity:<node id>`` (one page per entity it touched). This
module turns a set of such marks into page writes:

* summary page (category ``summary``): document, version, source; key claims as
  ``[[a]] relation [[b]]`` with confidence, quote and chunk citation; the entities it names;
* entity page (category ``entity``): type and aliases; relations in both directions, with the
  first evidence quote of each; the documents that name it; summary pages that link to it.
  An entity gets its page once it has a relation or ``wiki.entity_min_documents`` documents
  name it (default 2; 1 = every entity): a page for a name seen once, with nothing linked to
  it, would repeat its one summary page — and on entity-dense corpora most names are such;
* a "Contradictions" section on either when the same pair carries opposite relations
  (``ontology.are_opposite``, e.g. causes vs prevents) or a new document version dropped a
  claim its previous version made.

Only the block between graphmem's markers is rewritten; the rest of an existing page is kept
byte for byte. Every list is bounded (``wiki.max_relations``, ``max_documents``,
``max_claims``, ``max_entities``, ``max_backlinks``) and read through index ranges with
LIMITs, strongest/oldest first, so a hub entity's page costs what a small one's does and
stops changing once it is full (unchanged pages are not rewritten at all).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput
from ..models import Document, Edge, Node, Page, Provenance
from ..store.rows import Claim, DocVersion
from ..text import memo_short, normalize_name
from .core import Plan, WikiCore
from .files import exists
from .generated_write import page_write, retitle_for
from .leftovers import own_leftover
from .markdown import code_span, html_safe, parse_page
from .scope import LastRound, labelled, relink_scope
from .scope import pageless as find_pageless
from .slugs import SUMMARY_PREFIX, fallback_slug, page_path, slugify
from .subjects import DOC, ENT

if TYPE_CHECKING:
    from ..store import Store

__all__ = ["plan_auto_pages", "legacy_slug_marks", "summary_slug_base", "DOC", "ENT", "SUMMARY_PREFIX"]

# A generated summary page is ``summary/doc-<title>.md`` (slugs.SUMMARY_PREFIX, which index shards skip): the
# bare slug belongs to the entity of the same name (a document's title is one of its entities), so that
# ``[[dispatch-api]]`` opens the entity page and never depends on which page happened to be made first.
_NUMBERED = re.compile(r"^(?P<base>.+)-\d+$")


def _quote(text: str, n: int = 160) -> str:
    one = " ".join(text.split()).replace("[[", "[ [").replace("]]", "] ]")
    return "“" + html_safe(one if len(one) <= n else one[: n - 1] + "…") + "”"


@memo_short(65536)  # names and types repeat across a batch's pages
def _md(text: str) -> str:
    """A name as plain markdown text (no accidental links, emphasis or HTML)."""
    return html_safe(" ".join(text.split()).replace("[[", "[ [").replace("]]", "] ]").replace("*", "\\*"))


@dataclass
class _Ctx:
    """Everything one batch of generated pages needs, read in bulk."""

    store: Store
    nodes: dict[str, Node] = field(default_factory=dict)
    slugs: dict[str, str] = field(default_factory=dict)  # subject -> slug (existing or planned)
    docs: dict[str, Document] = field(default_factory=dict)
    prov: dict[str, Provenance] = field(default_factory=dict)  # first evidence per edge
    opposed: dict[tuple[str, str, str], Edge] = field(default_factory=dict)  # (source, type, target) found

    def ent(self, node_id: str, self_id: str | None = None) -> str:
        slug = self.slugs.get(ENT + node_id) if node_id != self_id else None
        if slug:
            return f"[[{slug}]]"
        node = self.nodes.get(node_id)
        return f"**{_md(node.name)}**" if node else code_span(node_id)

    def doc(self, doc_id: str) -> str:
        slug = self.slugs.get(DOC + doc_id)
        return f"[[{slug}]]" if slug else code_span(doc_id)

    def cite(self, p: Provenance | None, own_doc: str | None = None) -> str:
        if p is None:
            return ""
        chunk = f"chunk {code_span(p.chunk_id)}" if p.chunk_id else ""
        # an item extracted without supporting text has no quote to show (an empty one printed as “”)
        quote = f" — {_quote(p.text)}" if p.text.strip() else ""
        if p.doc_id == own_doc:
            return quote + (f" — {chunk}" if chunk else "")
        return f"{quote} — {self.doc(p.doc_id)} v{p.version}" + (f", {chunk}" if chunk else "")

    def claim(self, e: Edge, p: Provenance | None, own_doc: str | None = None, self_id: str | None = None) -> str:
        """``- [[a]] type [[b]] (confidence) — quote — citation``; the page's own entity
        (``self_id``) in bold instead of a link to itself."""
        return (f"- {self.ent(e.source, self_id)} {html_safe(e.type)} {self.ent(e.target, self_id)} (confidence "
                f"{e.confidence:.2f}){self.cite(p, own_doc)}")


def _opposite_lines(ctx: _Ctx, edges: Iterable[Edge], opposite: dict[str, str]) -> list[str]:
    """Conflict lines for edges whose pair also carries the opposite relation (looked up in
    bulk beforehand into ``ctx.opposed``)."""
    out: list[str] = []
    seen: set[frozenset[str]] = set()
    for e in edges:
        opp = opposite.get(e.type)
        if not opp:
            continue
        other = ctx.opposed.get((e.source, opp, e.target))
        if other is None or frozenset((e.id, other.id)) in seen:
            continue
        seen.add(frozenset((e.id, other.id)))
        pa, pb = ctx.prov.get(e.id), ctx.prov.get(other.id)
        out.append(
            f"- Conflict: {ctx.ent(e.source)} {html_safe(e.type)} {ctx.ent(e.target)} ({e.confidence:.2f}"
            f"{', ' + ctx.doc(pa.doc_id) if pa else ''}) vs {ctx.ent(other.source)} {html_safe(other.type)} "
            f"{ctx.ent(other.target)} ({other.confidence:.2f}{', ' + ctx.doc(pb.doc_id) if pb else ''})"
        )
    return out


def _dropped_line(ctx: _Ctx, e: Edge, doc_id: str, version: int, before: int) -> str:
    return (f"- Dropped: {code_span(doc_id)} version {version} no longer states {ctx.ent(e.source)} "
            f"{html_safe(e.type)} "
            f"{ctx.ent(e.target)} (version {before} did)")


def _section(title: str, lines: Sequence[str], empty: str | None = None) -> list[str]:
    if not lines and empty is None:
        return []
    return ["", f"## {title}", "", *(lines or [empty or ""])]


def _base_slug(title: str, subject: str) -> str:
    try:
        return slugify(title)
    except InvalidInput:  # a title with nothing to make a name of must not block the page
        return fallback_slug(subject)


def summary_slug_base(title: str, subject: str) -> str:
    """The slug a generated summary page of ``title`` starts from: ``doc-<slug of title>``."""
    base = _base_slug(title, subject)
    return base if base.startswith(SUMMARY_PREFIX) else SUMMARY_PREFIX + base


def _allocate(store: Store, wiki_dir: Any, category: str, base: str, planned: set[str],
              vacated: set[str] | frozenset[str] = frozenset(), title: str | None = None,
              leftovers: set[str] | None = None) -> str:
    """The first free slug from ``base``. ``title``: the page's; an unindexed file that is graphmem's own
    page of that title (left by a writer killed before its commit) is free, see wiki/leftovers.py, and its
    slug is added to ``leftovers`` (its write then replaces those bytes)."""
    taken = store.slugs_taken(base) - vacated
    slug, n = base, 1
    while True:
        if slug not in taken and slug not in planned:
            path = page_path(wiki_dir, category, slug)
            if not exists(wiki_dir, path):
                break
            # Never overwrite a file that sits there unindexed (dropped by hand, not yet synced), unless it
            # is only graphmem's own page of this title
            if title is not None and own_leftover(wiki_dir, path, category, title):
                if leftovers is not None:
                    leftovers.add(slug)
                break
        n += 1
        slug = f"{base}-{n}"
    planned.add(slug)
    return slug


def plan_auto_pages(core: WikiCore, keys: Sequence[str], now: str, relink_of: LastRound | None = None) -> Plan:
    """The page writes that bring the generated pages of ``keys`` up to date (call inside the
    transaction that applies them).

    ``relink_of``: ``keys`` are the summaries the round it describes marked because it made new
    pages (``plan.info["relink"]``, ``["created"]``, ``["rendered"]``): the entity pages those
    documents bring along are then rendered only where their bytes can change (:func:`relink_scope`)."""
    store = core.ctx.store
    cfg = core.ctx.config.wiki
    max_rel, max_docs = cfg.max_relations, cfg.max_documents
    max_claims, max_ents, max_back = cfg.max_claims, cfg.max_entities, cfg.max_backlinks
    min_docs = cfg.entity_min_documents
    opposite = dict(core.ctx.config.ontology.opposite_relations)
    ctx = _Ctx(store)

    # -- documents: claims, entities, dropped claims ------------------------------------------------
    doc_ids = sorted({k[len(DOC):] for k in keys if k.startswith(DOC)})
    ent_ids = list(dict.fromkeys(k[len(ENT):] for k in keys if k.startswith(ENT)))
    docs = store.latest_documents(doc_ids)
    per_doc: dict[str, tuple[list[Claim], list[str], list[Edge]]] = {}
    explicit = set(ent_ids)  # entities marked themselves: always rendered
    for doc in docs.values():
        claims = store.document_claims(doc.doc_id, doc.version, max_claims)
        ents = store.document_entity_ids(doc.doc_id, doc.version, max_ents)
        dropped: list[Edge] = []
        if doc.version > 1:
            prev = store.document_claim_ids(doc.doc_id, doc.version - 1)
            if prev:
                gone = prev - store.document_claim_ids(doc.doc_id, doc.version)
                dropped = sorted(store.get_edges(gone).values(), key=lambda e: e.id)[:max_claims]
        per_doc[doc.doc_id] = (claims, ents, dropped)
        ent_ids += ents + [x for e, _ in claims for x in (e.source, e.target)]
        ent_ids += [x for e in dropped for x in (e.source, e.target)]
    ent_ids = list(dict.fromkeys(ent_ids))

    # -- entities: bounded relations, documents, conflicts -------------------------------------------
    # Most of a batch's entities get no page: a summary lists them by name and type only, so
    # full nodes (aliases, properties) are read for the others alone.
    ctx.nodes = labelled(store, ent_ids)
    ent_ids = [n for n in ent_ids if n in ctx.nodes]
    # Which of them and of the documents have a page: one read for the checks below and the links.
    known = store.subject_slugs([DOC + d for d in doc_ids] + [ENT + n for n in ent_ids])
    kept = (relink_scope(store, ent_ids, explicit, per_doc, relink_of, known) if relink_of is not None
            else set())
    per_ent: dict[str, tuple[list[Edge], bool, list[DocVersion], bool, list[Edge]]] = {}
    others: set[str] = set()
    pageless = find_pageless(store, ent_ids, ctx.nodes, min_docs, known) | kept
    ctx.nodes.update(store.get_nodes(n for n in ent_ids if n not in pageless))
    for nid in ent_ids:
        if nid in pageless:
            continue
        out, inc = store.strongest_edges(nid, max_rel)
        rels = sorted({e.id: e for e in out + inc}.values(), key=lambda e: (-e.confidence, e.created_at, e.id))
        more_rels = len(rels) > max_rel or len(out) == max_rel or len(inc) == max_rel
        rels = rels[:max_rel]
        ds, more_docs = store.node_documents(nid, max_docs)
        conflicts = store.edges_of_types(nid, sorted(opposite), 2 * max_rel) if out else []
        per_ent[nid] = (rels, more_rels, ds, more_docs, conflicts)
        others.update(x for e in rels + conflicts for x in (e.source, e.target))
    ctx.slugs = {**known, **store.subject_slugs(ENT + n for n in others - set(ent_ids))}
    # Names are needed only for the ends that are shown as text (no page to link to).
    missing = {n for n in others - set(ctx.nodes) if ENT + n not in ctx.slugs}
    if missing:
        ctx.nodes.update(labelled(store, missing))
    shown = [e for v in per_ent.values() for e in v[0] + v[4]] + [e for v in per_doc.values() for e, _ in v[0]]
    ctx.opposed = store.find_edges((e.source, opposite[e.type], e.target) for e in shown if e.type in opposite)
    edge_ids = {e.id for e in shown} | {e.id for v in per_doc.values() for e in v[2]}
    edge_ids |= {e.id for e in ctx.opposed.values()}
    # The first evidence of every edge shown, whichever documents are in this batch: a page then
    # reads the same when its documents are regenerated one at a time or together.
    ctx.prov = store.first_provenance("edge", edge_ids)
    ref_docs = set(doc_ids) | {p.doc_id for p in ctx.prov.values()} | {d for v in per_ent.values() for d, _ in v[2]}
    ctx.docs = {**docs, **store.latest_documents(ref_docs - set(doc_ids))}

    # -- slugs: existing pages by subject, new ones allocated ------------------------------------------
    ctx.slugs.update(store.subject_slugs([DOC + d for d in ref_docs if DOC + d not in ctx.slugs]))
    planned: set[str] = set()
    targets: list[tuple[str, str, str]] = []  # (subject, category, title)
    for d in doc_ids:
        if d in docs:
            targets.append((DOC + d, "summary", docs[d].title))
    for nid in ent_ids:
        if nid in pageless:
            continue
        rels, _, ds, _, _ = per_ent[nid]
        if ENT + nid not in ctx.slugs and not rels and len(ds) < min_docs:
            # Nothing to say beyond its one summary page (yet): no page, unless a person wrote one.
            same = store.find_page("entity", normalize_name(ctx.nodes[nid].name))
            if same is None or same.subject is not None:
                continue
        targets.append((ENT + nid, "entity", ctx.nodes[nid].name))
    existing = store.pages_by_subject(s for s, _, _ in targets if s in ctx.slugs)
    moved = _move_legacy_slugs(core, targets, existing, docs, ctx, planned)
    vacated = set(moved)
    adopt: dict[str, Page] = {}
    # Summary titles this batch gives new pages: a later document of the same title is told apart
    # by its id, as it is when the two are regenerated one document at a time.
    new_titles: set[str] = set()
    leftovers: set[str] = set()  # slugs whose unindexed file is graphmem's own, taken back (see _allocate)
    wanted: dict[str, set[str]] = {}  # category -> titles of the pages to name (looked up at once)
    for subject, category, title in targets:
        if subject not in ctx.slugs:
            wanted.setdefault(category, set()).add(normalize_name(title))
    by_title = {category: store.find_pages(category, titles) for category, titles in wanted.items()}
    for i, (subject, category, title) in enumerate(targets):
        if subject in ctx.slugs:
            continue
        same = by_title[category].get(normalize_name(title))
        if same is not None and same.subject is None and same.slug not in planned:
            adopt[subject] = same  # a page written by hand about the same thing: add a block to it
            ctx.slugs[subject] = same.slug
            planned.add(same.slug)
            continue
        if subject.startswith(DOC) and (same is not None or normalize_name(title) in new_titles):
            title = f"{title} ({subject[len(DOC):]})"  # another document's summary has this title
            targets[i] = (subject, category, title)
        elif subject.startswith(DOC):
            new_titles.add(normalize_name(title))
        base = summary_slug_base(title, subject) if subject.startswith(DOC) else _base_slug(title, subject)
        ctx.slugs[subject] = _allocate(store, core.dir, category, base, planned, vacated, title, leftovers)

    core.slug_hint.update({slug: s[len(ENT):] for s, slug in ctx.slugs.items() if s.startswith(ENT)})

    # -- render ---------------------------------------------------------------------------------------
    plan = Plan()
    # Summary pages rewritten in this batch -> the pages their new text links to: an entity page's
    # "See also" reads them from here, not from the rows they are about to replace.
    relinked: dict[str, set[str]] = {}
    links_to: dict[str, set[str]] = {}  # the same, inverted: target -> rewritten summaries linking to it
    for subject, category, title in targets:
        page = existing.get(subject) or adopt.get(subject)
        slug = ctx.slugs[subject]
        if subject.startswith(DOC):
            doc = docs[subject[len(DOC):]]
            claims, ents, dropped = per_doc[doc.doc_id]
            block, sources = _summary_block(ctx, store, doc, claims, ents, dropped, opposite)
            tags, aliases = ["summary"], []
        else:
            nid = subject[len(ENT):]
            rels, more_rels, ds, more_docs, conflicts = per_ent[nid]
            backs = _see_also_sources(store, slug, max_back, relinked, links_to.get(slug, set()))
            block, sources = _entity_block(ctx, store, ctx.nodes[nid], rels, more_rels, ds, more_docs, conflicts,
                                           backs, opposite)
            tags = ["entity", ctx.nodes[nid].type]
            # Obsidian resolves [[Dispatch API]] through aliases (graphmem through the slug).
            aliases = list(dict.fromkeys([ctx.nodes[nid].name, *ctx.nodes[nid].aliases[:10]]))
        w = page_write(core, page, category, slug, title, subject, block, sources, tags, aliases, now,
                        retitle_for(store, docs[subject[len(DOC):]], page, SUMMARY_PREFIX) if subject.startswith(DOC)
                        else None, leftover=page is None and slug in leftovers)
        if w is not None:
            plan.writes.append(w)
            if w.category == "summary":
                w.parsed = parse_page(w.text, w.category, w.front_matter)  # build_row uses it too
                relinked[w.slug] = {ln.target for ln in w.parsed.links}
                for target in relinked[w.slug]:
                    links_to.setdefault(target, set()).add(w.slug)
    # A new entity page lists documents whose summary pages named it as plain text: those
    # summaries are marked, so that the next round links them to it.
    relink = {DOC + d for s, _, _ in targets if s.startswith(ENT) and s not in existing and s not in adopt
              for d, _ in per_ent[s[len(ENT):]][2]} - {DOC + d for d in doc_ids}
    # Pages that now exist for the first time (or are adopted): their neighbours' pages name them.
    created = {s[len(ENT):]: sorted(d for d, _ in per_ent[s[len(ENT):]][2]) for s, _, _ in targets
               if s.startswith(ENT) and s not in existing}
    # Generated pages outside this batch that link a renamed page are re-rendered with its new slug.
    for old in moved:
        linking = store.slug_subjects(src for src, _ in store.page_backlinks(old, max_back))
        relink |= {subj for subj in linking.values() if subj} - {s for s, _, _ in targets}
    plan.info = {"summary": sum(1 for w in plan.writes if w.category == "summary" and w.subject),
                 "entity": sum(1 for w in plan.writes if w.subject and w.subject.startswith(ENT)),
                 "documents": doc_ids, "subjects": [s for s, _, _ in targets], "relink": sorted(relink),
                 "created": created, "rendered": sorted(s[len(ENT):] for s, _, _ in targets if s.startswith(ENT)),
                 "moved": bool(moved)}
    return plan


def _see_also_sources(store: Store, slug: str, limit: int, relinked: dict[str, set[str]], fresh: set[str]
                      ) -> list[str]:
    """The first ``limit`` summary pages (by slug) that link to ``slug``: the stored links of
    those not rewritten in this batch (``relinked``: rewritten summary -> its new link targets)
    and ``fresh``, the rewritten ones that link to it now, so that the list is the same whether
    the batch held one document or many."""
    fetch = limit
    while True:
        stored = store.backlink_sources(slug, fetch, category="summary")
        kept = [s for s in stored if s not in relinked]
        if len(stored) < fetch or len(kept) >= limit:
            break
        fetch *= 2
    return sorted(set(kept) | (fresh - {slug}))[:limit]


def _summary_block(ctx: _Ctx, store: Store, d: Document, claims: Sequence[tuple[Edge, Provenance]], ents: list[str],
                   dropped: list[Edge], opposite: dict[str, str]) -> tuple[str, list[str]]:
    source = f" · source {code_span(d.source)}" if d.source else ""
    lines = [f"**Document:** {code_span(d.doc_id)} · version {d.version}{source} · {d.chunk_count} chunk"
             f"{'s' if d.chunk_count != 1 else ''}"]
    lines += _section("Key claims", [ctx.claim(e, p, d.doc_id) for e, p in claims], "_No relations were extracted._")
    ent_lines = [f"- {ctx.ent(n)} ({_md(ctx.nodes[n].type)})" for n in ents if n in ctx.nodes]
    lines += _section("Entities", ent_lines, "_No entities were extracted._")
    conflicts = _opposite_lines(ctx, (e for e, _ in claims), opposite)
    conflicts += [_dropped_line(ctx, e, d.doc_id, d.version, d.version - 1) for e in dropped]
    lines += _section("Contradictions", conflicts)
    return "\n".join(lines), [f"{d.doc_id}@v{d.version}"]


def _entity_block(ctx: _Ctx, store: Store, node: Node, rels: list[Edge], more_rels: bool,
                  ds: Sequence[tuple[str, int]], more_docs: bool, conflicts: list[Edge],
                  backs: Sequence[str],
                  opposite: dict[str, str]) -> tuple[str, list[str]]:
    head = f"**Type:** {_md(node.type)}"
    if node.aliases:
        head += " · **Aliases:** " + ", ".join(_md(a) for a in node.aliases[:10])
    lines = [head]
    rel_lines = [ctx.claim(e, ctx.prov.get(e.id), self_id=node.id) for e in rels]
    if more_rels:
        command = code_span('graphmem entity show "' + node.name + '"')
        rel_lines.append(f"- … more relations: {command}")
    lines += _section("Relations", rel_lines, "_No relations yet._")
    doc_lines = []
    for doc_id, version in ds:
        doc = ctx.docs.get(doc_id)
        name = _md(doc.title) if doc else "(deleted)"
        doc_lines.append(f"- {ctx.doc(doc_id)} — {name} ({code_span(doc_id)} v{version})")
    if more_docs:
        doc_lines.append("- … more documents name it")
    lines += _section("Documents", doc_lines, "_No document names it yet._")
    listed = {ctx.slugs.get(DOC + d) for d, _ in ds}
    see = [f"- [[{src}]]" for src in backs if src not in listed]
    lines += _section("See also", see)
    found = _opposite_lines(ctx, [*conflicts, *rels], opposite)
    for e in rels:  # a claim whose first source dropped it in a later version
        p = ctx.prov.get(e.id)
        latest = ctx.docs.get(p.doc_id) if p else None
        if p and latest and latest.version > p.version and not store.edges_supported_by([e.id], p.doc_id,
                                                                                           latest.version):
            found.append(_dropped_line(ctx, e, p.doc_id, latest.version, p.version))
    lines += _section("Contradictions", found)
    return "\n".join(lines), [f"{d}@v{v}" for d, v in ds]


def _wanted_slug(page: Page, subject: str, docs: dict[str, Document], nodes: dict[str, Node]) -> str | None:
    """The slug a generated page made by an older graphmem should move to, or None: a summary
    named after its document without the ``doc-`` prefix, or an entity page that got a
    ``-2`` suffix because a summary held the entity's slug. A page the agent named itself (a
    summary titled otherwise) keeps its name."""
    if page.subject != subject:
        return None
    if subject.startswith(DOC):
        d = docs.get(subject[len(DOC):])
        if (not SUMMARY_PREFIX or page.slug.startswith(SUMMARY_PREFIX) or d is None
                or page.title not in (d.title, f"{d.title} ({d.doc_id})")):
            return None
        return summary_slug_base(page.title, subject)
    node = nodes.get(subject[len(ENT):])
    m = _NUMBERED.match(page.slug)
    if node is None or m is None:
        return None
    base = _base_slug(node.name, subject)
    return base if m.group("base") == base else None


def _move_legacy_slugs(core: WikiCore, targets: list[tuple[str, str, str]], existing: dict[str, Page],
                       docs: dict[str, Document], ctx: _Ctx, planned: set[str]) -> dict[str, str]:
    """Give the pages of ``targets`` that an older graphmem named the current slugs (see
    :func:`_wanted_slug`); returns ``{old slug: new slug}`` and updates ``ctx.slugs``.
    Summaries come first in ``targets``, so an entity page can take the slug a summary leaves
    in the same batch; the old file and row go in the same operation (see WikiCore.apply)."""
    store = core.ctx.store
    moved: dict[str, str] = {}
    for subject, _, _ in targets:
        page = existing.get(subject)
        want = _wanted_slug(page, subject, docs, ctx.nodes) if page is not None else None
        if page is None or want is None or want == page.slug:
            continue
        holder = store.get_page(want)
        free = (want not in planned and (holder is None or holder.slug in moved)
                and not exists(core.dir, page_path(core.dir, page.category, want)))
        if not free:
            if not subject.startswith(DOC):
                continue  # the entity's slug is someone else's page: keep the numbered one
            want = _allocate(store, core.dir, page.category, want, planned, set(moved))
        planned.add(want)
        moved[page.slug] = want
        ctx.slugs[subject] = want
    return moved


def legacy_slug_marks(store: Store) -> list[str]:
    """Marks (``doc:<id>``, ``entity:<id>``) of generated pages whose slugs an older graphmem
    chose (see :func:`_wanted_slug`): ``wiki sync`` regenerates them, which moves them."""
    marks: list[str] = []
    if SUMMARY_PREFIX:
        pages = [p for p in store.list_pages("summary") if p.subject and p.subject.startswith(DOC)
                 and not p.slug.startswith(SUMMARY_PREFIX)]
        docs = store.latest_documents([p.subject[len(DOC):] for p in pages if p.subject])
        for p in pages:
            d = docs.get((p.subject or "")[len(DOC):])
            if d is not None and p.title in (d.title, f"{d.title} ({d.doc_id})"):
                marks.append(p.subject or "")
    numbered = [(p, m.group("base")) for p in store.list_pages("entity")
                if p.subject and p.subject.startswith(ENT) and (m := _NUMBERED.match(p.slug))]
    # only a -N its entity's name does not have (as _wanted_slug): "INC-2041", "HTTP 503" or "PostgreSQL 15"
    # end in digits themselves, and were marked, regenerated and left where they were at every sync
    nodes = store.get_nodes([(p.subject or "")[len(ENT):] for p, _ in numbered])
    numbered = [(p, base) for p, base in numbered
                if (node := nodes.get((p.subject or "")[len(ENT):])) is not None
                and _base_slug(node.name, p.subject or "") == base]
    holders = store.pages_by_slug(b for _, b in numbered)
    moving = set(marks)
    for p, base in numbered:
        holder = holders.get(base)
        if holder is None or holder.subject in moving:
            marks.append(p.subject or "")
    return marks

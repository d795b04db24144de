"""Which entities a round of generated pages renders a page for.

Most names a batch touches get no page (:func:`pageless`, found with a few bulk reads). When a
batch gives entities their first page, the summaries of older documents that name them are marked
and regenerated in a second round (they link the new pages now). Those documents bring their
other entities along; the round renders only the pages among them whose bytes can change
(:func:`relink_scope`), instead of every one (tests/test_wiki_relink_scope.py compares the two).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..models import Edge, Node
from ..store.rows import Claim
from ..text import normalize_name
from .subjects import DOC, ENT

if TYPE_CHECKING:
    from ..store import Store

__all__ = ["LastRound", "labelled", "pageless", "relink_scope"]


@dataclass
class LastRound:
    """What the round before a relink round did (it marked the round's summaries).

    ``created``: the entities it gave a page for the first time (or whose hand-written page it
    adopted), each with the documents its page lists; ``rendered``: every entity whose page it
    rendered, from the store as that round left it, with the slugs it allocated (None when
    several rounds marked the summaries: an earlier one did not know a later one's slugs)."""

    created: dict[str, set[str]] = field(default_factory=dict)
    rendered: set[str] | None = None


def relink_scope(store: Store, ent_ids: Sequence[str], explicit: set[str],
                 per_doc: dict[str, tuple[list[Claim], list[str], list[Edge]]], last: LastRound,
                 slugs: dict[str, str]) -> set[str]:
    """The entities of a relink round whose existing pages keep their bytes: they are left out.

    Such a round re-renders summaries whose documents a new page lists. An entity page these
    documents bring along reads, from the store, its own relations, documents and conflicts
    (unchanged since its last rendering: anything that changes them marks the entity itself), the
    slugs of the entities and documents it names, and the summaries that link to it ("See also").
    What the round before changed that such a page shows is therefore:

    * a new page for one of its neighbours (a name that becomes a link; any edge between them
      counts, shown or not), unless that round rendered the page itself, knowing the new slugs;
    * a summary of this round that starts to link it: a summary links an entity exactly when the
      entity has a page, and its stored links say whether it did before; it then joins the
      entity's "See also" unless the entity's page lists its document (known for the new pages).

    Every other page that exists keeps its bytes. Entities without a page still go through the
    usual checks (a page is made where one is due); entities marked themselves (``explicit``) are
    always rendered. ``slugs``: the slugs of the pages of ``ent_ids`` and of the documents (by subject)."""
    with_page = {n for n in ent_ids if ENT + n in slugs} - explicit
    if not with_page:
        return set()
    changing = {x for e in store.edges_of(last.created) for x in (e.source, e.target)}
    if last.rendered is not None:
        changing -= last.rendered
    for doc_id, (claims, ents, dropped) in per_doc.items():
        summary = slugs.get(DOC + doc_id)
        linked = {ln.target for ln in store.page_links_of(summary)} if summary else set()
        named = [*ents, *(x for e, _ in claims for x in (e.source, e.target)),
                 *(x for e in dropped for x in (e.source, e.target))]
        changing.update(n for n in named if n in with_page and slugs[ENT + n] not in linked
                        and doc_id not in last.created.get(n, ()))
    return with_page - changing


def labelled(store: Store, node_ids: Iterable[str]) -> dict[str, Node]:
    """Entities with their name and type only (no aliases or properties: a name shown as text, a
    summary's entity line, the checks of :func:`pageless`)."""
    return {n: Node(n, "entity", name, type_) for n, (name, type_) in store.node_labels(node_ids).items()}


def pageless(store: Store, ent_ids: Sequence[str], nodes: dict[str, Node], min_docs: int,
             with_page: dict[str, str]) -> set[str]:
    """The entities of ``ent_ids`` that get no page now, found with a few bulk reads instead of
    reading each one's relations and documents: no page yet, fewer evidence records than
    ``min_docs`` (so fewer documents), no relation, and no page a person wrote under its name.
    Most names a batch touches are such (named once, nothing linked); the others are decided
    one by one as before. ``with_page``: the slugs of the pages of ``ent_ids`` (by subject)."""
    fresh = [n for n in ent_ids if ENT + n not in with_page]
    if not fresh:
        return set()
    counts = store.count_provenance("node", fresh)
    few = [n for n in fresh if counts.get(n, 0) < min_docs]
    if not few:
        return set()
    linked = {x for e in store.edges_of(few) for x in (e.source, e.target)}
    alone = [n for n in few if n not in linked]
    names = {n: normalize_name(nodes[n].name) for n in alone}
    written = store.find_pages("entity", set(names.values()))
    return {n for n in alone if (p := written.get(names[n])) is None or p.subject is not None}

"""Which pages link to a page or discuss an entity, whichever way the link was written.

A link keeps its target as written (``wiki/markdown.py link_target``): ``[[dispatch-api]]``, ``[[Dispatch API]]``
(the page's title) or ``[[Dispatch]]`` (an alias in its front matter) all mean the same page, as they do in
Obsidian. These reads look for every form (:func:`link_forms`); lint resolves the same way.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..models import ENTITY, Node
from ..text import normalize_name
from .generate import ENT
from .markdown import link_forms, link_target
from .slugs import slugify

__all__ = ["LinkForms", "links_to", "pages_about_slugs", "resolve_link_targets"]


class LinkForms:
    """Every page's link forms (slug, title, aliases) -> its slug, kept while the store says nothing changed
    (its read stamp; PostgreSQL gives none, so there it is read each time). A wiki page view with one title
    or broken link read every page's forms: 0.5 s per view at 30,000 pages."""

    def __init__(self) -> None:
        self._stamp: object | None = None
        self._forms: dict[str, str] = {}

    def of(self, store: Any) -> dict[str, str]:
        stamp = store.read_stamp()
        if stamp is not None and stamp == self._stamp:
            return self._forms
        forms: dict[str, str] = {}
        for page in store.list_pages():
            for form in link_forms(page.slug, page.title, page.front_matter):
                forms.setdefault(form, page.slug)
        self._stamp, self._forms = stamp, forms
        return forms


def resolve_link_targets(store: Any, targets: Iterable[str], forms: LinkForms | None = None) -> dict[str, str]:
    """``{stored link target: slug of the page it means}`` for the targets that mean a page: a page's own slug
    first, then a page's title or alias (every page's are read, only when some target is no slug; ``forms``
    keeps them between calls), then an entity's other name when that entity has a page. Targets meaning no
    page are left out (broken links)."""
    wanted = set(targets)
    found = {t: t for t in store.pages_by_slug(sorted(wanted))}
    rest = wanted - found.keys()
    if not rest:
        return found
    by_form = (forms or LinkForms()).of(store)
    names: dict[str, list[str]] = {}
    for t in rest:
        if t in by_form:
            found[t] = by_form[t]
        else:
            names.setdefault(normalize_name(t), []).append(t)
    if names:
        nodes = store.find_nodes(ENTITY, list(names))
        subjects = store.pages_by_subject([ENT + nid for nid in nodes.values()])
        for norm, nid in nodes.items():
            about = subjects.get(ENT + nid)
            if about is not None:
                for t in names[norm]:
                    found[t] = about.slug
    return found


def links_to(store: Any, slug: str) -> list[tuple[str, int]]:
    """``(source slug, line)`` of the links to ``slug`` from other pages: by slug first (index order), then
    by its title or an alias."""
    page = store.pages_by_slug([slug]).get(slug)
    others = sorted(link_forms(slug, page.title, page.front_matter) - {slug}) if page else []
    taken = set(store.pages_by_slug(others)) if others else set()  # another page's own slug wins
    forms = [slug, *(f for f in others if f not in taken)]
    out: list[tuple[str, int]] = []
    seen: set[str] = set()
    for form in forms:
        for src, line in store.page_backlinks(form):
            if src not in seen and src != slug:
                seen.add(src)
                out.append((src, line))
    return out


def pages_about_slugs(store: Any, node: Node, limit: int) -> list[str]:
    """The entity's own page, then the pages linking to it by its page's slug, title or aliases, or by the
    slug or the written form of its name or an alias."""
    own = store.pages_by_subject([ENT + node.id]).get(ENT + node.id)
    names = [n for n in [node.name, *node.aliases] if any(ch.isalnum() for ch in n)]
    targets = {slugify(n) for n in names} | {link_target(n) for n in names}  # [[dispatch-api]], [[Dispatch API]]
    if own is not None:
        targets |= link_forms(own.slug, own.title, own.front_matter)
    return ([own.slug] if own else []) + [s for s in store.pages_linking_to(sorted(targets), limit)
                                          if not own or s != own.slug]

"""Indexing SKILL.md folders incrementally and linking skills to each other.

A build walks each folder for ``SKILL.md`` files, skips the ones whose size and mtime (then
hash) are unchanged, parses the rest, deletes skills whose file is gone, and recomputes the
skill-to-skill edges, writing only the differences. Everything is one transaction.

Edges (all rows of the shared ``edges`` table, between ``skill:`` nodes):

- ``related`` (weight 1.0, both directions): names listed under any related key, resolved in
  the skill's own collection first, then anywhere if unambiguous; the rest are reported.
- ``sibling`` (default 0.3): skills of one category; at most ``sibling_max`` per skill (the most
  similar ones when vectors exist), none for a category of one.
- ``similar`` (weight = cosine): the ``similar_top_k`` nearest skills above ``similar_min``.
- ``mentions`` (default 0.5): a skill's body names another skill — a multi-word name as a
  phrase (``excel-author``, "excel author") or any name in backticks.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..config_sections import SkillsConfig
from ..context import SKILLS_CHANGED
from ..errors import InvalidInput
from ..models import SKILL, Node
from ..text import normalize_name, query_words, short_id
from .files import FOLLOW_HINT, SKIP_DIRS, NotRegular, Skip, TooBig, find_skill_files, read_skill_file
from .index import VERSION_KEY, SkillIndex, collection_of, embed_text, node_id_for
from .parse import SkillDoc, name_key, parse_skill

if TYPE_CHECKING:
    from ..context import Context

__all__ = ["BuildResult", "build_skills", "bump_version", "find_skill_files", "compute_edges",
           "unresolved_related", "SKIP_DIRS", "FOLLOW_HINT", "max_skill_bytes"]

@dataclass
class BuildResult:
    """What a build did."""

    roots: list[str]
    scanned: int = 0
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: int = 0
    removed: list[str] = field(default_factory=list)
    edges_added: int = 0
    edges_removed: int = 0
    unresolved_related: dict[str, list[str]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)  # symlinks not followed, FIFOs and devices
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"roots": self.roots, "scanned": self.scanned, "added": len(self.added), "updated": len(self.updated),
                "unchanged": self.unchanged, "removed": len(self.removed), "edges_added": self.edges_added,
                "edges_removed": self.edges_removed, "unresolved_related": self.unresolved_related,
                "warnings": self.warnings, "skipped": [s.to_dict() for s in self.skipped],
                "seconds": round(self.seconds, 3)}


def _resolve_roots(dirs: Sequence[str | os.PathLike[str]]) -> list[Path]:
    if not dirs:
        raise InvalidInput("skills build: give at least one folder holding SKILL.md files")
    roots: list[Path] = []
    for d in dirs:
        p = Path(d).expanduser()
        if not p.exists():
            raise InvalidInput(f"skills folder {d} does not exist")
        if not p.is_dir():
            raise InvalidInput(f"skills folder {d} is not a folder (give the folder holding the skills)")
        p = p.resolve()
        if p not in roots:
            roots.append(p)
    return roots


def max_skill_bytes(cfg: SkillsConfig | Mapping[str, Any]) -> int:
    """``[skills] max_skill_kb`` in bytes (InvalidInput naming the key when it is not positive).

    Checked here, at build time, rather than when the knowledge base opens, so that a bad cap
    stops only the skills commands."""
    cap = cfg.max_skill_kb if isinstance(cfg, SkillsConfig) else cfg["max_skill_kb"]
    if isinstance(cap, bool) or not isinstance(cap, (int, float)) or not cap > 0 or cap == float("inf"):
        raise InvalidInput(f"config key 'skills.max_skill_kb' must be a positive number of KB, got {cap!r}")
    return int(cap * 1024)


def build_skills(ctx: Context, dirs: Sequence[str | os.PathLike[str]], *, prune: bool = True,
                 follow_symlinks: bool = False, on_progress: Callable[[int, int], None] | None = None,
                 on_stage: Callable[[str], None] | None = None, replace_all: bool = False) -> BuildResult:
    """Index the skills under ``dirs`` (see the module docstring). ``prune=False`` keeps skills
    whose file is gone. ``replace_all``: drop every skill first, in the same transaction (a rebuild:
    one that fails keeps the skills there were). ``on_progress(files read, files)`` while reading, then
    ``on_stage(what)`` before embedding and storing (most of the time of a big first build). Symlinks below ``dirs``
    are skipped and listed in ``skipped`` unless ``follow_symlinks``; a SKILL.md over
    ``[skills] max_skill_kb`` is not read (a warning names it; a version indexed before is kept)."""
    import time

    t0 = time.perf_counter()
    roots = _resolve_roots(dirs)
    store = ctx.store
    res = BuildResult([str(r) for r in roots])
    cfg = ctx.config.skills
    cap = max_skill_bytes(cfg)
    changed_docs: list[tuple[SkillDoc, str, str, int, int]] = []  # doc, root, path, size, mtime
    stat_only: list[tuple[str, int, int]] = []
    gone: list[tuple[str, str]] = []  # (skill id, node id)
    seen_ids: dict[str, str] = {}
    found_all: list[tuple[Path, str, Path]] = []
    # One skill folder copied into two roots (.agents/skills and .claude/skills are scanned together) is one
    # id twice. Failing the build for it left an agent with no skills at all; instead one copy is indexed and
    # the others are skipped with why: the copy of the root that indexed it already, else the first listed.
    # A skill indexed from a root outside this build stays that root's; one whose root lost it moves.
    copies: dict[str, list[tuple[Path, Path]]] = {}
    for root in roots:
        for sid, path in find_skill_files(root, follow_symlinks, res.skipped):
            copies.setdefault(sid, []).append((root, path))
    owners = {} if replace_all else store.skill_roots_of(list(copies))
    building = {str(r) for r in roots}
    for sid, found in copies.items():
        owner = owners.get(sid)
        if owner is not None and owner not in building:
            res.skipped += [Skip(str(path), f"skill id '{sid}' is already indexed from {owner}, which keeps it; "
                                            "build their common parent folder instead (or `graphmem skills "
                                            "rebuild` with this folder alone)") for _, path in found]
            continue
        keep = next((c for c in found if str(c[0]) == owner), found[0])
        res.skipped += [Skip(str(path), f"skill id '{sid}' is also under {keep[0]}, whose copy is indexed; "
                                        "build their common parent folder instead to index both")
                        for c_root, path in found if (c_root, path) != keep]
        seen_ids[sid] = str(keep[0])
        found_all.append((keep[0], sid, keep[1]))
    total = len(found_all)
    known = {str(r): {} if replace_all else store.skill_files(str(r)) for r in roots}
    for n, (root, sid, path) in enumerate(found_all, 1):
        res.scanned += 1
        if on_progress:  # every file, unchanged ones too: a rebuild of 1,600 skills must not look stuck
            on_progress(n, total)
        old = known[str(root)].get(sid)
        try:
            st = path.stat()
            if old is not None and old["size"] == st.st_size and old["mtime_ns"] == st.st_mtime_ns:
                res.unchanged += 1
                continue
            raw = read_skill_file(path, cap, follow_symlinks)
        except TooBig as big:
            kept = "; the version indexed before is kept" if old is not None else ""
            res.warnings.append(f"{path}: SKILL.md is {big.size / 1024:,.0f} KB, over skills.max_skill_kb "
                                f"({cap // 1024:,} KB); not read{kept}. Raise skills.max_skill_kb in config.toml "
                                "to index it")
            continue
        except NotRegular:
            res.skipped.append(Skip(str(path), "not a regular file; skipped"))
            continue
        except OSError as exc:
            res.warnings.append(f"{path}: cannot read ({exc.strerror}); skipped")
            continue
        if b"\x00" in raw[:8192]:  # an executable or an image named SKILL.md: no instructions for an agent
            kept = "; the version indexed before is kept" if old is not None else ""
            res.skipped.append(Skip(str(path), f"binary file (NUL bytes), not SKILL.md text; skipped{kept}"))
            continue
        doc = parse_skill(sid, raw, path.parent.name, collection_of(sid) or root.name)
        if old is not None and old["sha256"] == doc.sha256:
            stat_only.append((sid, st.st_size, st.st_mtime_ns))
            res.unchanged += 1
            continue
        res.warnings.extend(doc.warnings)
        changed_docs.append((doc, str(root), str(path), st.st_size, st.st_mtime_ns))
    if prune:
        for root in roots:
            for sid, row in known[str(root)].items():
                if sid not in seen_ids:
                    gone.append((sid, row["node_id"]))
    # Embed outside the transaction (one batched model call), store inside it.
    texts = [embed_text(d.name, d.description, d.tags, d.triggers) for d, *_ in changed_docs]
    if on_stage and (texts or gone):
        on_stage(f"embedding {len(texts)} skills and linking them" if texts else "removing skills and relinking")
    ctx.embeddings.prefetch(texts)
    now = ctx.now()
    try:
        with store.transaction():
            if replace_all:
                store.clear_skills()
                bump_version(store)
                store.append_event("skills.cleared", "skills", now, {"roots": [str(r) for r in roots]})
            for root in roots:
                store.add_skill_root(str(root), now)
            if gone:
                store.delete_skill_nodes([nid for _, nid in gone])
                res.removed = [sid for sid, _ in gone]
            for sid, size, mtime in stat_only:
                store.set_skill_stat(sid, size, mtime)
            existing = store.get_nodes([node_id_for(d.id) for d, *_ in changed_docs])
            for doc, root_s, path_s, size, mtime in changed_docs:
                nid = node_id_for(doc.id)
                props = {"skill_id": doc.id, "category": doc.category, "path": path_s}
                node = existing.get(nid)
                if node is None:
                    store.insert_node(Node(nid, SKILL, doc.name, "skill", properties=props, created_at=now,
                                           updated_at=now, manual=True), [])
                    res.added.append(doc.id)
                else:
                    node.name, node.properties, node.updated_at = doc.name, props, now
                    store.update_node(node)
                    res.updated.append(doc.id)
                store.set_skill_name(nid, doc.name, normalize_name(" ".join(query_words(doc.name, True))))
                store.upsert_skill({
                    "skill_id": doc.id, "node_id": nid, "root": root_s, "path": path_s, "name": doc.name,
                    "name_key": name_key(doc.name), "description": doc.description, "category": doc.category,
                    "tags": doc.tags, "triggers": doc.triggers, "related": doc.related, "body": doc.body,
                    "meta": {"front_matter": doc.front_matter, "warnings": doc.warnings}, "sha256": doc.sha256,
                    "size": size, "mtime_ns": mtime, "updated_at": now,
                })
            ctx.embeddings.embed_items("skill", [(node_id_for(d.id), t) for (d, *_), t in zip(changed_docs, texts)])
            if changed_docs or gone or not _has_version(ctx):
                _relink(ctx, res, {d.id for d, *_ in changed_docs}, {d.id: d.name for d, *_ in changed_docs},
                        now, cfg)
                bump_version(store)
            store.append_event("skills.built", ",".join(res.roots), now, {
                "added": len(res.added), "updated": len(res.updated), "removed": len(res.removed),
                "unchanged": res.unchanged, "edges_added": res.edges_added, "edges_removed": res.edges_removed})
    finally:
        ctx.embeddings.clear_prefetched()
    ctx.hooks.call(SKILLS_CHANGED)  # the skills face drops its cached index
    res.seconds = time.perf_counter() - t0
    return res


def bump_version(store: Any) -> None:
    """Mark the skill set changed (inside the changing transaction): every process's in-memory
    index reloads at its next query."""
    prev = store.get_meta(VERSION_KEY) or ""
    store.set_meta(VERSION_KEY, str(int(prev) + 1 if prev.isdigit() else 1))


def _has_version(ctx: Context) -> bool:
    return ctx.store.get_meta(VERSION_KEY) is not None


def _relink(ctx: Context, res: BuildResult, changed: set[str], changed_names: dict[str, str], now: str,
            cfg: SkillsConfig) -> None:
    """Recompute the skill edges and write the difference."""
    store = ctx.store
    idx = SkillIndex.load(ctx, "building")
    current = {(s, t, d): (w, eid) for s, t, d, w, eid in store.skill_edges()}
    old_mentions = {(s, t, d): w for (s, t, d), (w, _) in current.items() if t == "mentions"}
    want = compute_edges(idx, cfg)
    res.unresolved_related = unresolved_related(idx)
    # mentions: keep those of unchanged skills, rescan the bodies of changed ones and look for
    # the (possibly new) names of changed skills in every body.
    changed_nodes = {node_id_for(s) for s in changed}
    mention_w = float(cfg.mentions_weight)
    for s, t, d in old_mentions:
        if s not in changed_nodes and d not in changed_nodes and s in idx.by_node and d in idx.by_node:
            want[(s, t, d)] = mention_w
    if len(changed) > max(50, len(idx) // 4):
        scan_ids = [e.id for e in idx.entries]  # most things changed: scan everything once
    else:
        scan = set(changed)
        for sid in changed:
            words = name_key(changed_names[sid]).split()
            scan.update(store.skills_with_phrase_in_body(words))  # candidates; the scan verifies
        scan_ids = sorted(scan)
    bodies = store.skill_bodies(scan_ids)
    for sid, body in bodies.items():
        src = idx.entries[idx.by_id[sid]]
        for j in mentioned_skills(body, idx, src):
            dst = idx.entries[j]
            want[(src.node_id, "mentions", dst.node_id)] = mention_w
    add, remove, reweight = [], [], []
    for key, w in want.items():
        have = current.get(key)
        if have is None:
            add.append((short_id("r_", key[0], key[1], key[2]), key[0], key[1], key[2], w))
        elif abs(have[0] - w) > 1e-6:
            reweight.append((have[1], w))
    for key, (_, eid) in current.items():
        if key not in want:
            remove.append(eid)
    store.apply_skill_edges(add, remove, reweight, now)
    res.edges_added, res.edges_removed = len(add), len(remove)


def _resolve(name: str, src: int, idx: SkillIndex) -> int | None:
    """The skill a name refers to from skill ``src``: same collection first, then a unique match."""
    cands = idx.names.get(name_key(name), [])
    cands = [c for c in cands if c != src]
    if not cands:
        return None
    home = collection_of(idx.entries[src].id)
    same = [c for c in cands if collection_of(idx.entries[c].id) == home]
    if same:
        return same[0]
    return cands[0] if len(cands) == 1 else None


_BACKTICK = re.compile(r"`([^`\n]{1,80})`")
_WORDS = re.compile(r"[0-9a-z]+")


def mentioned_skills(body: str, idx: SkillIndex, src: Any) -> set[int]:
    """Skills a body names: multi-word names as a phrase, any name inside backticks."""
    me = idx.by_id[src.id]
    out: set[int] = set()
    lower = body.lower()
    for m in _BACKTICK.finditer(lower):
        inner = m.group(1).strip().lstrip("/$@")
        j = _resolve(inner, me, idx) if name_key(inner) in idx.names else None
        if j is not None:
            out.add(j)
    words = _WORDS.findall(lower)
    lengths = idx.multiword_lengths
    names = idx.names
    for i, w in enumerate(words):
        for n in lengths.get(w, ()):
            if i + n > len(words):
                break  # (sorted lengths) fewer words left than the name has
            key = " ".join(words[i : i + n])
            if key in names:  # a multi-word name (its first word is w, so it has n words)
                j = _resolve(key, me, idx)
                if j is not None:
                    out.add(j)
    out.discard(me)
    return out


def unresolved_related(idx: SkillIndex) -> dict[str, list[str]]:
    """Related names, per skill, that resolve to no other indexed skill (naming itself aside)."""
    out: dict[str, list[str]] = {}
    for i, e in enumerate(idx.entries):
        miss = [n for n in e.related if _resolve(n, i, idx) is None and name_key(n) != e.name_key]
        if miss:
            out[e.id] = miss
    return out


def compute_edges(idx: SkillIndex, cfg: SkillsConfig) -> dict[tuple[str, str, str], float]:
    """related, sibling and similar edges of the whole skill set."""
    want: dict[tuple[str, str, str], float] = {}
    ents = idx.entries
    for i, e in enumerate(ents):
        for name in e.related:
            j = _resolve(name, i, idx)
            if j is None:
                continue
            a, b = e.node_id, ents[j].node_id
            want[(a, "related", b)] = float(cfg.related_weight)
            want[(b, "related", a)] = float(cfg.related_weight)
    vecs = idx.vectors
    # sibling: same category, capped per skill (most similar first when vectors exist)
    groups: dict[str, list[int]] = defaultdict(list)
    for i, e in enumerate(ents):
        if e.category:
            groups[e.category].append(i)
    cap = int(cfg.sibling_max)
    sib_w = float(cfg.sibling_weight)
    for members in groups.values():
        if len(members) < 2 or cap <= 0:
            continue
        if len(members) - 1 <= cap:
            picks = {i: [j for j in members if j != i] for i in members}
        elif vecs is not None:
            sub = vecs[members]
            sims = sub @ sub.T
            np.fill_diagonal(sims, -np.inf)
            top = np.argsort(-sims, axis=1)[:, :cap]
            picks = {members[r]: [members[c] for c in top[r]] for r in range(len(members))}
        else:  # no vectors: the nearest neighbours in id order
            order = sorted(members, key=lambda i: ents[i].id)
            pos = {i: p for p, i in enumerate(order)}
            half = cap // 2 + 1
            picks = {i: [order[q] for q in range(max(0, pos[i] - half), min(len(order), pos[i] + half + 1))
                         if order[q] != i][:cap] for i in members}
        for i, js in picks.items():
            for j in js:
                a, b = sorted((ents[i].node_id, ents[j].node_id))
                want[(a, "sibling", b)] = sib_w
    # similar: top-k nearest above a threshold, stored once per pair
    k = int(cfg.similar_top_k)
    if vecs is not None and k > 0 and len(ents) > 1:
        lo = float(cfg.similar_min)
        for start in range(0, len(ents), 1024):
            block = vecs[start : start + 1024] @ vecs.T
            for r in range(block.shape[0]):
                block[r, start + r] = -np.inf
            kk = min(k, len(ents) - 1)
            top = np.argpartition(-block, kk - 1, axis=1)[:, :kk]
            for r in range(block.shape[0]):
                i = start + r
                for j in top[r]:
                    s = float(block[r, j])
                    if s >= lo:
                        a, b = sorted((ents[i].node_id, ents[int(j)].node_id))
                        key = (a, "similar", b)
                        want[key] = max(want.get(key, 0.0), round(s, 4))
    return want

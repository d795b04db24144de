"""The skills face: SKILL.md collections as nodes of the graph, retrieved a few at a time."""

from __future__ import annotations

import json
import os
import threading
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput, NotFound
from ..skills.build import BuildResult, build_skills, max_skill_bytes, unresolved_related
from ..skills.files import NotRegular, TooBig, read_skill_file
from ..skills.index import VERSION_KEY, SkillIndex, embed_text
from ..skills.prompt import PromptBlock, render_block
from ..skills.retrieve import SKILL_PRESETS, SkillHit, SkillSearchConfig, retrieve_skills
from ..validate import checked_inputs, path_list
from .results import SkillDetail, SkillLink, SkillNeighbours, SkillsInfo

if TYPE_CHECKING:
    from .host import FaceHost

__all__ = ["Skills"]


@checked_inputs("skills")
class Skills:
    """``kb.skills``: build an index over SKILL.md folders, retrieve the skills a message needs,
    render them for a prompt, show one in full."""

    def __init__(self, kb: FaceHost) -> None:
        self._kb = kb
        self._index: SkillIndex | None = None
        self._lock = threading.Lock()
        kb.embeddings.register_source("skill", self._to_embed)

    # -- indexing ---------------------------------------------------------------------------

    def build(self, dirs: Sequence[str | os.PathLike[str]] | str | os.PathLike[str], *, prune: bool = True,
              follow_symlinks: bool = False,
              on_progress: Callable[[int, int], None] | None = None,
              on_stage: Callable[[str], None] | None = None) -> BuildResult:
        """Index every SKILL.md under ``dirs`` incrementally (unchanged files are skipped,
        changed ones updated, deleted ones removed unless ``prune=False``) and relink.
        ``on_progress(read, files)`` and ``on_stage(what)`` report the work as it goes.
        Symlinked SKILL.md files and folders below ``dirs`` are skipped (``result.skipped`` says
        so) unless ``follow_symlinks``; a SKILL.md over ``[skills] max_skill_kb`` is not read.
        ``dirs``: one folder or a list of them."""
        return build_skills(self._kb.ctx, path_list("skills.build", "dirs", dirs), prune=prune,
                            follow_symlinks=follow_symlinks, on_progress=on_progress, on_stage=on_stage)

    def rebuild(self, dirs: Sequence[str | os.PathLike[str]] | str | os.PathLike[str] = (), *,
                follow_symlinks: bool = False,
                on_progress: Callable[[int, int], None] | None = None,
                on_stage: Callable[[str], None] | None = None) -> BuildResult:
        """Drop every skill and index again from ``dirs`` (default: the folders built before)."""
        store = self._kb.store
        roots = path_list("skills.rebuild", "dirs", dirs) or store.skill_root_list()
        if not roots:
            raise InvalidInput("no skills folder to rebuild from; run `graphmem skills build DIR` first")
        max_skill_bytes(self._kb.config.skills)  # check before deleting anything
        for r in roots:
            if not Path(r).is_dir():
                raise InvalidInput(f"skills folder {r} does not exist; rebuild with the folders you have")
        self.invalidate()
        return build_skills(self._kb.ctx, roots, follow_symlinks=follow_symlinks, on_progress=on_progress,
                            on_stage=on_stage, replace_all=True)

    def invalidate(self) -> None:
        """Forget the in-memory index (the next query reloads it)."""
        with self._lock:
            self._index = None

    def index(self) -> SkillIndex:
        """The in-memory index at the store's current skills version."""
        version = self._kb.store.get_meta(VERSION_KEY) or ""
        with self._lock:
            if self._index is None or self._index.version != version:
                self._index = SkillIndex.load(self._kb.ctx, version)
            return self._index

    def _to_embed(self, after: int, limit: int) -> list[tuple[int, str, str]]:
        rows = self._kb.store.skill_rows_after(after, limit)
        return [(r["rid"], r["node_id"], embed_text(r["name"], r["description"], json.loads(r["tags"]),
                                                    json.loads(r["triggers"]))) for r in rows]

    # -- retrieval --------------------------------------------------------------------------

    def retrieve(self, message: str, top_k: int | None = None, *, strategy: str | None = None,
                 preset: str | None = None, config: Mapping[str, Any] | SkillSearchConfig | None = None
                 ) -> list[SkillHit]:
        """The skills ``message`` needs (default 8), best first; with few skills, all of them."""
        if not isinstance(message, str) or not message.strip():
            raise InvalidInput("message: give the text to find skills for (a non-empty string)")
        scfg = self._kb.config.skills
        k = scfg.top_k if top_k is None else top_k
        if not isinstance(k, int) or isinstance(k, bool) or k < 1:
            raise InvalidInput(f"top_k must be a positive integer, got {top_k!r}")
        if isinstance(config, SkillSearchConfig):
            cfg = config
        else:
            if config is not None and not isinstance(config, Mapping):
                raise InvalidInput(f"config: expected a mapping of skills search settings or a SkillSearchConfig, "
                                   f"got {type(config).__name__}")
            name = preset or "default"
            if not isinstance(name, str) or name not in SKILL_PRESETS:
                raise InvalidInput(f"unknown skills preset {name!r}; presets: {', '.join(SKILL_PRESETS)}")
            cfg = SKILL_PRESETS[name].replace(**dict(config or {}))
        if strategy is not None:
            cfg = cfg.replace(strategy=strategy)
        if cfg.strategy not in ("ppr", "bfs", "none"):
            raise InvalidInput(f"strategy '{cfg.strategy}': choose ppr, bfs or none")
        return retrieve_skills(self._kb.ctx, self.index(), message, k, cfg, float(scfg.return_all_factor))

    def prompt(self, message: str, top_k: int | None = None, fmt: str = "markdown", **kwargs: Any) -> PromptBlock:
        """The prompt block (markdown, hermes or claude) of the skills ``message`` needs."""
        hits = self.retrieve(message, top_k, **kwargs)
        return render_block(hits, fmt, query=message)

    def prompt_all(self, fmt: str = "markdown") -> PromptBlock:
        """The block listing every skill (what agents inject today), for comparison."""
        return render_block(self.index().entries, fmt)

    def write_claude_context(self, message: str, path: str | os.PathLike[str], top_k: int | None = None
                             ) -> PromptBlock:
        """Write the Claude Code context file for ``message`` to ``path`` (e.g.
        ``.claude/skills-context.md``, imported from CLAUDE.md with ``@.claude/skills-context.md``)."""
        return self.write_block(self.prompt(message, top_k, "claude"), path)

    @staticmethod
    def write_block(block: PromptBlock, path: str | os.PathLike[str]) -> PromptBlock:
        """Write a prompt block to a file atomically (folders created)."""
        target = Path(path)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(f".{target.name}.tmp")
            tmp.write_text(block.text, encoding="utf-8")
            tmp.replace(target)
        except OSError as exc:
            raise InvalidInput(f"cannot write {target}: {exc.strerror}") from None
        return block

    # -- reading ----------------------------------------------------------------------------

    def get(self, skill_id: str) -> SkillDetail:
        """One skill with its front matter and body."""
        if not isinstance(skill_id, str) or not skill_id.strip():
            raise InvalidInput(f"skill id: expected a skill's id or name (a non-empty string), got {skill_id!r}")
        row = self._kb.store.get_skill_row(skill_id)
        if row is None:
            idx = self.index()
            by_name = [e.id for e in idx.entries if e.name == skill_id]
            if len(by_name) == 1:
                row = self._kb.store.get_skill_row(by_name[0])
            elif by_name:
                raise InvalidInput(f"skill name '{skill_id}' is ambiguous: {', '.join(sorted(by_name))}; "
                                   "use one of these ids")
        if row is None:
            raise NotFound(f"no skill '{skill_id}'; list them with `graphmem skills info` or search with "
                           "`graphmem skills query TEXT`")
        meta = json.loads(row["meta"])
        return SkillDetail(row["skill_id"], row["name"], row["description"], row["category"], json.loads(row["tags"]),
                           json.loads(row["triggers"]), json.loads(row["related"]), row["path"], row["root"],
                           meta.get("front_matter", {}), meta.get("warnings", []), row["body"], row["sha256"],
                           row["updated_at"])

    def show(self, skill_id: str) -> str:
        """The full SKILL.md text from disk, or the stored copy when the file is gone, is now a
        symlink (never read through) or is over ``[skills] max_skill_kb``."""
        skill = self.get(skill_id)
        try:
            raw = read_skill_file(Path(skill.path), max_skill_bytes(self._kb.config.skills))
            return raw.decode("utf-8", errors="replace")
        except (OSError, TooBig, NotRegular):
            fm = json.dumps(skill.front_matter, ensure_ascii=False)
            return f"---\n# (file not readable; stored copy)\n{fm}\n---\n{skill.body}"

    def neighbours(self, skill_id: str) -> SkillNeighbours:
        """A skill and its linked skills by edge type (strongest first)."""
        if not isinstance(skill_id, str) or not skill_id.strip():
            raise InvalidInput(f"skill id: expected a skill's id or name (a non-empty string), got {skill_id!r}")
        idx = self.index()
        i = idx.by_id.get(skill_id)
        if i is None:
            skill_id = self.get(skill_id).id  # by name, or NotFound
            i = idx.by_id[skill_id]
        out: dict[str, list[SkillLink]] = {}
        for j, w, typ in sorted(idx.adjacency.get(i, ()), key=lambda t: (t[2], -t[1], idx.entries[t[0]].id)):
            e = idx.entries[j]
            out.setdefault(typ, []).append(SkillLink(e.id, e.name, round(w, 4)))
        e = idx.entries[i]
        return SkillNeighbours(e.id, e.name, e.category, out)

    def info(self) -> SkillsInfo:
        """Counts, categories, edges by type and related names that name no skill."""
        idx = self.index()
        edges = Counter(t for s, t, d, _, _ in self._kb.store.skill_edges())
        cats = Counter(e.category for e in idx.entries)
        return SkillsInfo(len(idx), self._kb.store.skill_root_list(), dict(cats.most_common()), dict(edges),
                          unresolved_related(idx), idx.vectors is not None)

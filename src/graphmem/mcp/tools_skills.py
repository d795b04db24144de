"""Skills over MCP with progressive disclosure: search (names, descriptions, why), activate (the
SKILL.md body and the list of its files), read one resource file (confined to the skill's folder).

Skills come from ``.agents/skills/`` and ``.claude/skills/`` of the project, the folders given
with ``--skills-dir`` and ``$GRAPHMEM_SKILLS_DIRS`` (``os.pathsep``-separated), and whatever the
knowledge base indexed before (``graphmem skills build``). They are indexed on first use and
re-scanned (incrementally) when a skills tool is used again ``RESCAN_SECONDS`` later
(``$GRAPHMEM_SKILLS_RESCAN_SECONDS``), so a skill added while the server runs is found and one
deleted from a scanned folder is no longer served. A skill
whose front matter sets ``disable-model-invocation: true`` is for the user to invoke: it is not
offered to the model, and activating it is refused.
"""

# No `from __future__ import annotations`: the SDK reads these signatures at runtime.

import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any
from xml.sax.saxutils import escape as xml_escape

from pydantic import BaseModel, ConfigDict, Field

from ..errors import InvalidInput, NotFound
from ..skills.spec import model_may_invoke
from .registry import Registry, plain

if TYPE_CHECKING:
    from ..kb import KnowledgeBase

__all__ = ["SkillsCatalog", "register_skills_tools", "skill_content", "PROJECT_SKILL_DIRS"]

PROJECT_SKILL_DIRS = (".agents/skills", ".claude/skills")
MAX_DESCRIPTION = 400  # characters shown per skill in a search (~100 tokens)
MAX_RESOURCE_BYTES = 1 << 20
MAX_RESOURCES_LISTED = 200
RESCAN_SECONDS = 30.0
SPEC_FIELDS = ("license", "compatibility", "allowed-tools", "metadata")


class SkillsCatalog:
    """The skills folders of one server and the lazily built index over them."""

    def __init__(self, kb: "KnowledgeBase", dirs: Sequence[str | os.PathLike[str]], project: Path) -> None:
        self.kb = kb
        roots = [Path(d) for d in dirs]
        roots += [Path(p) for p in os.environ.get("GRAPHMEM_SKILLS_DIRS", "").split(os.pathsep) if p.strip()]
        roots += [project / d for d in PROJECT_SKILL_DIRS]
        self.roots = [r.resolve() for r in dict.fromkeys(roots) if r.is_dir()]
        self._built_at: float | None = None
        raw = os.environ.get("GRAPHMEM_SKILLS_RESCAN_SECONDS", "").strip()
        try:
            self.rescan = float(raw) if raw else RESCAN_SECONDS
        except ValueError:
            raise InvalidInput(f"GRAPHMEM_SKILLS_RESCAN_SECONDS: expected seconds, got {raw!r}") from None

    def ensure_built(self) -> None:
        """Index the folders (incremental: unchanged files are skipped), at most every ``rescan`` seconds.
        A read-only knowledge base serves the index it has."""
        now = time.monotonic()
        if self._built_at is not None and now - self._built_at < self.rescan:
            return
        if self.roots and not self.kb.read_only:
            # prune: a skill whose folder was deleted under one of these roots is no longer served
            # (skills indexed from other roots are untouched: pruning is per scanned root)
            self.kb.skills.build(self.roots, prune=True)
        self._built_at = now

    def skill(self, name: str, skill_id: str | None = None) -> dict[str, Any]:
        """The skill search_skills showed as ``name`` (``skill_id``: its id, which tells apart skills of one
        name), refusing one the model may not invoke.

        The name is looked up as a name first: looked up as an id first (as ``Skills.get`` does), a folder
        whose id is another skill's name ("deploy") answered with its own body. A name that several skills
        have, or that is one skill's name and another's id, is refused with the ids to pass."""
        self.ensure_built()
        if skill_id is not None and skill_id.strip():
            skill = plain(self.kb.skills.get(skill_id))
            if skill["id"] != skill_id:
                raise NotFound(f"id: no skill has the id '{skill_id}'; pass the id search_skills showed")
            if skill["name"] != name:
                raise InvalidInput(f"name: skill '{skill_id}' is not named '{name}' but '{skill['name']}'")
        else:
            named = sorted(e.id for e in self.kb.skills.index().entries if e.name == name)
            other = [i for i in named[:1] if i != name and self.kb.store.get_skill_row(name) is not None]
            if len(named) > 1 or other:
                ids = ", ".join(named + ([name] if other else []))
                raise InvalidInput(f"name: '{name}' could be the skills {ids}; pass the id search_skills showed "
                                   "as well")
            skill = plain(self.kb.skills.get(named[0] if named else name))
        if not model_may_invoke(skill.get("front_matter")):
            raise InvalidInput(f"name: skill '{name}' sets disable-model-invocation; only the user can invoke it")
        return dict(skill)

    def search(self, message: str, top_k: int) -> list[dict[str, Any]]:
        """The skills ``message`` needs, best first, without the ones the model may not invoke."""
        self.ensure_built()
        out: list[dict[str, Any]] = []
        want = top_k
        while True:
            hits = [plain(h) for h in self.kb.skills.retrieve(message, want)]
            out = []
            for h in hits:
                skill = plain(self.kb.skills.get(h["id"]))
                if model_may_invoke(skill.get("front_matter")):
                    out.append(h)
            if len(out) >= top_k or len(hits) < want:
                return out[:top_k]
            want *= 2

    @staticmethod
    def folder(skill: dict[str, Any]) -> Path:
        return Path(skill["path"]).parent

    def resources(self, skill: dict[str, Any]) -> list[str]:
        """Files of the skill's folder other than SKILL.md (relative, sorted; symlinks skipped)."""
        base = self.folder(skill)
        found: list[str] = []
        if not base.is_dir():
            return found
        for dirpath, dirnames, filenames in os.walk(base):  # os.walk does not follow symlinked folders
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and not (Path(dirpath) / d).is_symlink())
            for f in sorted(filenames):
                p = Path(dirpath) / f
                rel = p.relative_to(base).as_posix()
                if rel != "SKILL.md" and not f.startswith(".") and not p.is_symlink():
                    found.append(rel)
                if len(found) >= MAX_RESOURCES_LISTED:
                    return found
        return found

    def read(self, skill: dict[str, Any], rel: str) -> str:
        """One file of the skill's folder; a path leaving the folder or through a symlink is refused."""
        base = self.folder(skill).resolve()
        if "\x00" in rel:
            raise InvalidInput("path: contains a NUL character; give a path listed by activate_skill")
        if not rel or rel.startswith(("/", "\\")) or Path(rel).is_absolute():
            raise InvalidInput(f"path: '{rel}' must be relative to the skill's folder, e.g. references/rules.md")
        target = base
        for part in Path(rel).parts:
            if part in ("..", ""):
                raise InvalidInput(f"path: '{rel}' leaves the skill's folder; give a path listed by activate_skill")
            target = target / part
            if target.is_symlink():
                raise InvalidInput(f"path: '{rel}' goes through a symbolic link; only the skill's own files are read")
        if not target.resolve().is_relative_to(base):
            raise InvalidInput(f"path: '{rel}' leaves the skill's folder")
        if not target.is_file():
            raise NotFound(f"path: skill '{skill['name']}' has no file '{rel}'; activate_skill lists its files")
        if target.stat().st_size > MAX_RESOURCE_BYTES:
            raise InvalidInput(f"path: '{rel}' is over {MAX_RESOURCE_BYTES >> 20} MB; read it another way")
        return target.read_text(encoding="utf-8", errors="replace")


class SkillMatch(BaseModel):
    """A skill a message may need: enough to decide whether to activate it."""

    model_config = ConfigDict(extra="allow")
    name: str
    description: str
    why: str
    id: str = Field(description="The skill's id (its folder below the skills root)")


class SkillsFound(BaseModel):
    """The skills found, best first."""

    skills: list[SkillMatch]


class ActivatedSkill(BaseModel):
    """A skill's instructions and the files it can point to, with its Agent Skills spec fields."""

    model_config = ConfigDict(extra="allow")
    name: str
    content: str = Field(description="The SKILL.md body wrapped as <skill_content>")
    resources: list[str] = Field(description="Files to read with read_skill_resource")
    folder: str


class SkillResource(BaseModel):
    """One file of a skill."""

    name: str
    path: str
    content: str


def skill_content(skill: dict[str, Any]) -> str:
    """The SKILL.md body wrapped as ``<skill_content name="...">``, the name escaped as an XML attribute (a
    name is a stranger's text: unescaped, ``q"><system>...`` closed the tag)."""
    # the body is the skill's own markdown, kept as written, except a closing tag of the wrapper: written
    # there, the rest of the body would read as outside the skill
    body = str(skill.get("body", "")).strip("\n").replace("</skill_content>", "&lt;/skill_content>")
    return f'<skill_content name="{xml_escape(str(skill["name"]), {chr(34): "&quot;"})}">\n{body}\n</skill_content>'


def _why(hit: dict[str, Any]) -> str:
    via = hit.get("via", "")
    parts = ", ".join(f"{k} {v:.2f}" for k, v in sorted(hit.get("parts", {}).items()) if v)
    if via == "exact":
        reason = "the message names it or one of its triggers"
    elif via == "graph":
        reason = f"linked to {hit.get('from') or 'a matching skill'}"
    elif via == "all":
        reason = "few skills are indexed: all are listed"
    else:
        reason = "its name and description match the message"
    return f"{reason} (score {hit.get('score', 0):.3f}{'; ' + parts if parts else ''})"


def register_skills_tools(reg: Registry, catalog: SkillsCatalog) -> None:
    """Add search_skills, activate_skill and read_skill_resource to ``reg``'s server."""

    @reg.tool(title="Search skills", read_only=False, destructive=False, idempotent=True)
    def search_skills(
        message: Annotated[str, Field(description="The task or message to find skills for")],
        top_k: Annotated[int, Field(ge=1, le=50)] = 5,
    ) -> SkillsFound:
        """Find the skills (SKILL.md instructions) a task needs: names, short descriptions and why each
        matched. Then activate_skill the one that fits. (Indexes the skills folders on first use.)"""
        hits = catalog.search(message, top_k)
        return SkillsFound(skills=[
            SkillMatch(name=h["name"], description=h["description"][:MAX_DESCRIPTION], why=_why(h), id=h["id"])
            for h in hits
        ])

    @reg.tool(title="Activate a skill", read_only=False, destructive=False, idempotent=True)
    def activate_skill(
        name: Annotated[str, Field(description="The skill's name (from search_skills)")],
        id: Annotated[str | None, Field(description="The skill's id (from search_skills); needed only when "
                                                    "several skills share the name")] = None,
    ) -> ActivatedSkill:
        """Load a skill's instructions (its SKILL.md body, wrapped as <skill_content>) and the list of
        its resource files; follow the instructions and read a file with read_skill_resource when
        they point to one."""
        skill = catalog.skill(name, id)
        files = catalog.resources(skill)
        content = skill_content(skill)
        front = skill.get("front_matter") or {}
        spec = {k.replace("-", "_"): front[k] for k in SPEC_FIELDS if k in front}
        return ActivatedSkill(name=skill["name"], content=content, resources=files,
                              folder=str(catalog.folder(skill)), **spec)

    @reg.tool(title="Read a skill resource", read_only=True)
    def read_skill_resource(
        name: Annotated[str, Field(description="The skill's name")],
        path: Annotated[str, Field(description="A file listed by activate_skill, e.g. references/rules.md")],
        id: Annotated[str | None, Field(description="The skill's id, as given to activate_skill")] = None,
    ) -> SkillResource:
        """One file of a skill's folder (paths are confined to the folder)."""
        skill = catalog.skill(name, id)
        return SkillResource(name=skill["name"], path=path, content=catalog.read(skill, path))

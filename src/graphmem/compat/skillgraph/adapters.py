"""SkillGraph's framework adapters: the prompt block of the skills a message needs.

    # from skillgraph.adapters import HermesAdapter, ClaudeCodeAdapter, GenericAdapter
    from graphmem.compat.skillgraph.adapters import HermesAdapter, ClaudeCodeAdapter, GenericAdapter

    adapter = HermesAdapter(skills_dir="~/.hermes/skills", backend="ollama")
    prompt = adapter.build_prompt(user_message="generate a diagram")   # <available_skills> block

The index is built on first use (as the seed's was) and kept incremental in the knowledge
base (``home=``, else ``$GRAPHMEM_HOME``, else ``./.graphmem``). Blocks are graphmem's renderings:
Hermes' ``<available_skills>`` block, Claude Code's context file, and markdown for the rest.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ...errors import InvalidInput
from . import SkillEntry, SkillGraph

__all__ = ["BaseAdapter", "HermesAdapter", "ClaudeCodeAdapter", "GenericAdapter"]


class BaseAdapter:
    """What every adapter does: find the framework's skills folder, retrieve, render."""

    framework_name = "base"
    prompt_format = "markdown"

    def __init__(self, skills_dir: str | os.PathLike[str] | None = None, backend: str = "local", top_k: int = 8,
                 *, home: str | os.PathLike[str] | None = None, **skillgraph_kwargs: Any) -> None:
        self.top_k = top_k
        self._skills_dir = skills_dir
        self._backend = backend
        self._home = home
        self._kwargs = skillgraph_kwargs
        self._graph: SkillGraph | None = None

    def get_skills_dir(self) -> Path:
        """Where this framework keeps its SKILL.md folders."""
        raise NotImplementedError

    @property
    def graph(self) -> SkillGraph:
        """The SkillGraph behind the adapter, built on first use."""
        if self._graph is None:
            skills_dir = self._skills_dir if self._skills_dir is not None else self.get_skills_dir()
            self._graph = SkillGraph(skills_dir, self._backend, home=self._home, **self._kwargs)
            self._graph.build()
        return self._graph

    def build_prompt(self, user_message: str, top_k: int | None = None) -> str:
        """The prompt fragment listing the skills ``user_message`` needs ('' when none are indexed)."""
        return self.graph.prompt(user_message, top_k or self.top_k, self.prompt_format)

    def retrieve(self, user_message: str, top_k: int | None = None) -> list[SkillEntry]:
        """The skills ``user_message`` needs, without rendering."""
        return self.graph.retrieve(user_message, top_k or self.top_k)

    @property
    def stats(self) -> dict[str, Any]:
        """The index's counts (see :attr:`SkillGraph.stats`)."""
        return self.graph.stats

    def close(self) -> None:
        """Close the knowledge base, if it was opened."""
        if self._graph is not None:
            self._graph.close()


class HermesAdapter(BaseAdapter):
    """Hermes Agent: skills in ``$HERMES_HOME/skills`` (default ``~/.hermes/skills``); the block is
    Hermes' ``<available_skills>`` list, with only the skills the message needs."""

    framework_name = "hermes"
    prompt_format = "hermes"

    def get_skills_dir(self) -> Path:
        return Path(os.environ.get("HERMES_HOME") or Path.home() / ".hermes") / "skills"


class ClaudeCodeAdapter(BaseAdapter):
    """Claude Code: skills in ``./.claude/skills``; the block is the context file Claude Code
    imports (``@.claude/skills-context.md`` from CLAUDE.md)."""

    framework_name = "claude-code"
    prompt_format = "claude"

    def get_skills_dir(self) -> Path:
        return Path.cwd() / ".claude" / "skills"

    def write_context_file(self, user_message: str, top_k: int | None = None,
                           output_path: str | os.PathLike[str] | None = None) -> Path:
        """Write the block for ``user_message`` to ``output_path`` (default
        ``./.claude/skills-context.md``); returns the path."""
        target = Path(output_path) if output_path is not None else Path.cwd() / ".claude" / "skills-context.md"
        self.graph.kb.skills.write_claude_context(user_message, target, top_k or self.top_k)
        return target


class GenericAdapter(BaseAdapter):
    """Any SKILL.md layout: ``skills_dir`` is required; the block is markdown."""

    framework_name = "generic"

    def __init__(self, skills_dir: str | os.PathLike[str], backend: str = "local", top_k: int = 8,
                 external_dirs: list[str | os.PathLike[str]] | None = None, **kwargs: Any) -> None:
        if skills_dir is None:
            raise InvalidInput("skills_dir: GenericAdapter needs the folder of your SKILL.md files")
        super().__init__(skills_dir, backend, top_k, external_dirs=external_dirs, **kwargs)

    def get_skills_dir(self) -> Path:
        return Path(self._skills_dir).expanduser()  # type: ignore[arg-type]

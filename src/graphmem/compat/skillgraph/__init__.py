"""SkillGraph's library API over a graphmem knowledge base.

The seed's example runs after one import change::

    # from skillgraph import SkillGraph
    from graphmem.compat.skillgraph import SkillGraph

    sg = SkillGraph(skills_dir="~/.hermes/skills", backend="ollama")
    sg.build()
    for skill in sg.retrieve("generate a hand-drawn diagram", top_k=5):
        print(f"{skill.name}: {skill.description}  (score={skill.score:.3f})")

The index lives in a knowledge base folder (``home=``, else ``$GRAPHMEM_HOME``, else
``./.graphmem``) instead of SkillGraph's own files, and builds are incremental. ``backend`` picks
the embedding model the way the seed's did:

- ``"local"`` (the default here; the seed defaulted to a running Ollama): the knowledge base's
  configured model — the default static Model2Vec model, or BM25 + graph alone where it cannot
  be loaded offline;
- ``"ollama"``: the OpenAI-compatible embedder at Ollama's default URL
  (``http://localhost:11434/v1``, or ``$OLLAMA_BASE_URL`` / ``url=``), model ``bge-m3`` unless
  ``model=`` says otherwise;
- ``"openai"``: the OpenAI-compatible embedder (``$GRAPHMEM_OPENAI_BASE_URL``, key from
  ``$OPENAI_API_KEY``), model ``text-embedding-3-small`` unless ``model=`` says otherwise;
- any graphmem embedder SPEC (``"model2vec:DIR"``, ``"sentence-transformers:ID"``, ``"none"``).

A knowledge base never mixes embedding models: switching backends on a built index is a
graphmem ``Conflict`` that names both models and ``graphmem reindex``.
"""

from __future__ import annotations

import os
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import graphmem

from ...errors import InvalidInput
from ...kb import KnowledgeBase

__all__ = ["SkillGraph", "SkillEntry", "OLLAMA_BASE_URL", "embeddings_config"]

OLLAMA_BASE_URL = "http://localhost:11434/v1"
_OLLAMA_MODEL = "bge-m3"          # the seed's Ollama default
_OPENAI_MODEL = "text-embedding-3-small"  # the seed's OpenAI default
BACKENDS = ("local", "ollama", "openai")


def embeddings_config(backend: str, model: str | None = None, url: str | None = None) -> dict[str, Any]:
    """The ``[embeddings]`` overrides a SkillGraph ``backend`` name stands for (empty: keep the
    knowledge base's configured model)."""
    if not isinstance(backend, str) or not backend.strip():
        raise InvalidInput(f"backend: expected one of {', '.join(BACKENDS)} or an embedder SPEC, got {backend!r}")
    name = backend.strip()
    low = name.lower()
    if low == "local":
        # the seed's local backend was sentence-transformers: a model name given means one of those
        return {"model": f"sentence-transformers:{model}"} if model else {}
    if low == "ollama":
        base = (url or os.environ.get("OLLAMA_BASE_URL") or OLLAMA_BASE_URL).rstrip("/")
        if not base.endswith("/v1"):
            base += "/v1"  # the seed's URL named the server; its OpenAI-compatible API is under /v1
        return {"model": f"openai:{model or _OLLAMA_MODEL}", "base_url": base}
    if low == "openai":
        return {"model": f"openai:{model or _OPENAI_MODEL}"}
    if ":" in name or low == "none":
        return {"model": name}  # a graphmem SPEC; graphmem validates it on open
    raise InvalidInput(f"backend '{backend}': choose one of {', '.join(BACKENDS)} or an embedder SPEC "
                       "such as 'model2vec:DIR' or 'none'")


@dataclass
class SkillEntry:
    """A retrieved skill, with the seed's fields (``name``, ``description``, ``category``,
    ``score``, ``source`` = seed | graph | exact | all) and graphmem's (``id``, ``path``,
    ``parts``: the score's channels, ``via_skill``: the seed a graph hit was reached from)."""

    name: str
    description: str
    category: str
    score: float
    source: str
    id: str
    path: str
    parts: dict[str, float] = field(default_factory=dict)
    via_skill: str | None = None


class SkillGraph:
    """Index the SKILL.md files under ``skills_dir`` (and ``external_dirs``) and retrieve the
    few a message needs: embedding seeds, one graph hop (related / sibling / similar edges),
    rerank. ``home`` picks the knowledge base folder."""

    def __init__(self, skills_dir: str | os.PathLike[str], backend: str = "local", *,
                 external_dirs: list[str | os.PathLike[str]] | None = None, home: str | os.PathLike[str] | None = None,
                 model: str | None = None, url: str | None = None) -> None:
        if not isinstance(skills_dir, (str, os.PathLike)) or not str(skills_dir).strip():
            raise InvalidInput(f"skills_dir: expected a folder of SKILL.md files, got {skills_dir!r}")
        self.skills_dir = Path(skills_dir).expanduser()
        self.external_dirs = [Path(d).expanduser() for d in (external_dirs or [])]
        self.backend = backend
        overrides = embeddings_config(backend, model, url)
        self.kb: KnowledgeBase = graphmem.open(home, config={"embeddings": overrides} if overrides else None)
        self._finalizer = weakref.finalize(self, self.kb.close)
        self.last_build: dict[str, Any] | None = None

    def close(self) -> None:
        """Close the knowledge base (also done when the object is collected or at exit)."""
        self._finalizer()

    def __enter__(self) -> SkillGraph:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def build(self) -> int:
        """Index (incrementally) and link the skills; returns how many are indexed, as the
        seed's build did. What changed is in :attr:`last_build`."""
        result = self.kb.skills.build([self.skills_dir, *self.external_dirs])
        self.last_build = result.to_dict()
        return len(self.kb.skills.index())

    def retrieve(self, query: str, top_k: int | None = None, expand_graph: bool = True) -> list[SkillEntry]:
        """The skills ``query`` needs, best first (``top_k`` default: ``skills.top_k``, 8);
        ``expand_graph=False`` keeps the first-stage hits only."""
        hits = self.kb.skills.retrieve(query, top_k, strategy=None if expand_graph else "none")
        return [SkillEntry(name=h.name, description=h.description, category=h.category, score=h.score,
                           source=h.via, id=h.id, path=h.path, parts=dict(h.parts), via_skill=h.from_skill)
                for h in hits]

    def prompt(self, query: str, top_k: int | None = None, fmt: str = "markdown") -> str:
        """The prompt block (markdown, hermes or claude) of the skills ``query`` needs; empty
        when no skill is indexed."""
        block = self.kb.skills.prompt(query, top_k, fmt)
        return block.text if block.skills else ""

    @property
    def stats(self) -> dict[str, Any]:
        """``{total_skills, categories, embedder, graph: {nodes, edges, edge_types}}``."""
        info = self.kb.skills.info()
        return {"total_skills": info["skills"], "categories": info["categories"],
                "embedder": self.kb.embeddings.stored_model() or self.kb.embeddings.spec,
                "graph": {"nodes": info["skills"], "edges": sum(info["edges"].values()),
                          "edge_types": info["edges"]}}

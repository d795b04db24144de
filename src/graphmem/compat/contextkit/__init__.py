"""ContextKit's ``Memory`` (mem0-shaped, with a ``context_graph`` block) over a graphmem knowledge base.

The seed's code runs after one import change::

    # from outhad_contextkit.memory import Memory
    from graphmem.compat.contextkit import Memory

    mem = Memory.from_config({"vector_store": {"provider": "qdrant", "config": {"path": "./mem"}},
                              "context_graph": {"enabled": True, "retrieval": {"algorithm": "ppr"}}})
    mem.add("I love pizza", user_id="u1", run_id="r1")
    out = mem.search("what should I eat?", user_id="u1")   # {"results": [...], "subgraph": [...]}

Config translation (everything else is a graphmem ``InvalidInput`` naming the key):

- ``vector_store``: memories live in graphmem's SQLite knowledge base; a block whose
  ``config.path`` names a folder (providers that store locally: graphmem, sqlite, qdrant, chroma,
  faiss, lancedb) makes that folder the knowledge base. A server-backed store (host, url, an
  API) is refused with what to do. Without the block: ``home=``, else ``$GRAPHMEM_HOME``, else
  ``./.graphmem``.
- ``context_graph``: a mapping or ContextKit's ``ContextGraphConfig`` object. ``enabled``
  (default False, as in ContextKit) turns graph-first search on; ``edges``, ``retrieval`` and
  ``decay`` map to ``[memory.context_graph.*]`` under the same names, ``use_llm_inference`` to
  ``edges.llm.enabled``. Accepted and not needed: ``backend`` (the graph is in the knowledge
  base's store), ``persist_path`` (it is saved on every write), ``log_changes`` (every change is
  an event), ``retrieval.ppr_max_iter`` / ``ppr_tolerance`` (PageRank is a local push),
  ``edges.llm.provider`` / ``tokens_per_call_estimate`` / ``timeout_seconds`` /
  ``retry_on_schema_violation`` (the ``[llm]`` server's settings are used; a bad answer is retried
  once).
- ``embedder`` / ``llm``: providers ``openai`` and ``ollama`` (OpenAI-compatible endpoints;
  ``huggingface`` too for the embedder) map to ``embeddings.model`` / ``[llm]``. API keys come
  from ``$OPENAI_API_KEY`` only, never from a config.
- ``history_db_path`` and ``version`` are accepted and not needed (history is in the store).

With an ``llm`` block ``add`` extracts facts (``infer=True``, ContextKit's default); without one
it stores each message as said. The change log's names follow graphmem's change feed:
``subscribe_context_graph_changes(cb, event_types=, from_event_id=)`` (ContextKit's event names, callbacks
get a :class:`~.changes.ChangeEvent`), ``unsubscribe_context_graph_changes(token)``,
``snapshot_context_graph(path)`` (a consistent copy), ``replay_context_graph(until=)`` (a read-only view as
it was), ``context_graph.changelog`` (subscribe, add_sink, events, replay) and
``graphmem.compat.contextkit.sinks.webhook.WebhookSink(url, secret=)``.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Mapping
from typing import Any

import graphmem

from ...config import DEFAULTS
from ...errors import InvalidInput, NotFound
from ...kb import KnowledgeBase
from .changes import ChangeEvent, ChangeLog, replay, snapshot, subscribe

__all__ = ["Memory", "ContextGraphView", "ChangeEvent", "translate_config"]
OLLAMA_BASE_URL = "http://localhost:11434/v1"
_LOCAL_VECTOR_STORES = ("graphmem", "sqlite", "qdrant", "chroma", "faiss", "lancedb")
_REMOTE_KEYS = ("host", "port", "url", "api_key", "uri", "connection_string", "cloud_id")
_TOP_KEYS = ("vector_store", "context_graph", "embedder", "llm", "history_db_path", "version")

# ContextKit's context_graph keys with their graphmem names (None: accepted, not needed).
_CG_TOP = {"enabled": None, "backend": None, "persist_path": None, "log_changes": None,
           "edges": "edges", "retrieval": "retrieval", "decay": "decay"}
_NOT_NEEDED = {
    "retrieval": ("ppr_max_iter", "ppr_tolerance"),
    "edges": ("use_llm_inference",),  # mapped by hand onto edges.llm.enabled
    "edges.llm": ("provider", "tokens_per_call_estimate", "timeout_seconds", "retry_on_schema_violation"),
}


def _plain(value: Any) -> Any:
    """ContextKit's pydantic config objects as plain mappings (duck-typed: no pydantic import)."""
    if hasattr(value, "model_dump"):
        value = value.model_dump()
    elif hasattr(value, "dict") and not isinstance(value, Mapping):
        value = value.dict()
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _block(value: Any, where: str) -> dict[str, Any]:
    value = _plain(value)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InvalidInput(f"{where}: expected a mapping, got {type(value).__name__}")
    return dict(value)


def _section(given: Mapping[str, Any], known: Mapping[str, Any], where: str) -> dict[str, Any]:
    """Keep the keys graphmem has under the same name; refuse unknown ones by name."""
    out: dict[str, Any] = {}
    skip = _NOT_NEEDED.get(where.removeprefix("context_graph."), ())
    for key, value in given.items():
        if key in skip:
            continue
        if key not in known:
            raise InvalidInput(f"{where}.{key}: not a ContextKit setting graphmem knows; known: "
                               f"{', '.join(sorted([*known, *skip]))}")
        if isinstance(known[key], dict):
            out[key] = _section(_block(value, f"{where}.{key}"), known[key], f"{where}.{key}")
        else:
            out[key] = value
    return out


def _context_graph(block: dict[str, Any], defaults: Mapping[str, Any]) -> tuple[bool, dict[str, Any]]:
    for key in block:
        if key not in _CG_TOP:
            raise InvalidInput(f"context_graph.{key}: not a ContextKit setting; known: {', '.join(sorted(_CG_TOP))}")
    backend = block.get("backend")
    if backend not in (None, "networkx", "neo4j"):
        raise InvalidInput(f"context_graph.backend '{backend}': ContextKit's backends are networkx and neo4j; "
                           "graphmem keeps the graph in its own store either way")
    out: dict[str, Any] = {}
    for key in ("edges", "retrieval", "decay"):
        sub = _block(block.get(key), f"context_graph.{key}")
        if sub:
            out[key] = _section(sub, defaults[key], f"context_graph.{key}")
    edges = _block(block.get("edges"), "context_graph.edges")
    if edges.get("use_llm_inference"):
        out.setdefault("edges", {}).setdefault("llm", {})["enabled"] = True
    enabled = block.get("enabled", False)
    if not isinstance(enabled, bool):  # bool("no") is True: a string would turn the graph on, inverted
        raise InvalidInput(f"context_graph.enabled: expected true or false, got {enabled!r}")
    return enabled, out


def _no_key(cfg: Mapping[str, Any], where: str) -> None:
    if cfg.get("api_key"):
        raise InvalidInput(f"{where}.config.api_key: graphmem takes API keys from OPENAI_API_KEY only, never "
                           "from a config; remove it and export OPENAI_API_KEY")


def _endpoint(block: dict[str, Any], where: str, hf: bool) -> tuple[str, str, str]:
    """(kind, model, base_url) of an embedder or llm block; kind is openai or sentence-transformers."""
    provider = str(block.get("provider") or "openai").lower()
    cfg = _block(block.get("config"), f"{where}.config")
    _no_key(cfg, where)
    model = str(cfg.get("model") or "")
    if provider == "openai":
        return "openai", model, str(cfg.get("openai_base_url") or "")
    if provider == "ollama":
        base = str(cfg.get("ollama_base_url") or OLLAMA_BASE_URL).rstrip("/")
        return "openai", model, base if base.endswith("/v1") else base + "/v1"
    if hf and provider == "huggingface":
        return "sentence-transformers", model, ""
    choices = "openai, ollama" + (", huggingface" if hf else "")
    raise InvalidInput(f"{where}.provider '{provider}': graphmem supports {choices} (any other "
                       "OpenAI-compatible server: provider openai with config.openai_base_url)")


def translate_config(config: Mapping[str, Any] | None) -> tuple[str | None, bool, bool, dict[str, Any]]:
    """``(home, graph enabled, llm configured, graphmem config overrides)`` for a ContextKit config."""
    cfg = _block(config, "config")
    for key in cfg:
        if key not in _TOP_KEYS:
            raise InvalidInput(f"config.{key}: not supported by graphmem.compat.contextkit; supported blocks: "
                               f"{', '.join(_TOP_KEYS)}" + (" (graphmem keeps the entity graph in its own store)"
                                                           if key == "graph_store" else ""))
    home: str | None = None
    vs = _block(cfg.get("vector_store"), "vector_store")
    if vs:
        provider = str(vs.get("provider") or "graphmem").lower()
        vcfg = _block(vs.get("config"), "vector_store.config")
        remote = [k for k in _REMOTE_KEYS if vcfg.get(k)]
        if provider not in _LOCAL_VECTOR_STORES or remote or not vcfg.get("path"):
            raise InvalidInput(
                f"vector_store: provider '{provider}'" + (f" with {', '.join(remote)}" if remote else "")
                + " is not supported; graphmem keeps memories in its own SQLite knowledge base: give "
                  "vector_store.config.path (a folder) or drop the vector_store block")
        if not isinstance(vcfg["path"], (str, os.PathLike)):
            raise InvalidInput(f"vector_store.config.path: expected a folder path, got {vcfg['path']!r}")
        home = os.path.expanduser(os.fspath(vcfg["path"]))
    overrides: dict[str, Any] = {}
    enabled, cg = _context_graph(_block(cfg.get("context_graph"), "context_graph"), _defaults())
    if cg:
        overrides["memory"] = {"context_graph": cg}
    emb = _block(cfg.get("embedder"), "embedder")
    if emb:
        kind, model, base = _endpoint(emb, "embedder", hf=True)
        if not model:
            raise InvalidInput("embedder.config.model: name the embedding model (e.g. 'text-embedding-3-small')")
        overrides["embeddings"] = {"model": f"{kind}:{model}", **({"base_url": base} if base else {})}
    llm = _block(cfg.get("llm"), "llm")
    if llm:
        _kind, model, base = _endpoint(llm, "llm", hf=False)
        if not model:
            raise InvalidInput("llm.config.model: name the chat model (e.g. 'gpt-4o-mini')")
        overrides["llm"] = {"model": model, **({"base_url": base} if base else {})}
    return home, enabled, bool(llm), overrides


def _defaults() -> Mapping[str, Any]:
    return DEFAULTS["memory"]["context_graph"]


class ContextGraphView:
    """``Memory.context_graph``: the memory graph's counts and housekeeping."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self._kb = kb
        self.changelog = ChangeLog(kb)

    def stats(self) -> dict[str, int]:
        """``{nodes: live memories, nodes_total: with archived ones, edges}`` (as ContextKit's)."""
        s = self._kb.memory.stats()
        return {"nodes": s["memories"], "nodes_total": s["memories"] + s["archived"], "edges": s["edges"]}

    def tick_decay(self) -> dict[str, int]:
        """One decay round now: ``{decayed, pruned, archived}``."""
        return self._kb.memory.tick_decay().to_dict()


class Memory:
    """ContextKit's ``Memory``: ``add``, ``search``, ``get``/``get_all``/``update``/``delete``/
    ``history``, and the context graph's ``tick_decay``, ``mark_relevant``/``mark_irrelevant``,
    ``record_feedback``, ``backfill_context_graph``, ``reset_context_graph``, ``context_graph``."""

    def __init__(self, config: Mapping[str, Any] | None = None, *, home: str | os.PathLike[str] | None = None) -> None:
        cfg_home, self._graph_enabled, self._llm, overrides = translate_config(config)
        self.kb: KnowledgeBase = graphmem.open(home if home is not None else cfg_home, config=overrides or None)
        self._finalizer = weakref.finalize(self, self.kb.close)
        self._view = ContextGraphView(self.kb) if self._graph_enabled else None

    @classmethod
    def from_config(cls, config_dict: Mapping[str, Any], *, home: str | os.PathLike[str] | None = None) -> Memory:
        """A Memory from ContextKit's (mem0's) config dict; see the module docstring for the blocks."""
        return cls(config_dict, home=home)

    def close(self) -> None:
        """Close the knowledge base (also done when the object is collected or at exit)."""
        self._finalizer()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- memories -------------------------------------------------------------------------------

    def add(self, messages: Any, user_id: str | None = None, agent_id: str | None = None,
            run_id: str | None = None, metadata: Mapping[str, Any] | None = None,
            infer: bool | None = None) -> dict[str, Any]:
        """Remember a text or ``[{role, content}]`` messages: ``{"results": [{"id", "memory", "event"}]}``.
        ``infer`` defaults to True when an ``llm`` block was configured (facts extracted), else False."""
        return self.kb.memory.add(messages, user_id=user_id, agent_id=agent_id, run_id=run_id, metadata=metadata,
                                  infer=self._llm if infer is None else infer).to_dict()

    def search(self, query: str, user_id: str | None = None, agent_id: str | None = None,
               run_id: str | None = None, limit: int = 100, filters: Mapping[str, Any] | None = None,
               threshold: float | None = None, use_context_graph: bool | None = None,
               include_archived: bool = False) -> dict[str, Any]:
        """``{"results": [{id, memory, score, context_graph: {...}, ...}], "subgraph": [...]}``; the
        graph is used when the config enabled it (``use_context_graph`` overrides, as in ContextKit)."""
        if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, (int, float))):
            raise InvalidInput(f"threshold: expected a number (the lowest score kept), got {threshold!r}")
        scope = _scope(filters, user_id=user_id, agent_id=agent_id, run_id=run_id)
        use_graph = False if not self._graph_enabled else use_context_graph
        out = self.kb.memory.search(query, limit=limit, use_context_graph=use_graph,
                                    include_archived=include_archived, **scope).to_dict()
        if threshold is not None:
            out["results"] = [r for r in out["results"] if r["score"] >= float(threshold)]
        return out

    def get(self, memory_id: str) -> dict[str, Any] | None:
        """One memory, or None when there is none with that id (as in ContextKit)."""
        try:
            return self.kb.memory.get(memory_id).to_dict()
        except NotFound:
            return None

    def get_all(self, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                filters: Mapping[str, Any] | None = None, limit: int = 100) -> dict[str, Any]:
        """``{"results": [...]}``: the memories of a scope."""
        return self.kb.memory.get_all(_scope(filters, user_id=user_id, agent_id=agent_id, run_id=run_id),
                                      limit=limit).to_dict()

    def update(self, memory_id: str, data: str) -> dict[str, str]:
        """Replace a memory's text (the old one stays in its history)."""
        self.kb.memory.update(memory_id, data)
        return {"message": "Memory updated successfully!"}

    def delete(self, memory_id: str) -> dict[str, str]:
        """Delete a memory."""
        self.kb.memory.delete(memory_id)
        return {"message": "Memory deleted successfully!"}

    def delete_all(self, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                   filters: Mapping[str, Any] | None = None) -> dict[str, str]:
        """Delete every memory of a scope (at least one of user_id, agent_id, run_id, tenant_id), as mem0 does."""
        self.kb.memory.delete_all(**_scope(filters, user_id=user_id, agent_id=agent_id, run_id=run_id))
        return {"message": "Memories deleted successfully!"}

    def reset(self) -> None:
        """Delete every memory of every scope (mem0's ``reset``); documents, the graph, the wiki and skills stay."""
        self.kb.memory.reset()

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        """ADD / UPDATE / DELETE records of a memory, oldest first."""
        return [v.to_dict() for v in self.kb.memory.history(memory_id)]

    # -- the context graph ------------------------------------------------------------------------

    @property
    def context_graph(self) -> ContextGraphView | None:
        """Counts and decay of the memory graph; None when the config did not enable it (as in ContextKit)."""
        return self._view

    def _require_graph(self, name: str) -> None:
        if not self._graph_enabled:
            raise InvalidInput(f"{name}: the context graph is not enabled in this Memory's config; "
                               "set context_graph.enabled = True")

    def tick_decay(self) -> dict[str, int]:
        """One decay round: ``{decayed, pruned, archived}`` (zeros when the graph is not enabled)."""
        if not self._graph_enabled:
            return {"decayed": 0, "pruned": 0, "archived": 0}
        return self.kb.memory.tick_decay().to_dict()

    def mark_relevant(self, memory_id: str, delta: float = 0.25) -> float | None:
        """Raise a memory's relevance (and pin a floor against decay); the new relevance, or
        None when the graph is off or the memory unknown (as in ContextKit)."""
        if not self._graph_enabled:
            return None
        try:
            return float(self.kb.memory.mark_relevant(memory_id, delta)["relevance"])
        except NotFound:
            return None

    def mark_irrelevant(self, memory_id: str, delta: float = 0.25) -> float | None:
        """Lower a memory's relevance; the new relevance, or None (graph off, memory unknown)."""
        if not self._graph_enabled:
            return None
        try:
            return float(self.kb.memory.mark_irrelevant(memory_id, delta)["relevance"])
        except NotFound:
            return None

    def record_feedback(self, memory_id: str, helpful: bool, user_id: str | None = None,
                        query: str | None = None) -> None:
        """Feedback on a memory: for ``query`` when given (feeds the personal / success terms),
        else a relevance mark up or down."""
        if query is not None:
            self.kb.memory.feedback(memory_id, query, helpful)
        elif helpful:
            self.kb.memory.mark_relevant(memory_id)
        else:
            self.kb.memory.mark_irrelevant(memory_id)

    def backfill_context_graph(self, *, batch_size: int = 500, embed: bool = True, user_id: str | None = None,
                               agent_id: str | None = None, run_id: str | None = None) -> dict[str, int]:
        """Link memories stored without the graph (idempotent): ``{"nodes", "edges"}``. ``embed``
        is accepted: missing vectors are always computed when a model is configured."""
        self._require_graph("backfill_context_graph")
        return self.kb.memory.backfill_context_graph(user_id=user_id, agent_id=agent_id, run_id=run_id,
                                                     batch_size=batch_size).to_dict()

    def reset_context_graph(self) -> None:
        """Drop the links between memories; memories, their history and mentions stay."""
        if self._graph_enabled:
            self.kb.memory.reset_context_graph()

    # -- the change log -------------------------------------------------------------------------

    def snapshot_context_graph(self, path: str | os.PathLike[str]) -> dict[str, Any]:
        """A consistent copy of the knowledge base in the new folder ``path`` (``graphmem backup``)."""
        if not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
            raise InvalidInput(f"path: expected the folder to write the snapshot to, got {path!r}")
        return snapshot(self.kb, path)

    def replay_context_graph(self, until: Any = None) -> Any:
        """A read-only view of the knowledge base as it was at ``until`` (an event id, a datetime or an ISO-8601
        time): ``view.memory.get_all(...)``, ``view.search(...)``; close it when done."""
        return replay(self.kb, until)

    def subscribe_context_graph_changes(self, callback: Any, event_types: list[str] | None = None,
                                        from_event_id: int | None = None) -> str:
        """Call ``callback(ChangeEvent)`` for each change (ContextKit's event names, e.g. ``node_added``,
        ``memory_feedback_recorded``) after ``from_event_id`` (None: new ones; 0: the whole log first), in
        order, whichever process wrote it. Returns the token for :meth:`unsubscribe_context_graph_changes`."""
        return subscribe(self.kb, callback, event_types, from_event_id)

    def unsubscribe_context_graph_changes(self, token: str) -> bool:
        """Stop a subscription; False if ``token`` names none."""
        return self.kb.events.unsubscribe(token)


def _scope(filters: Mapping[str, Any] | None, **given: str | None) -> dict[str, Any]:
    """mem0's ``filters={...}`` merged with the keyword scope (keywords win)."""
    if filters is not None and not isinstance(filters, Mapping):
        raise InvalidInput(f"filters: expected a mapping of user_id / agent_id / run_id / tenant_id, "
                           f"got {type(filters).__name__}")
    out = dict(filters or {})
    unknown = sorted(set(out) - {"user_id", "agent_id", "run_id", "tenant_id"})
    if unknown:
        raise InvalidInput(f"filters: unknown key(s) {unknown}; use user_id, agent_id, run_id, tenant_id")
    out.update({k: v for k, v in given.items() if v is not None})
    return out

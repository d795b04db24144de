"""Request bodies (pydantic models: the OpenAPI document's schemas come from them).

Fields mirror the library's arguments; bounds keep one request's work bounded. Unknown fields
are refused (a misspelt field must not be silently ignored), and values are taken as JSON gives
them (strict): ``{"confirm": "yes"}`` or ``{"k": true}`` is a 400 naming the field, not a coerced
true or 1 (lax mode turned "yes" into True and let POST /reset delete every memory).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["MAX_ID", "DocumentIn", "SearchIn", "QueryIn", "MergeIn", "ResetIn", "PageIn", "PageUpdateIn",
           "SkillQueryIn", "SkillGraphRetrieveIn", "MessageIn", "MemoryIn", "MemoryUpdateIn", "MemorySearchIn"]

Text = Field(min_length=1, max_length=20_000)
# Offsets, versions and event ids fit SQLite's 64-bit integers (a larger one is a 400, not a crash).
MAX_ID = 2**62


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class DocumentIn(_Body):
    """A document to ingest. ``extract``: offline (rule-based, default), llm (the configured
    endpoint) or none (chunks only). Agent-supplied ``entities``/``relations`` (the seed's format)
    are stored instead of running an extractor."""

    content: str = Field(min_length=1)
    doc_id: str | None = Field(default=None, min_length=1, max_length=500)
    title: str | None = Field(default=None, max_length=500)
    source: str | None = Field(default=None, max_length=2000)
    metadata: dict[str, Any] | None = None
    extract: Literal["offline", "llm", "none"] = "offline"
    entities: list[dict[str, Any]] | None = None
    relations: list[dict[str, Any]] | None = None


class SearchIn(_Body):
    """``POST /search``. Without a memory scope: the hybrid knowledge search (``kinds``: chunk,
    entity, document, page). With ``filters`` or any of ``user_id``/``agent_id``/``run_id``/
    ``tenant_id``: mem0's memory search (``{"results": [...]}``)."""

    query: str = Text
    kinds: list[Literal["chunk", "entity", "document", "page"]] | None = None
    k: int = Field(default=10, ge=1, le=100)
    strategy: Literal["ppr", "bfs", "none"] | None = None
    preset: str | None = Field(default=None, max_length=50)
    context: bool = False
    token_budget: int = Field(default=1000, ge=1, le=100_000)
    # mem0's memory search
    filters: dict[str, str] | None = None
    user_id: str | None = Field(default=None, min_length=1, max_length=200)
    agent_id: str | None = Field(default=None, min_length=1, max_length=200)
    run_id: str | None = Field(default=None, min_length=1, max_length=200)
    tenant_id: str | None = Field(default=None, min_length=1, max_length=200)
    limit: int = Field(default=10, ge=1, le=1000)


class MemorySearchIn(_Body):
    """``POST /memories/search``: mem0's memory search."""

    query: str = Text
    filters: dict[str, str] | None = None
    user_id: str | None = Field(default=None, min_length=1, max_length=200)
    agent_id: str | None = Field(default=None, min_length=1, max_length=200)
    run_id: str | None = Field(default=None, min_length=1, max_length=200)
    tenant_id: str | None = Field(default=None, min_length=1, max_length=200)
    limit: int = Field(default=10, ge=1, le=1000)
    strategy: Literal["bfs", "ppr"] | None = None


class QueryIn(_Body):
    """``POST /query``: the subgraph a question names, with its evidence."""

    query: str = Text


class MergeIn(_Body):
    """``POST /entities/merge``: ``other`` is merged into ``keep``."""

    keep: str = Field(min_length=1, max_length=500)
    other: str = Field(min_length=1, max_length=500)


class PageIn(_Body):
    """``POST /wiki/pages``: create or replace the page ``title`` of ``category``."""

    category: str = Field(min_length=1, max_length=100)
    title: str = Field(min_length=1, max_length=300)
    content: str
    summary: str | None = Field(default=None, max_length=2000)
    tags: list[str] | None = None
    source_documents: list[str] | None = None
    allow_empty: bool = False


class PageUpdateIn(_Body):
    """``PUT /wiki/pages/{slug}``: new content (and summary, tags) of an existing page."""

    content: str
    summary: str | None = Field(default=None, max_length=2000)
    tags: list[str] | None = None
    source_documents: list[str] | None = None
    allow_empty: bool = False


class SkillQueryIn(_Body):
    """``POST /skills/query``: the skills a message needs and the prompt block an agent gets."""

    message: str = Text
    top_k: int | None = Field(default=None, ge=1, le=100)
    strategy: Literal["ppr", "bfs", "none"] | None = None
    format: Literal["markdown", "hermes", "claude"] = "markdown"


class SkillGraphRetrieveIn(_Body):
    """``POST /retrieve``: SkillGraph's ``retrieve(query, top_k)`` for its users."""

    query: str = Text
    top_k: int | None = Field(default=None, ge=1, le=100)


class MessageIn(BaseModel):
    """One chat message."""

    model_config = ConfigDict(strict=True)

    role: str | None = Field(default=None, max_length=50)
    content: str


class MemoryIn(_Body):
    """``POST /memories`` (mem0's shape): a text or messages, a scope, metadata. ``infer`` asks the
    configured LLM for facts (mem0's default; here off, since graphmem runs offline by default)."""

    messages: list[MessageIn] | str = Field(min_length=1)
    user_id: str | None = Field(default=None, min_length=1, max_length=200)
    agent_id: str | None = Field(default=None, min_length=1, max_length=200)
    run_id: str | None = Field(default=None, min_length=1, max_length=200)
    tenant_id: str | None = Field(default=None, min_length=1, max_length=200)
    metadata: dict[str, Any] | None = None
    timestamp: str | None = Field(default=None, max_length=64)
    infer: bool = False


class ResetIn(_Body):
    """``POST /reset``: ``{"confirm": true}``. A JSON body, which a cross-site HTML form cannot send,
    so no web page can wipe the memories of a server it reaches."""

    confirm: bool = Field(description="must be true: every memory of every scope is deleted")


class MemoryUpdateIn(_Body):
    """``PUT /memories/{id}``: the new text (``text``, as mem0's client sends; ``memory`` or ``data``
    are accepted too) and optionally new metadata."""

    text: str | None = None
    memory: str | None = None
    data: str | None = None
    metadata: dict[str, Any] | None = None

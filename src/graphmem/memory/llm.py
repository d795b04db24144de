"""LLM help for memories, through any OpenAI-compatible chat-completions server:
labelling topic-similar pairs (SUPPORTS / CONTRADICTS / REFINES / ELABORATES) and, for
``add(..., infer=True)``, extracting the facts worth remembering from messages.

Budgets: labelling spends a daily token budget per user that lives in the store (so a restart
changes nothing); once spent, labelling pauses for ``cooldown_seconds``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import InvalidInput
from ..openai_http import HTTPFailure, post_json

__all__ = ["MemoryLLM", "LLMError", "LABELS"]

LABELS = ("SUPPORTS", "CONTRADICTS", "REFINES", "ELABORATES")
DEFAULT_BASE_URL = "https://api.openai.com/v1"

LABEL_PROMPT = """You compare two statements an agent was told by the same user.
For each numbered pair answer how statement B relates to statement A:
SUPPORTS (B agrees with or confirms A), CONTRADICTS (B cannot be true if A is), REFINES (B corrects or
narrows A), ELABORATES (B adds detail to A), or NONE. Give a confidence between 0 and 1.
Reply with JSON only: {"labels": [{"pair": <number>, "label": "...", "confidence": <number>}]}"""

FACTS_PROMPT = """Extract the facts worth remembering about the user from the conversation messages.
Each fact is one short self-contained sentence and cites the number of the message it comes from.
Never invent anything the messages do not say. Reply with JSON only:
{"facts": [{"fact": "...", "message": <number>}]}"""


class LLMError(Exception):
    """The LLM could not be reached or answered unusably (the message says which)."""


def _json_content(content: Any) -> Any:
    if not isinstance(content, str):
        raise LLMError("the model answered without text content")
    text = content.strip()
    fenced = re.match(r"^```(?:json)?\s*(.*?)\s*```$", text, re.DOTALL)
    if fenced:
        text = fenced.group(1)
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise LLMError(f"the model did not answer JSON: {text[:120]!r}") from None


class MemoryLLM:
    """A small chat-completions client configured from the ``[llm]`` table."""

    def __init__(self, cfg: Mapping[str, Any], environ: Mapping[str, str] | None = None,
                 api_key: str | None = None) -> None:
        """``api_key`` is sent as given; without it, ``$OPENAI_API_KEY`` (the caller checks first that
        the key may go to ``cfg['base_url']``: see :func:`graphmem.trust.endpoint_api_key`)."""
        env = os.environ if environ is None else environ
        self.model = str(cfg.get("model") or "").strip()
        if not self.model:
            raise InvalidInput("no LLM configured: set [llm] model (and base_url) in config.toml or "
                               "GRAPHMEM_LLM__MODEL to use infer=True or LLM-labelled memory edges")
        base = str(cfg.get("base_url") or env.get("GRAPHMEM_OPENAI_BASE_URL") or DEFAULT_BASE_URL).strip().rstrip("/")
        if base.endswith("/chat/completions"):
            base = base[: -len("/chat/completions")]
        if not base.startswith(("http://", "https://")):
            raise InvalidInput(f"llm base_url {base!r}: expected an http(s) URL such as {DEFAULT_BASE_URL}")
        self.url = f"{base}/chat/completions"
        self.timeout = float(cfg.get("timeout") or 60.0)
        self.api_key = api_key or env.get("OPENAI_API_KEY") or None

    def _chat(self, system: str, user: str) -> tuple[Any, int]:
        payload = {"model": self.model, "response_format": {"type": "json_object"},
                   "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}]}
        try:
            data = post_json(self.url, payload, api_key=self.api_key, timeout=self.timeout, max_attempts=3,
                             backoff_base=0.5, max_retry_after=30.0, label="memory")
        except HTTPFailure as exc:
            raise LLMError(str(exc)) from None
        try:
            content = data["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise LLMError(f"{self.url} answered without choices[0].message.content") from None
        usage = data.get("usage") if isinstance(data, Mapping) else None
        tokens = usage.get("total_tokens") if isinstance(usage, Mapping) else None
        if not isinstance(tokens, int) or tokens <= 0:  # servers that do not report usage: estimate
            tokens = (len(system) + len(user) + len(str(content))) // 4 + 1
        return _json_content(content), tokens

    def label_pairs(self, pairs: Sequence[tuple[str, str]]) -> tuple[list[tuple[str, float] | None], int]:
        """A ``(label, confidence)`` (or None) per ``(text A, text B)`` pair, and the tokens spent."""
        if not pairs:
            return [], 0
        user = "\n\n".join(f"Pair {i + 1}:\nA: {a}\nB: {b}" for i, (a, b) in enumerate(pairs))
        data, tokens = self._chat(LABEL_PROMPT, user)
        out: list[tuple[str, float] | None] = [None] * len(pairs)
        items = data.get("labels") if isinstance(data, Mapping) else None
        for item in items if isinstance(items, list) else []:
            if not isinstance(item, Mapping):
                continue
            n, label, conf = item.get("pair"), str(item.get("label", "")).upper(), item.get("confidence")
            if isinstance(n, int) and 1 <= n <= len(pairs) and label in LABELS and isinstance(conf, (int, float)):
                out[n - 1] = (label, float(conf))
        return out, tokens

    def extract_facts(self, messages: Sequence[tuple[str | None, str]]) -> tuple[list[tuple[str, int]], int]:
        """``(fact, index of the message it cites)`` pairs, and the tokens spent."""
        user = "\n".join(f"{i + 1}. [{role or 'user'}] {text}" for i, (role, text) in enumerate(messages))
        data, tokens = self._chat(FACTS_PROMPT, user)
        facts = data.get("facts") if isinstance(data, Mapping) else None
        out: list[tuple[str, int]] = []
        for item in facts if isinstance(facts, list) else []:
            if not isinstance(item, Mapping):
                continue
            fact, n = item.get("fact"), item.get("message")
            if isinstance(fact, str) and fact.strip() and isinstance(n, int) and 1 <= n <= len(messages):
                out.append((fact.strip(), n - 1))
        return out, tokens

"""Extraction by an LLM at any OpenAI-compatible chat-completions endpoint.

OpenAI, Ollama, vLLM and the llama.cpp server all speak ``POST {base_url}/chat/completions``.
The model is prompted with the ingestion and ontology rules (the Mini Context Graph's), asked
for JSON in the extraction contract's shape, and its answer goes through the same
:func:`parse_extraction` + :func:`validate_extraction` as every other extractor:

* a malformed answer (not JSON, wrong shape) is retried once with the errors fed back;
* well-formed items that fail the contract (a quote not in the document, confidence below
  the minimum, an endpoint not in the entity list) are dropped and reported in
  ``Extraction.extra["warnings"]`` — re-asking would cost money and rarely fixes them;
* HTTP 429/5xx and timeouts are retried with backoff; anything else is an
  :class:`ExtractionError` that names the document.

HTTP goes through :mod:`graphmem.openai_http` (the standard library's ``urllib``), so the
extractor adds no dependency. Results are cached on disk by (content hash, model, prompt
version): a re-run costs nothing.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import tempfile
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ...errors import InvalidInput
from ...extraction import Extraction, loads_json, parse_extraction
from ...ontology import DEFAULT_INVERSE_RELATIONS, DEFAULT_RELATION_SYNONYMS, DEFAULT_TYPE_SYNONYMS
from ...openai_http import ERROR_SNIPPET as _ERROR_SNIPPET
from ...openai_http import HTTPFailure, RateLimiter, post_json
from ...text import content_hash
from ...validate import check_input
from .base import ExtractionError, SourceDocument, validate_extraction

__all__ = ["DEFAULT_BASE_URL", "PROMPT_VERSION", "RESPONSE_SCHEMA", "SYSTEM_PROMPT", "LLMExtractor"]

log = logging.getLogger(__name__)

# Bump whenever SYSTEM_PROMPT, the user message or RESPONSE_SCHEMA changes meaning: it is part
# of the cache key, so answers to an older prompt are not served for the new one.
PROMPT_VERSION = "1"
DEFAULT_BASE_URL = "https://api.openai.com/v1"


def _group(table: Mapping[str, str]) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for variant, canonical in table.items():
        groups.setdefault(canonical, [])
        if variant != canonical:
            groups[canonical].append(variant)
    return groups


def _listing(table: Mapping[str, str]) -> str:
    lines = []
    for canonical, variants in sorted(_group(table).items()):
        lines.append(f"  - {canonical}" + (f" (not: {', '.join(variants)})" if variants else ""))
    return "\n".join(lines)


def _inverse_listing() -> str:
    lines = []
    for canonical, phrases in sorted(_group(DEFAULT_INVERSE_RELATIONS).items()):
        lines.append(f"  - {', '.join(repr(p) for p in phrases)}: use '{canonical}' with the ends swapped")
    return "\n".join(lines)


SYSTEM_PROMPT = f"""\
You extract a knowledge graph from one document. Every entity and relation you return is \
stored with the exact passage that supports it, so accuracy matters more than coverage.

Reply with one JSON object and nothing else, in this shape:
{{"entities": [{{"name": "...", "type": "...", "supporting_text": "..."}}],
 "relations": [{{"source": "...", "target": "...", "type": "...", "confidence": 1.0, "supporting_text": "..."}}]}}

Entities
- name: the entity as the document names it, in lowercase except proper nouns (products, \
people, organisations, places and acronyms keep their case); singular, without articles \
("memory leak", not "The Memory Leaks").
- type: one of these canonical entity types (write the canonical word, not a variant after "not:"):
{_listing(DEFAULT_TYPE_SYNONYMS)}
  If none fits, use a short new lowercase type of one or two words.
- List each distinct entity once.

Relations
- source and target: entity names exactly as written in your "entities" list. Never return a \
relation whose source or target is not in that list.
- type: one of these canonical relation types, in the forward direction (write the canonical \
phrase, not a variant after "not:"):
{_listing(DEFAULT_RELATION_SYNONYMS)}
  Inverse or passive phrasings swap source and target:
{_inverse_listing()}
  Example: "the wheel is part of the car" is car --contains--> wheel; "the crash is caused by \
the leak" is leak --causes--> crash.
- confidence: 1.0 when the document states the relation explicitly; 0.8 when it is strongly \
implied; 0.6 when it is weakly implied. Below 0.6: do not include the relation.

Evidence
- supporting_text: an EXACT quote copied character for character from the document (a \
sentence or a clause) that states the entity or the relation. Do not paraphrase, shorten \
with "...", fix typos, translate or join separate passages.
- Never invent: extract only what this document says, with no outside knowledge. Do not add \
relations without explicit textual evidence. If the document states nothing, return empty lists.
"""


def _object_schema(properties: dict[str, Any]) -> dict[str, Any]:
    # Strict structured outputs require every property listed as required and no extras.
    return {"type": "object", "additionalProperties": False, "required": list(properties),
            "properties": properties}


RESPONSE_SCHEMA: dict[str, Any] = {
    "name": "graphmem_extraction",
    "strict": True,
    "schema": _object_schema({
        "entities": {"type": "array", "items": _object_schema({
            "name": {"type": "string"},
            "type": {"type": "string"},
            "supporting_text": {"type": "string"},
        })},
        "relations": {"type": "array", "items": _object_schema({
            "source": {"type": "string"},
            "target": {"type": "string"},
            "type": {"type": "string"},
            "confidence": {"type": "number"},
            "supporting_text": {"type": "string"},
        })},
    }),
}

_PROMPT_FINGERPRINT = hashlib.sha256(
    (SYSTEM_PROMPT + json.dumps(RESPONSE_SCHEMA, sort_keys=True)).encode("utf-8")
).hexdigest()[:16]

_FENCE = re.compile(r"^\s*```[A-Za-z0-9_-]*\s*\n?(.*?)\n?\s*```\s*$", re.DOTALL)


def _user_message(doc: SourceDocument) -> str:
    return (
        f"Title: {doc.title}\n\n"
        "Extract the entities and relations of this document (between the markers):\n"
        f"-----BEGIN DOCUMENT-----\n{doc.text}\n-----END DOCUMENT-----"
    )


def _parse_content(content: Any) -> Extraction:
    """The model's message content as an Extraction; InvalidInput says what is wrong."""
    if not isinstance(content, str) or not content.strip():
        raise InvalidInput("the answer is empty; expected a JSON object")
    match = _FENCE.match(content)
    if match:  # many local models wrap JSON in a fence even in JSON mode
        content = match.group(1)
    try:
        data = loads_json(content, "the answer")
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"the answer is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    if not isinstance(data, Mapping) or not ({"entities", "relations"} & set(data)):
        raise InvalidInput("expected a JSON object with 'entities' and 'relations' lists")
    check_input("the answer", "answer", data)  # a lone surrogate ("\ud800") no file or store can hold
    return parse_extraction(data.get("entities"), data.get("relations"))


class _SchemaRejected(Exception):
    """The server does not support ``response_format: json_schema`` (fall back to json_object)."""


class LLMExtractor:
    """Entities and relations from an LLM behind an OpenAI-compatible chat-completions API.

    ``backoff_base`` is the first retry delay in seconds (doubled per attempt) and
    ``max_attempts`` the number of tries per request; ``max_retry_after`` caps a server's
    ``Retry-After``. ``temperature=None`` omits the parameter for models that reject it.
    """

    name = "llm"

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_concurrency: int = 4,
        requests_per_minute: float | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
        temperature: float | None = 0.0,
        prompt_version: str = PROMPT_VERSION,
        min_confidence: float = 0.6,
        *,
        max_attempts: int = 3,
        backoff_base: float = 1.0,
        max_retry_after: float = 60.0,
    ) -> None:
        base_url = (base_url or "").strip().rstrip("/")
        if base_url.endswith("/chat/completions"):  # a full endpoint URL is a common slip
            base_url = base_url[: -len("/chat/completions")]
        if not base_url.startswith(("http://", "https://")):
            raise InvalidInput(f"llm base_url {base_url!r}: expected an http(s) URL such as {DEFAULT_BASE_URL}")
        if not model or not model.strip():
            raise InvalidInput("llm model: missing; name the model to use (e.g. 'gpt-4o-mini' or 'llama3.1')")
        if timeout <= 0:
            raise InvalidInput(f"llm timeout: must be positive, got {timeout}")
        if max_concurrency < 1:
            raise InvalidInput(f"llm max_concurrency: must be at least 1, got {max_concurrency}")
        if requests_per_minute is not None and requests_per_minute < 0:
            raise InvalidInput(
                f"llm requests_per_minute: must be positive (0 or None: no limit), got {requests_per_minute}"
            )
        if not 0.0 <= min_confidence <= 1.0:
            raise InvalidInput(f"llm min_confidence: must be within [0, 1], got {min_confidence}")
        if max_attempts < 1:
            raise InvalidInput(f"llm max_attempts: must be at least 1, got {max_attempts}")
        self.base_url = base_url
        self.url = f"{base_url}/chat/completions"
        self.model = model.strip()
        self._api_key = api_key or None
        self.timeout = float(timeout)
        self.max_concurrency = int(max_concurrency)
        self.requests_per_minute = requests_per_minute or None
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self.temperature = temperature
        self.prompt_version = str(prompt_version)
        self.min_confidence = float(min_confidence)
        self.max_attempts = int(max_attempts)
        self.backoff_base = float(backoff_base)
        self.max_retry_after = float(max_retry_after)
        self._limiter = RateLimiter(requests_per_minute) if requests_per_minute else None
        # Learnt once per extractor: after a server rejects json_schema, ask for json_object.
        self._use_json_schema = True

    def __repr__(self) -> str:  # never shows the API key
        return f"LLMExtractor(base_url={self.base_url!r}, model={self.model!r})"

    @classmethod
    def from_config(cls, mapping: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> LLMExtractor:
        """Build from a config table (``base_url``, ``model``, ``api_key`` and the other arguments).

        ``api_key`` defaults to ``$OPENAI_API_KEY``; ``base_url`` to ``$GRAPHMEM_OPENAI_BASE_URL``,
        then ``https://api.openai.com/v1``. Values may be strings (from the environment).
        """
        env = os.environ if environ is None else environ
        casts: dict[str, Callable[[Any], Any]] = {
            "base_url": str, "model": str, "api_key": str, "timeout": float, "max_concurrency": int,
            "requests_per_minute": float, "cache_dir": str, "temperature": float, "prompt_version": str,
            "min_confidence": float, "max_attempts": int, "backoff_base": float, "max_retry_after": float,
        }
        unknown = set(mapping) - set(casts)
        if unknown:
            raise InvalidInput(f"llm config: unknown key(s) {sorted(unknown)}; known keys: {', '.join(sorted(casts))}")
        kwargs: dict[str, Any] = {}
        for key, value in mapping.items():
            # Config tables spell "not set" as an empty string (and no rate limit as 0).
            if value is None or (isinstance(value, str) and not value.strip()):
                continue
            cast = casts[key]
            if isinstance(value, bool) or (cast in (int, float) and not isinstance(value, (int, float, str))):
                raise InvalidInput(f"llm config key '{key}': expected a number, got {value!r}")
            try:
                kwargs[key] = cast(value)
            except ValueError:
                raise InvalidInput(f"llm config key '{key}': expected {cast.__name__}, got {value!r}") from None
        if "model" not in kwargs:
            raise InvalidInput(
                "llm config: 'model' is missing; set [llm] model in config.toml or GRAPHMEM_LLM__MODEL "
                "(e.g. \"gpt-4o-mini\", or \"llama3.1\" for Ollama)"
            )
        kwargs.setdefault("base_url", env.get("GRAPHMEM_OPENAI_BASE_URL") or DEFAULT_BASE_URL)
        if not kwargs.get("api_key"):
            kwargs["api_key"] = env.get("OPENAI_API_KEY") or None
        return cls(**kwargs)

    # ----------------------------------------------------------------- extraction

    def extract(self, doc: SourceDocument) -> Extraction:
        """Entities and relations of ``doc`` from the model, validated against ``doc.text``.

        Dropped items are listed in ``extra["warnings"]``. Raises :class:`ExtractionError`
        (message starting with the document id) when no valid answer could be obtained.
        """
        if not doc.text.strip():
            return Extraction(extra=self._extra([], cached=False))
        key = self._cache_key(doc.text)
        raw = self._cache_get(key)
        cached = raw is not None
        if raw is None:
            raw = self._ask(doc)
            self._cache_put(key, doc.text, raw)
        valid, warnings = validate_extraction(raw, doc.text, self.min_confidence, source=f"{doc.doc_id} (llm)")
        said = [f"{doc.doc_id} (llm): {w}" for w in raw.extra.get("warnings", [])]  # the answer's parse (fields)
        return Extraction(valid.entities, valid.relations, self._extra(said + warnings, cached))

    def extract_many(
        self, docs: Iterable[SourceDocument]
    ) -> Iterator[tuple[SourceDocument, Extraction | ExtractionError]]:
        """Extract several documents concurrently (``max_concurrency`` requests at once).

        Yields ``(doc, Extraction)`` or ``(doc, ExtractionError)`` in input order, so one bad
        document does not stop the batch. ``docs`` is consumed lazily: at most a few
        documents per worker are in flight.
        """
        window = self.max_concurrency * 2
        pool = ThreadPoolExecutor(max_workers=self.max_concurrency, thread_name_prefix="graphmem-llm")
        pending: deque[tuple[SourceDocument, Future[Extraction | ExtractionError]]] = deque()
        try:
            for doc in docs:
                pending.append((doc, pool.submit(self._extract_or_error, doc)))
                if len(pending) >= window:
                    head, future = pending.popleft()
                    yield head, future.result()
            while pending:
                head, future = pending.popleft()
                yield head, future.result()
        finally:
            # The consumer may stop early: do not start requests nobody will read.
            for _, future in pending:
                future.cancel()
            pool.shutdown(wait=True)

    def _extract_or_error(self, doc: SourceDocument) -> Extraction | ExtractionError:
        try:
            return self.extract(doc)
        except ExtractionError as exc:
            return exc

    def _extra(self, warnings: list[str], cached: bool) -> dict[str, Any]:
        return {"warnings": list(warnings), "extractor": self.name, "model": self.model,
                "prompt_version": self.prompt_version, "cached": cached}

    def _ask(self, doc: SourceDocument) -> Extraction:
        """One well-formed (not yet validated) extraction from the model; one corrective retry."""
        messages: list[dict[str, str]] = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": _user_message(doc)},
        ]
        content = self._complete(doc, messages)
        try:
            return _parse_content(content)
        except InvalidInput as exc:
            first_error = str(exc)
        log.info("%s: malformed LLM answer (%s); asking once for a correction", doc.doc_id, first_error)
        messages += [
            {"role": "assistant", "content": content if isinstance(content, str) else ""},
            {"role": "user", "content": (
                f"Your answer could not be used: {first_error}. Reply with the corrected JSON object "
                "only, with 'entities' and 'relations' lists as described, and no other text."
            )},
        ]
        content = self._complete(doc, messages)
        try:
            return _parse_content(content)
        except InvalidInput as exc:
            raise ExtractionError(
                f"{doc.doc_id}: the model {self.model!r} returned a malformed extraction twice "
                f"(first: {first_error}; then: {exc})"
            ) from None

    def _complete(self, doc: SourceDocument, messages: list[dict[str, str]]) -> Any:
        """The assistant message content for ``messages`` (falls back to json_object once)."""
        if self._use_json_schema:
            try:
                return self._chat(doc, messages, {"type": "json_schema", "json_schema": RESPONSE_SCHEMA})
            except _SchemaRejected:
                log.info("%s rejects response_format json_schema; using json_object from now on", self.url)
                self._use_json_schema = False
        try:
            return self._chat(doc, messages, {"type": "json_object"})
        except _SchemaRejected as exc:
            raise ExtractionError(f"{doc.doc_id}: {self.url} rejected the request (HTTP 400): {exc}") from None

    def _chat(self, doc: SourceDocument, messages: list[dict[str, str]], response_format: dict[str, Any]) -> Any:
        payload: dict[str, Any] = {"model": self.model, "messages": messages, "response_format": response_format}
        if self.temperature is not None:
            payload["temperature"] = self.temperature
        data = self._post(doc, payload)
        try:
            message = data["choices"][0]["message"]
        except (KeyError, IndexError, TypeError):
            raise ExtractionError(
                f"{doc.doc_id}: {self.url} answered without choices[0].message; "
                "is base_url an OpenAI-compatible chat-completions API?"
            ) from None
        if isinstance(message, Mapping) and message.get("refusal"):
            refusal = self._redact(str(message["refusal"]))[:_ERROR_SNIPPET]
            raise ExtractionError(f"{doc.doc_id}: the model {self.model!r} refused: {refusal}")
        return message.get("content") if isinstance(message, Mapping) else None

    # ----------------------------------------------------------------- HTTP

    def _post(self, doc: SourceDocument, payload: dict[str, Any]) -> Any:
        """POST with retries on 429, 5xx and timeouts; the decoded JSON response."""
        try:
            return post_json(
                self.url, payload, api_key=self._api_key, timeout=self.timeout,
                max_attempts=self.max_attempts, backoff_base=self.backoff_base,
                max_retry_after=self.max_retry_after, limiter=self._limiter, label=doc.doc_id,
            )
        except HTTPFailure as exc:
            raise self._failure(doc, exc) from None

    def _failure(self, doc: SourceDocument, exc: HTTPFailure) -> Exception:
        """The extractor's own wording of an HTTP failure (always naming the document)."""
        if exc.kind == "schema":
            return _SchemaRejected(exc.detail)
        if exc.kind == "auth":
            return ExtractionError(
                f"{doc.doc_id}: {self.url} refused the request (HTTP {exc.status}): the API key is missing "
                f"or wrong; set OPENAI_API_KEY (or api_key in the llm config). Server said: {exc.detail}"
            )
        if exc.kind == "client":
            return ExtractionError(f"{doc.doc_id}: {self.url} answered HTTP {exc.status}: {exc.detail}")
        if exc.kind == "unreachable":
            return ExtractionError(
                f"{doc.doc_id}: cannot reach {self.base_url} ({exc.detail}); is the server running "
                "and base_url right?"
            )
        if exc.kind == "bad_json":
            return ExtractionError(
                f"{doc.doc_id}: {self.url} did not answer JSON; is base_url an OpenAI-compatible API?"
            )
        return ExtractionError(
            f"{doc.doc_id}: LLM request to {self.url} failed after {self.max_attempts} attempts: {exc.detail}"
        )

    def _redact(self, text: str) -> str:
        # Some servers echo the key they rejected; it must never reach a log or a message.
        return text.replace(self._api_key, "***") if self._api_key else text

    # ----------------------------------------------------------------- cache

    def _cache_key(self, text: str) -> str:
        # The prompt fingerprint guards against a forgotten PROMPT_VERSION bump (the prompt is
        # built from the ontology tables, which can change without anyone touching this file).
        parts = (content_hash(text), self.model, self.prompt_version, _PROMPT_FINGERPRINT)
        return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()

    def _cache_get(self, key: str) -> Extraction | None:
        if self.cache_dir is None:
            return None
        path = self.cache_dir / f"{key}.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("model") != self.model or data.get("prompt_version") != self.prompt_version:
                return None
            return parse_extraction(data["extraction"]["entities"], data["extraction"]["relations"])
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            # A damaged entry is only a lost saving: ask the model again and overwrite it.
            # (json.JSONDecodeError and InvalidInput are ValueErrors.)
            log.warning("ignoring unreadable LLM cache entry %s (%s)", path, exc)
            return None

    def _cache_put(self, key: str, text: str, extraction: Extraction) -> None:
        if self.cache_dir is None:
            return
        entry = {"content_hash": content_hash(text), "model": self.model, "prompt_version": self.prompt_version,
                 "created": time.time(), "extraction": extraction.to_dict()}
        try:
            self.cache_dir.mkdir(parents=True, exist_ok=True)
            # Write then rename, so a concurrent reader or a crash never sees half a file.
            fd, tmp = tempfile.mkstemp(prefix=f".{key}.", suffix=".tmp", dir=self.cache_dir)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    json.dump(entry, fh, ensure_ascii=False)
                os.replace(tmp, self.cache_dir / f"{key}.json")
            except BaseException:
                os.unlink(tmp)
                raise
        except OSError as exc:
            # The extraction itself succeeded; failing to cache it must not lose it.
            log.warning("cannot write LLM cache entry in %s (%s)", self.cache_dir, exc)

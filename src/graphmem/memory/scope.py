"""Validation of memory input: scopes, timestamps, metadata, texts; document references."""

from __future__ import annotations

import functools
import json
import math
import re
import unicodedata
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from ..errors import InvalidInput

__all__ = ["SCOPE_FIELDS", "DOC_REF_KEYS", "scope_filters", "scope_key", "session_key", "parse_timestamp",
           "iso", "parse_iso", "check_metadata", "check_text", "doc_refs", "require_scope"]

SCOPE_FIELDS = ("tenant_id", "user_id", "agent_id", "run_id")
DOC_REF_KEYS = ("doc_id", "document_id", "source_id", "source_url", "url")
_URL = re.compile(r"https?://[^\s<>\"')\]]+", re.IGNORECASE)


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def scope_filters(*, writing: bool = False, **fields: Any) -> dict[str, str]:
    """The given scope fields (None dropped), each checked to be a non-empty string; ``writing`` (a new
    memory's scope): also one line of printable text. Reads and deletes take any id already stored."""
    out: dict[str, str] = {}
    for key in SCOPE_FIELDS:
        value = fields.get(key)
        if value is None:
            continue
        if not isinstance(value, str) or not value.strip():
            raise InvalidInput(f"{key}: expected a non-empty string, got {value!r}")
        if writing and _CONTROL.search(value):
            raise InvalidInput(f"{key} {value!r}: contains a control character (NUL, newline, tab ...); an id is "
                               "one line of printable text")
        out[key] = value
    return out


def require_scope(filters: Mapping[str, Any], required: bool, what: str) -> None:
    """Raise when no scope field is given and the configuration demands one."""
    if required and not any(filters.get(k) for k in SCOPE_FIELDS):
        raise InvalidInput(
            f"{what}: give at least one of user_id, agent_id, run_id, tenant_id (memory.require_scope is on; "
            "set it to false in config.toml to allow unscoped memories)")


def scope_key(filters: Mapping[str, Any]) -> str:
    """The isolation key: tenant, user and agent. Memory edges never join two different keys."""
    return json.dumps([filters.get("tenant_id"), filters.get("user_id"), filters.get("agent_id")])


def session_key(filters: Mapping[str, Any]) -> str:
    """A session: the run within the scope key (or the whole scope key without a run)."""
    return json.dumps([filters.get("tenant_id"), filters.get("user_id"), filters.get("agent_id"),
                       filters.get("run_id")])


def iso(dt: datetime) -> str:
    """ISO-8601 UTC with milliseconds and a Z (sortable as text)."""
    return dt.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@functools.lru_cache(maxsize=65536)
def parse_iso(text: str) -> datetime:
    """Inverse of :func:`iso` (any ISO-8601 string; naive means UTC). Memoised: a search's rerank parses
    the ``used_at`` of ~50 candidates, mostly the same strings as the last search's (datetimes are immutable)."""
    dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


def parse_timestamp(value: Any, now: str) -> str:
    """When it was said: a datetime, an ISO-8601 string or epoch seconds (default ``now``)."""
    if value is None:
        return now
    try:
        if isinstance(value, datetime):
            return iso(value if value.tzinfo else value.replace(tzinfo=timezone.utc))
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if not math.isfinite(value):
                raise InvalidInput(f"timestamp: expected a datetime or ISO-8601 string, got {value!r}")
            return iso(datetime.fromtimestamp(value, timezone.utc))
    except (OverflowError, OSError, ValueError):  # 1e20 seconds, year 0, year 1 at +05:00 (before 0001 UTC)
        raise InvalidInput(f"timestamp: {value!r} is outside the years 1 to 9999 (UTC); give a time in that "
                           "range") from None
    if isinstance(value, str):
        try:
            parsed = parse_iso(value.strip())
        except ValueError:
            pass
        else:
            try:
                return iso(parsed)
            except (OverflowError, ValueError):
                raise InvalidInput(f"timestamp: {value!r} is outside the years 1 to 9999 (UTC); give a time in "
                                   "that range") from None
    raise InvalidInput(f"timestamp: expected a datetime or an ISO-8601 string such as 2024-05-01T12:00:00Z, "
                       f"got {value!r}")


def check_metadata(metadata: Any) -> dict[str, Any]:
    """A JSON-serialisable mapping (a copy), or InvalidInput naming the offending key."""
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise InvalidInput(f"metadata: expected a mapping, got {type(metadata).__name__}")
    out: dict[str, Any] = {}
    for key, value in metadata.items():
        if not isinstance(key, str):
            raise InvalidInput(f"metadata key {key!r}: keys must be strings")
        try:
            out[key] = json.loads(json.dumps(value, allow_nan=False))
        except (TypeError, ValueError):
            raise InvalidInput(f"metadata['{key}']: value of type {type(value).__name__} is not JSON-serialisable; "
                               "pass strings, numbers, booleans, lists or mappings") from None
    return out


def check_text(text: Any, field: str, max_chars: int) -> str:
    """A non-blank string of at most ``max_chars`` characters."""
    if not isinstance(text, str):
        raise InvalidInput(f"{field}: expected a string, got {type(text).__name__}")
    if not text.strip():
        raise InvalidInput(f"{field}: the memory text is empty; give the text to remember")
    if "\x00" in text:  # as for documents: no file, socket or search index keeps a NUL as text
        raise InvalidInput(f"{field}: contains NUL characters (\\x00); remove them")
    if not any(unicodedata.category(ch)[0] in "LNPS" for ch in text):
        # only invisible characters (zero-width spaces, a byte-order mark): nothing anyone could search for
        raise InvalidInput(f"{field}: the memory text is empty; give the text to remember")
    if len(text) > max_chars:
        raise InvalidInput(f"{field}: {len(text)} characters is more than memory.max_text_chars ({max_chars}); "
                           "split it or raise the limit")
    return text.strip()


def doc_refs(metadata: Mapping[str, Any], text: str) -> list[str]:
    """Document references of a memory: known metadata keys, then URLs in the text."""
    refs: list[str] = []
    for key in DOC_REF_KEYS:
        value = metadata.get(key)
        if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip():
            refs.append(str(value).strip())
    refs += [u.rstrip(".,;:!?") for u in _URL.findall(text)]
    return list(dict.fromkeys(refs))


def message_items(messages_or_text: Any, max_chars: int) -> list[tuple[str | None, str]]:
    """``(role, text)`` of each memory an add stores: a text, one ``{role, content}`` message, or a list of
    either; InvalidInput naming the bad message otherwise."""
    if isinstance(messages_or_text, str):
        return [(None, check_text(messages_or_text, "text", max_chars))]
    if isinstance(messages_or_text, Mapping):
        messages_or_text = [messages_or_text]
    if not isinstance(messages_or_text, Sequence) or isinstance(messages_or_text, (bytes, bytearray)) \
            or not messages_or_text:
        raise InvalidInput("messages: expected a text or a non-empty list of {role, content} messages")
    out: list[tuple[str | None, str]] = []
    for i, m in enumerate(messages_or_text):
        if isinstance(m, str):
            out.append((None, check_text(m, f"messages[{i}]", max_chars)))
            continue
        if not isinstance(m, Mapping) or "content" not in m:
            raise InvalidInput(f"messages[{i}]: expected a {{role, content}} mapping or a string")
        role = m.get("role")
        if role is not None and (not isinstance(role, str) or not role.strip()):
            raise InvalidInput(f"messages[{i}].role: expected a non-empty string, got {role!r}")
        out.append((role, check_text(m["content"], f"messages[{i}].content", max_chars)))
    return out

"""Where an API key from the environment may go.

A knowledge base folder can come from someone else, and its ``config.toml`` can name any
server as ``[llm] base_url`` or ``[embeddings] base_url``. ``$OPENAI_API_KEY`` belongs to the
user, not to the folder, so it is only sent to an address the user chose:

* one from the environment (``GRAPHMEM_OPENAI_BASE_URL``, ``GRAPHMEM_LLM__BASE_URL``, ...), from a
  Python argument (``graphmem.open(config=...)``, ``LLMExtractor(base_url=...)``) or the
  built-in default (``https://api.openai.com/v1``);
* or one the knowledge base's ``config.toml`` names and the user confirmed with
  ``graphmem config trust``, recorded OUTSIDE the folder in
  ``$XDG_CONFIG_HOME/graphmem/trusted.toml`` (default ``~/.config``), keyed by the folder's
  absolute path and the address. Changing the address in the file needs a new confirmation.

A ``config.toml`` cannot hold a key at all (``api_key`` is not a config key), so a folder
never supplies both the key and the address. Without ``$OPENAI_API_KEY`` nothing secret is at
stake and the file's address is used as is (a local Ollama, say).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import InvalidInput

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

if TYPE_CHECKING:
    from .config import Config

__all__ = ["KEY_ENV", "ENDPOINT_SECTIONS", "trust_file", "normalise_url", "file_endpoints",
           "trusted_urls", "trust_endpoints", "revoke_endpoints", "endpoint_api_key"]

KEY_ENV = "OPENAI_API_KEY"
ENDPOINT_SECTIONS = ("llm", "embeddings")  # config tables whose base_url may receive the key
_SUFFIXES = ("/chat/completions", "/embeddings")


def trust_file(environ: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CONFIG_HOME/graphmem/trusted.toml`` (``~/.config/...`` when unset)."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "graphmem" / "trusted.toml"


def normalise_url(url: str) -> str:
    """The address as the clients use it: no surrounding blanks, trailing slash or endpoint."""
    url = url.strip().rstrip("/")
    for suffix in _SUFFIXES:
        if url.endswith(suffix):
            url = url[: -len(suffix)]
    return url


def _home_key(home: Path) -> str:
    return str(Path(home).resolve())


def file_endpoints(config: Config) -> dict[str, str]:
    """``{section: base_url}`` for the addresses that come from the knowledge base's config.toml."""
    out: dict[str, str] = {}
    for section in ENDPOINT_SECTIONS:
        value = str(config.section(section).base_url or "")
        if value.strip() and config.origin(section, "base_url") == "file":
            out[section] = normalise_url(value)
    return out


def _read(environ: Mapping[str, str] | None) -> list[dict[str, str]]:
    path = trust_file(environ)
    if not path.exists():
        return []
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InvalidInput(f"{path}: cannot read the trusted endpoints ({exc}); fix or delete the file") from None
    entries = data.get("trusted", [])
    if not isinstance(entries, list):
        raise InvalidInput(f"{path}: 'trusted' must be an array of tables; fix or delete the file")
    return [{"home": str(e["home"]), "url": str(e["url"])} for e in entries
            if isinstance(e, dict) and "home" in e and "url" in e]


def _write(entries: list[dict[str, str]], environ: Mapping[str, str] | None) -> Path:
    path = trust_file(environ)
    lines = ["# Addresses a knowledge base's config.toml may send $OPENAI_API_KEY to.",
             "# Written by `graphmem config trust`; one [[trusted]] table per knowledge base and address.", ""]
    for e in entries:
        # JSON strings are valid TOML basic strings.
        lines += ["[[trusted]]", f"home = {json.dumps(e['home'])}", f"url = {json.dumps(e['url'])}", ""]
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".trusted.toml.{os.getpid()}.tmp")
        tmp.write_text("\n".join(lines), encoding="utf-8")
        tmp.replace(path)
    except OSError as exc:
        raise InvalidInput(f"{path}: cannot record the trusted endpoints ({exc.strerror})") from None
    return path


def trusted_urls(home: Path, environ: Mapping[str, str] | None = None) -> set[str]:
    """The addresses the user trusted for the knowledge base at ``home``."""
    key = _home_key(home)
    return {e["url"] for e in _read(environ) if e["home"] == key}


def trust_endpoints(home: Path, config: Config | None = None,
                    environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Trust the addresses ``home``'s config.toml names (``{section: url}``; empty when none)."""
    if config is None:
        from .config import load_config

        config = load_config(Path(home), environ=environ)
    wanted = file_endpoints(config)
    entries = _read(environ)
    key = _home_key(home)
    have = {(e["home"], e["url"]) for e in entries}
    entries += [{"home": key, "url": url} for url in dict.fromkeys(wanted.values()) if (key, url) not in have]
    if wanted:
        _write(entries, environ)
    return wanted


def revoke_endpoints(home: Path, environ: Mapping[str, str] | None = None) -> list[str]:
    """Forget every address trusted for ``home``; returns them."""
    key = _home_key(home)
    entries = _read(environ)
    gone = [e["url"] for e in entries if e["home"] == key]
    if gone:
        _write([e for e in entries if e["home"] != key], environ)
    return gone


def endpoint_api_key(config: Config, home: Path, section: str,
                     environ: Mapping[str, str] | None = None) -> str | None:
    """``$OPENAI_API_KEY`` if the key may go to ``[section] base_url`` as configured, else None
    when there is no key; InvalidInput (nothing sent) when the address is the folder's own
    choice and the user has not trusted it."""
    env = os.environ if environ is None else environ
    key = env.get(KEY_ENV) or None
    url = file_endpoints(config).get(section)
    if key is None or url is None or url in trusted_urls(home, environ):
        return key
    cfg_path = Path(home) / "config.toml"
    raise InvalidInput(
        f"refusing to send ${KEY_ENV} to {url}: that address is [{section}] base_url in {cfg_path}, and a "
        f"knowledge base folder does not choose where your key goes; nothing was sent. If you trust it, run "
        f"`graphmem --home {Path(home).resolve()} config trust` (recorded in {trust_file(environ)}), or set "
        f"the address yourself with GRAPHMEM_{section.upper()}__BASE_URL, or unset {KEY_ENV} for a server "
        "that needs no key"
    )

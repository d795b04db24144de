"""Who may reach a server: the loopback and bearer-token rules shared by every network interface.

Pure functions (no I/O, nothing above :mod:`graphmem.errors`), so ``graphmem mcp`` and ``graphmem
serve`` apply the same rules: a loopback address needs no token, any other address does, a token
must not be blank, and a bearer token is compared in constant time.
"""

from __future__ import annotations

import hmac
import ipaddress

from .errors import InvalidInput

__all__ = ["is_loopback_host", "check_bind", "bearer_ok"]

_LOCALHOST_NAMES = ("localhost", "localhost.")


def is_loopback_host(host: str) -> bool:
    """True for ``localhost`` (any case, with or without the trailing dot), 127.0.0.0/8 and ::1
    (bracketed or not). Any other name is not loopback: it may resolve to anything."""
    h = host.strip().lower()
    if h in _LOCALHOST_NAMES:
        return True
    try:
        return ipaddress.ip_address(h.removeprefix("[").removesuffix("]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, token: str | None) -> None:
    """Refuse a blank token, and refuse to listen beyond this machine without a token (anyone on
    the network could read and change the knowledge base)."""
    if token is not None and not token.strip():
        raise InvalidInput("--token: the token is empty; give a long random string (e.g. `openssl rand -hex 32`)")
    if token is None and not is_loopback_host(host):
        raise InvalidInput(f"--host {host}: serving beyond this machine needs a token; pass --token T or set "
                           "GRAPHMEM_TOKEN (clients then send 'Authorization: Bearer T'), or listen on 127.0.0.1")


def bearer_ok(header: str | bytes | None, token: str) -> bool:
    """True when the ``Authorization`` header value is ``Bearer <token>`` (scheme in any case;
    the secret compared in constant time). A blank token never matches."""
    if not token.strip() or header is None:
        return False
    raw = header.encode("latin-1", "replace") if isinstance(header, str) else header
    scheme, _, secret = raw.strip().partition(b" ")
    if scheme.lower() != b"bearer":
        return False
    return hmac.compare_digest(secret.strip(), token.strip().encode("utf-8"))

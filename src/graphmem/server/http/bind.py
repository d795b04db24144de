"""What may be served where: loopback addresses need no token, every other address does."""

from __future__ import annotations

import ipaddress

from ...errors import InvalidInput

__all__ = ["is_loopback", "check_bind"]


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and ``localhost``."""
    if host.strip().lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name other than localhost may resolve to anything


def check_bind(host: str, token: str | None) -> None:
    """Refuse to bind a non-loopback address without a token (anyone on the network could read
    and change the knowledge base), and refuse an empty token."""
    if token is not None and not token.strip():
        raise InvalidInput("--token: the token is empty; give a long random string (e.g. `openssl rand -hex 32`)")
    if token is None and not is_loopback(host):
        raise InvalidInput(f"--host {host}: serving beyond this machine needs a token; pass --token T (clients "
                           "then send 'Authorization: Bearer T') or bind 127.0.0.1")

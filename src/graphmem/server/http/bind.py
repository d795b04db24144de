"""What may be served where: the rules every network interface shares (:mod:`graphmem.netguard`):
loopback addresses need no token, every other address does, and a token is never blank."""

from __future__ import annotations

from ...netguard import check_bind
from ...netguard import is_loopback_host as is_loopback

__all__ = ["is_loopback", "check_bind"]

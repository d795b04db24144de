"""The store protocol, kept importable here: it lives in :mod:`graphmem.store.protocols` (one small
protocol per concern, ``Store`` their union), with its contract suite in ``tests/store_contract/``."""

from __future__ import annotations

from .protocols import Store

__all__ = ["Store"]

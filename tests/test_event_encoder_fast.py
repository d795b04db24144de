"""store/sqlite/events.py encodes appended events' payloads with json's C encoder made once (``_encode_fast``):
it must give ``_encode``'s text byte for byte (the change feed and dumps carry it), and refuse what it refuses."""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

import pytest

from graphmem.store.sqlite.events import _encode, _encode_fast

VALUES: list[Any] = [
    {"a": 1, "b": [1.5, -0.0, 2 ** 70, -(2 ** 70)], "c": None, "d": True},
    [math.nan, math.inf, -math.inf, 1e-320, 0.1 + 0.2],
    {"zoë": "café ☕ \u0000\u001f\u2028 \"quoted\" \\ back", "emoji": "🧠"},
    {7: "int key", 2.5: "float key", True: "bool key", None: "none key"},
    {"when": dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.timezone.utc), "set": {3}},  # default=str
    ("a", ("tuple", "in", "tuple")),
    {"deep": [[[[{"x": [1, {"y": "z"}]}]]]]},
    "just a string", 7, 3.25, None, [], {},
]


@pytest.mark.parametrize("value", VALUES)
def test_the_fast_encoder_writes_the_same_text(value: Any) -> None:
    assert _encode_fast(value) == _encode(value)


def test_a_cyclic_payload_is_refused_as_before() -> None:
    cyclic: dict[str, Any] = {}
    cyclic["self"] = cyclic
    with pytest.raises(ValueError, match="Circular reference"):
        _encode(cyclic)
    with pytest.raises(ValueError, match="Circular reference"):
        _encode_fast(cyclic)

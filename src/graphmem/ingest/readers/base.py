"""What readers share: the Skipped record and strict, explained decoding."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["Skipped", "decode_text", "NotText"]


@dataclass(frozen=True)
class Skipped:
    """A file (or one record of a bulk file) that was not ingested, and why."""

    path: str
    reason: str
    line: int | None = None

    def to_dict(self) -> dict[str, object]:
        """Plain data for the summary."""
        return {"path": self.path, "line": self.line, "reason": self.reason}

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line is not None else self.path
        return f"{where}: {self.reason}"


class NotText(Exception):
    """The bytes are not a text document (binary, or not UTF-8)."""


def decode_text(raw: bytes, path: Path) -> str:
    """UTF-8 (BOM tolerated) or a NotText naming the first bad byte."""
    if b"\x00" in raw[:8192]:
        raise NotText("binary file (NUL bytes); not a text document")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise NotText(f"not UTF-8 text (invalid byte 0x{raw[exc.start]:02x} on line {line}); "
                      "convert it to UTF-8") from None

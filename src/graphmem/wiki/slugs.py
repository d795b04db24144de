"""Slugs and paths of wiki pages: lowercase, hyphens, ASCII-folded, never outside ``wiki/``.

A page lives at ``wiki/<category>/<slug>.md``. Both parts come from :func:`slugify`, which
keeps only ``[a-z0-9-]``, so ``../../etc/passwd`` becomes ``etc-passwd`` and an absolute path
loses its slashes; a title with NUL or control characters is rejected (it is almost always a
bug upstream), and so is a title with nothing to make a slug of (only punctuation).
:func:`page_path` checks the final path once more against the wiki folder.
"""

from __future__ import annotations

import os
import re
import unicodedata
from pathlib import Path

from ..errors import InvalidInput
from ..text import short_id

__all__ = [
    "MAX_SLUG",
    "RESERVED_DIRS",
    "check_text",
    "slugify",
    "category_slug",
    "fallback_slug",
    "shard_of",
    "legacy_shard_of",
    "SUMMARY_PREFIX",
    "page_path",
    "unique_slug",
]

MAX_SLUG = 80
# Folders of wiki/ that hold no pages: graphmem's index shards and Obsidian's settings.
RESERVED_DIRS = frozenset({"_index", ".obsidian", ".trash"})
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_NON_SLUG = re.compile(r"[^a-z0-9]+")
# Latin letters NFKD does not decompose into ASCII.
_LATIN = str.maketrans({"ß": "ss", "æ": "ae", "Æ": "AE", "ø": "o", "Ø": "O", "đ": "d", "Đ": "D", "ł": "l",
                        "Ł": "L", "þ": "th", "Þ": "Th", "œ": "oe", "Œ": "OE", "ı": "i"})
_BAD_PART = re.compile(r"[/\\\x00-\x1f\x7f:]")
# Names Windows refuses as file names; a page called "Con" must still open everywhere.
# wiki/index.md and wiki/log.md are graphmem's: a page slugged "index" made every [[index]] (the shards' "Back to
# [[index]]" too) ambiguous in Obsidian and to graphmem's own link resolution
_WIKI_FILES = frozenset({"index", "log"})
_WINDOWS_RESERVED = frozenset(
    {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(1, 10)), *(f"lpt{i}" for i in range(1, 10))}
)


def check_text(field: str, value: object, max_len: int = 500) -> str:
    """``value`` as a stripped one-line string; InvalidInput naming ``field`` otherwise."""
    if not isinstance(value, str):
        raise InvalidInput(f"{field}: expected a string, got {type(value).__name__}")
    text = value.strip()
    if not text:
        raise InvalidInput(f"{field}: must not be empty")
    if _CONTROL.search(text):
        raise InvalidInput(f"{field} {text!r}: contains NUL or control characters; remove them")
    if len(text) > max_len:
        raise InvalidInput(f"{field}: at most {max_len} characters (got {len(text)})")
    return text


def slugify(text: str, field: str = "title") -> str:
    """The slug of ``text``: NFKD-folded to ASCII, lowercase, runs of other characters -> ``-``.

    ``"Café Crème"`` -> ``cafe-creme``; ``"../../etc/passwd"`` -> ``etc-passwd``. Text in a
    script with no ASCII form (``"日本語"``) gets ``page-<hash>``; text with no letters or
    digits at all raises InvalidInput naming ``field``.
    """
    text = check_text(field, text)
    folded = unicodedata.normalize("NFKD", text.translate(_LATIN)).encode("ascii", "ignore").decode("ascii").lower()
    slug = _NON_SLUG.sub("-", folded).strip("-")
    if len(slug) > MAX_SLUG:
        cut = slug[:MAX_SLUG]
        slug = (cut.rsplit("-", 1)[0] if "-" in cut[MAX_SLUG // 2 :] else cut).strip("-")
    if not slug:
        if any(ch.isalnum() for ch in text):
            return "page-" + short_id("", unicodedata.normalize("NFC", text))[:10]
        raise InvalidInput(
            f"{field} {text!r}: has no letters or digits to make a page name from; use a descriptive {field}"
        )
    if slug in _WINDOWS_RESERVED or (slug in _WIKI_FILES and field != "category"):
        slug += "-page"
    return slug


def fallback_slug(key: str) -> str:
    """The slug of a generated page whose title gives none (``'!!!'``, too long, control
    characters): from the id in its subject key (``doc:doc_7`` -> ``doc-7``), else a hash."""
    try:
        return slugify(key.split(":", 1)[-1], "id")
    except InvalidInput:
        return "page-" + short_id("", key)[:10]


def category_slug(category: str) -> str:
    """The folder name of a category (a slug; ``_index`` and hidden names are reserved)."""
    return slugify(category, "category")


# A generated summary page is ``summary/doc-<title>.md`` (wiki/generate.py says why).
SUMMARY_PREFIX = "doc-"


def shard_of(slug: str) -> str:
    """The index shard of a page: the first two characters of its slug (``_`` for anything
    else), so that a shard file stays small in a big wiki (``memory-leak`` -> ``me``). A summary
    page's ``doc-`` is skipped (``doc-memory-leak`` -> ``me``): with it, one shard listed every
    summary page, and each ingest batch rendered that file again in full."""
    if slug.startswith(SUMMARY_PREFIX) and len(slug) > len(SUMMARY_PREFIX):
        slug = slug[len(SUMMARY_PREFIX):]
    return _first_two(slug)


def legacy_shard_of(slug: str) -> str:
    """The shard graphmem gave a page before summary pages were sharded by title: a row written
    then keeps it until the page is written again (see :func:`shard_of`)."""
    return _first_two(slug)


def _first_two(slug: str) -> str:
    return "".join(ch if ("a" <= ch <= "z" or "0" <= ch <= "9") else "_" for ch in (slug[:2] or "_"))


def page_path(wiki_dir: Path, category: str, slug: str) -> Path:
    """``wiki_dir/<category>/<slug>.md``; each part must be one plain path component (no
    separator, no ``..``, not hidden), so the path cannot leave ``wiki_dir``."""
    for field, part in (("category", category), ("slug", slug)):
        if (not part or part in (".", "..") or part.startswith(".") or _BAD_PART.search(part)
                or os.path.isabs(part)):
            raise InvalidInput(f"{field} {part!r}: not a valid page name (letters, digits and '-' only)")
    return wiki_dir / category / f"{slug}.md"


def unique_slug(base: str, taken: set[str] | frozenset[str]) -> str:
    """``base``, or ``base-2``, ``base-3``... the first one not in ``taken``."""
    if base not in taken:
        return base
    n = 2
    while f"{base}-{n}" in taken:
        n += 1
    return f"{base}-{n}"

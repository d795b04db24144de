"""Pages that hold only what graphmem wrote, and the files a killed writer left in place.

An ingest renames its page files into place just before its store transaction commits (so that a failed
rename can still undo the rows). A process killed between the two leaves page files without rows. The next
run regenerates those pages; a file at a page's slug then looks like one a person dropped there unindexed,
which graphmem never overwrites, so every page of the batch used to get a second copy under a numbered slug.
A file that is only graphmem's own output for the same page (its keys, its heading, its generated block,
the same category and title) is taken back instead: overwriting it loses nothing anyone wrote.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .files import read_bytes
from .markdown import generated_block, heading_text, html_safe, split_front_matter

__all__ = ["OWN_KEYS", "only_generated", "own_leftover"]

# What graphmem itself writes in a generated page's front matter: any other key is a person's.
OWN_KEYS = frozenset({"title", "aliases", "category", "tags", "source_documents", "updated"})


def only_generated(front_matter: dict[str, Any], body: str, title: str) -> bool:
    """Whether a page with this front matter and body holds nothing but graphmem's: only its own keys, and
    outside the generated block at most the heading ``# title``."""
    if not set(front_matter) <= OWN_KEYS:
        return False
    span = generated_block(body)
    rest = body if span is None else body[: span[0]] + body[span[1]:]
    heading = str(front_matter.get("title", title))
    # the heading as graphmem writes it now, or as it did before
    return rest.strip() in ("", f"# {heading}", f"# {html_safe(heading)}", f"# {heading_text(heading)}")


def own_leftover(wiki_dir: Path, path: Path, category: str, title: str) -> bool:
    """Whether the unindexed file at ``path`` is graphmem's own generated page of ``category`` titled
    ``title``, as a killed writer leaves it (a generated block, nothing else anyone wrote)."""
    raw = read_bytes(wiki_dir, path)
    if raw is None:
        return False
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    fm, body, _, error = split_front_matter(text)
    return (error is None and generated_block(body) is not None and fm.get("category") == category
            and fm.get("title") == title and only_generated(fm, body, title))

"""Exit status of ``graphmem ingest``, decided from its summary (kept apart so the command stays thin).

0  everything named was read (added, new version or unchanged) and nothing failed (or, with --prune,
   nothing was left to read and the documents of the gone files were removed);
1  nothing was ingested: no document was read (missing path, only unsupported files) or every one failed;
2  usage error (click: unknown option, missing argument);
3  partial failure: some documents were ingested, but a named path is missing, a named file was
   skipped, or a document failed;
130 interrupted (finished documents are committed).

Why not 1 for a partial failure: a script re-running an ingest wants to tell "nothing happened"
(fix the command) from "most of it worked" (look at the failed files) without parsing the output.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["EXIT_CODES_HELP", "ingest_outcome"]

EXIT_CODES_HELP = ("Exit status: 0 all fine (unchanged files count as fine); 1 nothing was ingested (a missing "
                   "path, only unsupported files, or every document failed); 2 usage error; 3 partial failure "
                   "(some documents ingested, some named paths missing or skipped, or some documents failed); "
                   "130 interrupted.")


def _resolved(path: str | Path) -> Path:
    try:
        return Path(path).expanduser().resolve()
    except (OSError, RuntimeError, ValueError):  # ValueError: a NUL in a skipped record id
        return Path(path)


def ingest_outcome(summary: dict[str, Any], paths: Sequence[Path]) -> tuple[int, str | None]:
    """``(exit status, one line for stderr or None)`` for an ingest summary over ``paths``."""
    missing = [str(p) for p in paths if not p.exists()]
    named_files = {_resolved(p) for p in paths if p.is_file()}
    # A skipped entry names a document id: for a file given alone that is its own name (ids of
    # files found in folders always start with the folder), so match on the name too, never on
    # the id resolved against the working directory (that made the code depend on where it ran).
    named_ids = {p.name for p in paths if p.is_file()}
    skipped_named = [sk["path"] for sk in summary["skipped"]
                     if sk["path"] in named_ids or _resolved(sk["path"]) in named_files]
    failed = len(summary["failed"])
    read = summary["added"] + summary["new_versions"] + summary["unchanged"]
    problems = []
    if missing:
        problems.append(f"not found: {', '.join(missing)}")
    if skipped_named:
        problems.append(f"skipped: {', '.join(skipped_named)}")
    if failed:
        problems.append(f"{failed} document(s) failed")
    if read == 0 and summary["pruned"] and not problems:
        return 0, None  # --prune of a folder whose files are all gone: removing them was the work asked for
    if read == 0:
        if summary["skipped"] and not missing:
            problems.append(f"{len(summary['skipped'])} file(s) skipped, none readable")
        why = "; ".join(problems) or "no readable files under the given paths"
        return 1, f"nothing was ingested ({why}); see the summary above"
    if problems:
        return 3, f"partly ingested: {'; '.join(problems)}; see the summary above"
    return 0, None

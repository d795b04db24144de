"""kill -9 after an ingest renamed some wiki pages into place but before its COMMIT: the files are on
disk, their rows are not. The next run must take those pages back (graphmem wrote them and nobody
changed them), not write a second copy of each under a numbered slug.

The kill is placed exactly: the child process replaces ``os.replace`` in the wiki's file module with
one that kills the process after the third rename (the batch's three page files; its index files and
the COMMIT come after).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import graphmem
from graphmem.portability import check

pytestmark = [pytest.mark.reliability]

NOTE = "# Note\n\nThe Dispatch API calls Ledger DB.\n"
ENV = {**os.environ, "GRAPHMEM_EMBED_MODEL": "none"}


def _killed_ingest(home: Path, docs: Path, after_renames: int = 3) -> int:
    child = textwrap.dedent(f"""
        import os, signal
        import graphmem, graphmem.wiki.files as files
        real, done = os.replace, [0]
        class Os:
            def __getattr__(self, name):
                return getattr(os, name)
            def replace(self, src, dst):
                real(src, dst)
                done[0] += 1
                if done[0] == {after_renames}:
                    os.kill(os.getpid(), signal.SIGKILL)
        files.os = Os()
        kb = graphmem.open({str(home)!r}, config={{"embeddings": {{"model": "none"}}}})
        kb.ingest_paths([{str(docs)!r}])
    """)
    return subprocess.run([sys.executable, "-c", child], env=ENV, capture_output=True).returncode


def _page_files(home: Path) -> list[str]:
    wiki = home / "wiki"
    return sorted(str(p.relative_to(wiki)) for folder in ("summary", "entity") if (wiki / folder).is_dir()
                  for p in (wiki / folder).glob("*.md"))


@pytest.fixture()
def killed(tmp_path: Path) -> tuple[Path, Path]:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "note.md").write_text(NOTE, encoding="utf-8")
    home = tmp_path / "kb"
    assert _killed_ingest(home, docs) == -9
    assert _page_files(home) == ["entity/dispatch-api.md", "entity/ledger-db.md", "summary/doc-note.md"]
    return home, docs


def test_pages_left_by_a_killed_ingest_are_taken_back_not_duplicated(killed: tuple[Path, Path]) -> None:
    home, docs = killed
    with graphmem.open(home) as kb:
        kb.ingest_paths([docs])  # the document is stored already; its pages are regenerated
        pages = sorted(f"{p.category}/{p.slug}" for p in kb.wiki.list_pages() if p.category in ("summary", "entity"))
        found = check(kb.ctx, False)
    assert pages == ["entity/dispatch-api", "entity/ledger-db", "summary/doc-note"]
    assert _page_files(home) == ["entity/dispatch-api.md", "entity/ledger-db.md", "summary/doc-note.md"]
    assert found["wiki"] == []
    text = (home / "wiki" / "summary" / "doc-note.md").read_text(encoding="utf-8")
    assert "[[dispatch-api]]" in text and "[[ledger-db]]" in text


def test_a_left_page_a_person_wrote_in_is_kept(killed: tuple[Path, Path]) -> None:
    home, docs = killed
    left = home / "wiki" / "summary" / "doc-note.md"
    left.write_text(left.read_text(encoding="utf-8") + "\nMy own notes on this.\n", encoding="utf-8")
    with graphmem.open(home) as kb:
        kb.ingest_paths([docs])
    # their text is not overwritten: the generated summary goes to the next free slug, as for any
    # unindexed file a person dropped there
    assert "My own notes on this." in left.read_text(encoding="utf-8")
    assert (home / "wiki" / "summary" / "doc-note-2.md").is_file()


def test_a_left_page_is_rewritten_for_a_changed_document_without_a_false_edit_warning(
        killed: tuple[Path, Path], recwarn: pytest.WarningsRecorder) -> None:
    """Taken back, the leftover must also be replaced: the commit's edit check compared it with 'no file' and
    kept the killed run's version 1 text, warning that someone had edited it (nobody had)."""
    home, docs = killed
    (docs / "note.md").write_text(NOTE + "\nLedger DB stores Invoices.\n", encoding="utf-8")
    with graphmem.open(home) as kb:
        kb.ingest_paths([docs])
    text = (home / "wiki" / "summary" / "doc-note.md").read_text(encoding="utf-8")
    assert "docs/note.md@v2" in text and "Invoices" in text
    assert not [w for w in recwarn if "changed on disk" in str(w.message)]

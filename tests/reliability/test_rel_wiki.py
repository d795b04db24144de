"""Reliability of the wiki (issue 12): concurrent sync never drops a committed page, nothing
is read, written or deleted through a symlink inside wiki/, a title with nothing to make a
slug of never blocks page regeneration, and temp files of dead processes are cleaned up."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import graphmem
from graphmem.errors import BackendError, NotFound, StoreBusy

pytestmark = pytest.mark.reliability


# -- defect 2: a concurrent sync deletes pages another process just committed ------------------------

WRITERS = 3
PAGES_PER_WRITER = 400


def _write_pages(home: str, writer: int, n: int, out: Any) -> None:
    """Write ``n`` pages; put the (slug, path) of every acknowledged write on ``out``."""
    os.environ["GRAPHMEM_EMBED_MODEL"] = "none"
    acked = []
    with graphmem.open(home, config={"store": {"busy_timeout": 60.0}}) as kb:
        for i in range(n):
            r = kb.wiki.write_page("notes", f"writer {writer} page {i}", f"Page {i} of writer {writer}.\n")
            acked.append((r["slug"], r["path"]))
    out.put(acked)


def _list_and_sync(home: str, stop: Any, rounds: Any) -> None:
    """Loop list_pages and sync until ``stop`` is set (the process that used to drop pages)."""
    os.environ["GRAPHMEM_EMBED_MODEL"] = "none"
    with graphmem.open(home, config={"store": {"busy_timeout": 60.0}, "wiki": {"autosync_interval": 0}}) as kb:
        n = 0
        while not stop.is_set():
            try:
                kb.wiki.list_pages()
                kb.wiki.sync()
            except StoreBusy:
                pass
            n += 1
        rounds.value = n


@pytest.mark.slow
def test_concurrent_writers_and_sync_lose_no_acknowledged_page(tmp_path: Path) -> None:
    home = str(tmp_path / "kb")
    graphmem.open(home).close()
    ctx = multiprocessing.get_context("spawn")
    out, stop, rounds = ctx.Queue(), ctx.Event(), ctx.Value("i", 0)
    syncer = ctx.Process(target=_list_and_sync, args=(home, stop, rounds))
    syncer.start()
    writers = [ctx.Process(target=_write_pages, args=(home, w, PAGES_PER_WRITER, out)) for w in range(WRITERS)]
    for p in writers:
        p.start()
    acked = [item for _ in writers for item in out.get(timeout=120)]
    for p in writers:
        p.join(timeout=60)
    stop.set()
    syncer.join(timeout=60)
    assert [p.exitcode for p in writers] == [0] * WRITERS and syncer.exitcode == 0
    assert rounds.value > 0
    assert len(acked) == WRITERS * PAGES_PER_WRITER
    with graphmem.open(home) as kb:
        rows = kb.store.pages_by_slug(slug for slug, _ in acked)
        lost_rows = sorted(slug for slug, _ in acked if slug not in rows)
        lost_files = sorted(path for _, path in acked if not Path(path).is_file())
    assert lost_rows == [] and lost_files == [], f"{len(lost_rows)} rows, {len(lost_files)} files lost"


INGESTERS = 3
DOCS_PER_INGESTER = 300


def _ingest_docs(home: str, writer: int, n: int, out: Any) -> None:
    """Ingest ``n`` documents (each regenerates its summary page and a shared entity's page);
    put the subject of every acknowledged document's summary page on ``out``."""
    os.environ["GRAPHMEM_EMBED_MODEL"] = "none"
    acked = []
    with graphmem.open(home, config={"store": {"busy_timeout": 60.0}}) as kb:
        for i in range(n):
            first = f"Gadget {writer}-{i} depends on the shared bus."
            kb.ingest_with_content(
                f"d{writer}_{i}", f"Report {writer} {i}", f"r{writer}_{i}.txt", first + " The shared bus is a part.",
                [{"name": f"gadget {writer}-{i}", "type": "component", "supporting_text": first},
                 {"name": "shared bus", "type": "component", "supporting_text": "The shared bus is a part."}],
                [{"source": f"gadget {writer}-{i}", "target": "shared bus", "type": "depends on",
                  "confidence": 0.9, "supporting_text": first}])
            acked.append(f"doc:d{writer}_{i}")
    out.put(acked)


@pytest.mark.slow
def test_concurrent_ingests_and_sync_lose_no_generated_page(tmp_path: Path) -> None:
    home = str(tmp_path / "kb")
    graphmem.open(home).close()
    ctx = multiprocessing.get_context("spawn")
    out, stop = ctx.Queue(), ctx.Event()
    rounds = [ctx.Value("i", 0) for _ in range(2)]  # kept referenced until the children have them
    syncers = [ctx.Process(target=_list_and_sync, args=(home, stop, r)) for r in rounds]
    for p in syncers:
        p.start()
    ingesters = [ctx.Process(target=_ingest_docs, args=(home, w, DOCS_PER_INGESTER, out)) for w in range(INGESTERS)]
    for p in ingesters:
        p.start()
    acked = [item for _ in ingesters for item in out.get(timeout=180)]
    for p in ingesters:
        p.join(timeout=60)
    stop.set()
    for p in syncers:
        p.join(timeout=60)
    assert [p.exitcode for p in ingesters + syncers] == [0] * (INGESTERS + 2)
    assert all(r.value > 0 for r in rounds)
    assert len(acked) == INGESTERS * DOCS_PER_INGESTER
    with graphmem.open(home) as kb:
        pages = kb.store.pages_by_subject(acked)
        lost = sorted(k for k in acked if k not in pages or not (kb.wiki.dir / pages[k].path).is_file())
        assert kb.store.wiki_dirty() == []
    assert lost == [], f"{len(lost)} generated summary pages lost"


# -- defect 3: symlinks inside wiki/ are followed ---------------------------------------------------------


def _tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` with its bytes (links not followed)."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.is_symlink()}


@pytest.fixture
def wkb(tmp_path: Path) -> Any:
    """A knowledge base with one page, and a folder ``outside`` next to it holding a secret."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("the zebrapassword is hunter2\n", encoding="utf-8")
    with graphmem.open(tmp_path / "kb") as kb:
        kb.wiki.write_page("notes", "Existing", "A page that was there before.\n")
        yield kb


def _outside(wkb: Any) -> Path:
    return wkb.home.parent / "outside"


def test_symlinked_category_folder_is_refused_and_nothing_is_written_outside(wkb):
    os.symlink("../../outside", wkb.wiki.dir / "evil")
    before = _tree(_outside(wkb))
    with pytest.warns(UserWarning, match=r"wiki/evil/ skipped"), pytest.raises(BackendError,
                                                                           match=r"evil.*symbolic link"):
        wkb.wiki.write_page("evil", "Planted", "planted text\n")
    assert _tree(_outside(wkb)) == before and not (_outside(wkb) / "planted.md").exists()
    assert wkb.store.get_page("planted") is None


def test_cli_wiki_write_through_symlinked_folder_fails_with_one_line(wkb):
    os.symlink("../../outside", wkb.wiki.dir / "evil")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHMEM_")}
    env.update(GRAPHMEM_EMBED_MODEL="none")
    p = subprocess.run([sys.executable, "-m", "graphmem", "--home", str(wkb.home), "wiki", "write", "evil",
                        "Planted", "--content", "planted"], capture_output=True, text=True, env=env, timeout=60)
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr
    errors = [ln for ln in p.stderr.splitlines() if ln.strip() and not ln.startswith("note:")]
    assert len(errors) == 1 and "evil" in errors[0] and "symbolic link" in errors[0], p.stderr
    assert not (_outside(wkb) / "planted.md").exists()


def test_symlinked_log_md_is_not_appended_to(wkb):
    log = wkb.wiki.dir / "log.md"
    target = _outside(wkb) / "log-target.md"
    target.write_bytes(log.read_bytes())
    log.unlink()
    os.symlink(target, log)
    before = target.read_bytes()
    with pytest.raises(BackendError, match=r"log\.md.*symbolic link"):
        wkb.wiki.write_page("notes", "Another", "text\n")
    assert target.read_bytes() == before
    assert wkb.store.get_page("another") is None and not (wkb.wiki.dir / "notes" / "another.md").exists()


def test_log_md_turned_into_a_link_after_the_commit_is_a_warning_not_a_failed_write(wkb, monkeypatch):
    from graphmem.wiki import core

    real = core.append_line

    def link_appears(root, path, text):  # log.md becomes a link between the check and the append
        os.symlink(_outside(wkb) / "secret.txt", path.with_name("log-link.md"))
        os.replace(path.with_name("log-link.md"), path)
        return real(root, path, text)

    monkeypatch.setattr(core, "append_line", link_appears)
    before = _tree(_outside(wkb))
    with pytest.warns(UserWarning, match=r"saved, but its log\.md line is not.*symbolic link"):
        r = wkb.wiki.write_page("notes", "Raced", "text\n")
    assert Path(r["path"]).is_file() and wkb.store.get_page("raced") is not None
    assert _tree(_outside(wkb)) == before


@pytest.mark.filterwarnings("ignore:wiki/notes/.*symbolic link:UserWarning")
def test_symlinked_page_never_makes_an_outside_file_readable_or_searchable(wkb):
    link = wkb.wiki.dir / "notes" / "secret.md"
    os.symlink(_outside(wkb) / "secret.txt", link)
    before = _tree(_outside(wkb))
    res = wkb.wiki.sync()
    assert [s["path"] for s in res["skipped"]] == ["notes/secret.md"]
    assert "symbolic link" in res["skipped"][0]["reason"]
    with pytest.raises((BackendError, NotFound)):
        wkb.wiki.read_page("notes", "secret")
    with pytest.raises(BackendError, match="secret.md"):
        wkb.wiki.write_page("notes", "Secret", "overwrite it\n")
    assert wkb.wiki.search_wiki("zebrapassword") == []
    assert wkb.store.get_page("secret") is None
    assert _tree(_outside(wkb)) == before and link.is_symlink()


@pytest.mark.filterwarnings("ignore:wiki/notes/.*symbolic link:UserWarning")
def test_page_file_replaced_by_symlink_is_not_read_deleted_or_reindexed(wkb):
    page = wkb.wiki.dir / "notes" / "existing.md"
    page.unlink()
    os.symlink(_outside(wkb) / "secret.txt", page)
    before = _tree(_outside(wkb))
    res = wkb.wiki.sync()
    assert [s["path"] for s in res["skipped"]] == ["notes/existing.md"] and res["removed"] == []
    with pytest.raises(BackendError, match="existing.md"):
        wkb.wiki.read_page("notes", "Existing")
    with pytest.raises(BackendError, match="existing.md"):
        wkb.wiki.delete_page("notes", "Existing")
    assert wkb.wiki.search_wiki("zebrapassword") == []
    assert _tree(_outside(wkb)) == before and page.is_symlink()


def test_symlinked_index_files_are_refused(wkb):
    target = _outside(wkb) / "index-target.md"
    target.write_text("outside index\n", encoding="utf-8")
    index = wkb.wiki.dir / "index.md"
    index.unlink()
    os.symlink(target, index)
    with pytest.raises(BackendError, match=r"index\.md.*symbolic link"):
        wkb.wiki.write_page("notes", "New one", "text\n")
    assert target.read_text(encoding="utf-8") == "outside index\n"
    index.unlink()
    shards = wkb.wiki.dir / "_index"
    for f in sorted(shards.rglob("*"), reverse=True):
        f.unlink() if f.is_file() else f.rmdir()
    shards.rmdir()
    os.symlink(_outside(wkb), shards)
    before = _tree(_outside(wkb))
    with pytest.raises(BackendError, match=r"_index.*symbolic link"):
        wkb.wiki.write_page("notes", "New one", "text\n")
    with pytest.raises(BackendError, match=r"_index.*symbolic link"):
        wkb.wiki.lint_wiki(fix=True)
    assert _tree(_outside(wkb)) == before and wkb.store.get_page("new-one") is None


def test_planted_temp_file_symlink_is_not_written_through(wkb):
    target = _outside(wkb) / "temp-target"
    target.write_text("keep\n", encoding="utf-8")
    for seq in range(1, 4):
        os.symlink(target, wkb.wiki.dir / "notes" / f".existing.md.{os.getpid()}-{seq}.tmp")
    wkb.wiki.write_page("notes", "Existing", "Rewritten.\n")
    assert target.read_text(encoding="utf-8") == "keep\n"
    assert (wkb.wiki.dir / "notes" / "existing.md").read_text(encoding="utf-8").endswith("Rewritten.\n")


def test_symlinked_wiki_folder_is_refused(tmp_path: Path):
    real = tmp_path / "elsewhere"
    real.mkdir()
    home = tmp_path / "kb"
    home.mkdir()
    os.symlink(real, home / "wiki")
    with graphmem.open(home) as kb:
        with pytest.raises(BackendError, match=r"wiki.*symbolic link"):
            kb.wiki.write_page("notes", "Page", "text\n")
        with pytest.raises(BackendError, match=r"wiki.*symbolic link"):
            kb.wiki.list_pages()
    assert list(real.rglob("*")) == []


# -- defect 5: a punctuation-only document title blocks every later regeneration ---------------------------


def _ingest(kb: Any, doc_id: str, title: str, name: str) -> None:
    text = f"{name} is a component of the platform."
    kb.ingest_with_content(doc_id, title, f"{doc_id}.txt", text,
                           [{"name": name, "type": "component", "supporting_text": text}], [])


def test_punctuation_only_title_gets_a_fallback_slug_and_blocks_nothing(tmp_path: Path):
    with graphmem.open(tmp_path / "kb", config={"wiki": {"entity_min_documents": 1}}) as kb:
        _ingest(kb, "doc_bang", "!!!", "Flux capacitor")
        _ingest(kb, "doc_fine", "A fine title", "Warp core")
        res = kb.wiki.sync()
        assert res.get("failed", []) == []
        assert kb.store.wiki_dirty() == []
        pages = kb.store.pages_by_subject(["doc:doc_bang", "doc:doc_fine"])
        assert pages["doc:doc_fine"].slug == "doc-a-fine-title"
        bang = pages["doc:doc_bang"]
        assert bang.slug == "doc-bang" and bang.title == "!!!"
        assert (kb.wiki.dir / bang.path).is_file()
        assert kb.wiki.read_page_by_slug("doc-bang")["title"] == "!!!"


def test_one_failing_generated_page_is_reported_and_does_not_block_the_others(tmp_path: Path, monkeypatch):
    from graphmem.wiki import generate

    real = generate._summary_block

    def fails_for_doc_x(ctx, store, d, *args):
        if d.doc_id == "doc_x":
            raise BackendError("cannot render doc_x (injected)")
        return real(ctx, store, d, *args)

    monkeypatch.setattr(generate, "_summary_block", fails_for_doc_x)
    with graphmem.open(tmp_path / "kb") as kb:
        with pytest.warns(UserWarning, match="doc_x"), kb.wiki.deferred():
            _ingest(kb, "doc_a", "Alpha report", "Alpha engine")
            _ingest(kb, "doc_x", "Broken report", "Broken engine")
            _ingest(kb, "doc_z", "Zulu report", "Zulu engine")
        pages = kb.store.pages_by_subject(["doc:doc_a", "doc:doc_x", "doc:doc_z"])
        assert sorted(pages) == ["doc:doc_a", "doc:doc_z"]
        assert kb.store.wiki_dirty() == ["doc:doc_x"]  # still marked: retried later
        _ingest(kb, "doc_b", "Bravo report", "Bravo engine")  # a later ingest is not blocked
        assert "doc:doc_b" in kb.store.pages_by_subject(["doc:doc_b"])
        with pytest.warns(UserWarning, match="doc_x"):
            res = kb.wiki.sync()  # nor is an explicit sync: it reports the one page
        assert [f["key"] for f in res["failed"]] == ["doc:doc_x"] and "injected" in res["failed"][0]["error"]
        monkeypatch.setattr(generate, "_summary_block", real)
        res = kb.wiki.sync()  # once the cause is gone, the retry succeeds
        assert res["failed"] == [] and kb.store.wiki_dirty() == []
        assert "doc:doc_x" in kb.store.pages_by_subject(["doc:doc_x"])


# -- defect 10: temp files of killed processes leak --------------------------------------------------------


def _dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    for _ in range(20):
        p = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                           check=True)
        pid = int(p.stdout)
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return pid
    pytest.skip("could not find a free pid")


def _plant_temps(wiki: Path) -> tuple[list[Path], list[Path]]:
    """Temp files as a killed process leaves them (dead pid) and as a live one has them
    (this process); returns (dead, live)."""
    dead_pid, live_pid = _dead_pid(), os.getpid()
    shard_dir = next((wiki / "_index").iterdir())
    dead = [wiki / "notes" / f".existing.md.{dead_pid}-1.tmp", wiki / "notes" / f".existing.md.{dead_pid}-undo.tmp",
            wiki / f".index.md.{dead_pid}-2.tmp", shard_dir / f".ex.md.{dead_pid}-3.tmp"]
    live = [wiki / "notes" / f".existing.md.{live_pid}-7.tmp", wiki / f".index.md.{live_pid}-8.tmp",
            shard_dir / f".ex.md.{live_pid}-9.tmp"]
    for p in dead + live:
        p.write_text("half-written page\n", encoding="utf-8")
    return dead, live


@pytest.mark.parametrize("trigger", ["sync", "ingest", "read"])
def test_temp_files_of_dead_processes_are_removed_and_live_ones_kept(tmp_path: Path, trigger: str):
    home = tmp_path / "kb"
    with graphmem.open(home) as kb:
        kb.wiki.write_page("notes", "Existing", "A page.\n")
        dead, live = _plant_temps(kb.wiki.dir)
    other = kb.wiki.dir / "notes" / ".not-a-temp-file.md"
    other.write_text("a person's hidden file\n", encoding="utf-8")
    with graphmem.open(home) as kb:  # a new session: e.g. the re-run after a kill -9
        if trigger == "sync":
            kb.wiki.sync()
        elif trigger == "ingest":
            _ingest(kb, "doc_after", "After the crash", "Recovery tool")
        else:
            kb.wiki.read_page("notes", "Existing")
        assert [p.name for p in dead if p.exists()] == []
        assert [p.name for p in live if not p.exists()] == []
        assert other.exists()
        assert all(".tmp" not in p["path"] for p in kb.wiki.list_pages())


def test_temp_file_of_a_reused_pid_is_removed_when_older_than_that_process(tmp_path: Path):
    if not Path(f"/proc/{os.getpid()}/stat").exists():
        pytest.skip("process start times come from /proc")
    with graphmem.open(tmp_path / "kb") as kb:
        kb.wiki.write_page("notes", "Existing", "A page.\n")
        # Named after this (live) process, but written a day before it started: its writer
        # died and the pid was given to this process since.
        stale = kb.wiki.dir / "notes" / f".existing.md.{os.getpid()}-5.tmp"
        stale.write_text("left by a process that died\n", encoding="utf-8")
        day_ago = stale.stat().st_mtime - 86400
        os.utime(stale, (day_ago, day_ago))
        fresh = kb.wiki.dir / "notes" / f".existing.md.{os.getpid()}-6.tmp"
        fresh.write_text("being written right now\n", encoding="utf-8")
        kb.wiki.sync()
        assert not stale.exists() and fresh.exists()

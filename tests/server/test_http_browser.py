"""The web UI in a real browser: Playwright drives Chromium against a `graphmem serve` subprocess on
127.0.0.1 over the example corpus. Screenshots go to tests/artifacts/browser/ (gitignored; or
$GRAPHMEM_TEST_ARTIFACTS), one per step.

Chromium: $GRAPHMEM_CHROMIUM, else Debian's /usr/bin/chromium (.ci/run installs it), else the
browser Playwright manages; without any the test is skipped with the reason.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from http_helpers import QUESTION, REPO, build_corpus

import graphmem

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (dev extra) is not installed")

pytestmark = pytest.mark.slow

ARTIFACTS = Path(os.environ.get("GRAPHMEM_TEST_ARTIFACTS") or REPO / "tests" / "artifacts") / "browser"
STARTUP_LIMIT_S = 60  # how long the server may take to answer /health before the test gives up


def _chromium() -> str | None:
    for candidate in (os.environ.get("GRAPHMEM_CHROMIUM"), shutil.which("chromium"), shutil.which("chromium-browser")):
        if candidate and Path(candidate).exists():
            return candidate
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as resp:
        return json.loads(resp.read())


def _post(url: str, body: dict[str, Any]) -> Any:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read())


@contextlib.contextmanager
def serving(home: Path, *extra: str) -> Iterator[str]:
    """``graphmem serve`` on a free loopback port until the block ends; yields its base URL."""
    port = _free_port()
    env = {**os.environ, "GRAPHMEM_EMBED_MODEL": "none", "PYTHONUNBUFFERED": "1"}
    log_path = home.parent / f"serve-{port}.log"
    log = log_path.open("w")
    proc = subprocess.Popen([sys.executable, "-m", "graphmem", "--home", str(home), "serve", "--host", "127.0.0.1",
                             "--port", str(port), "--log-level", "warning", *extra], stdout=log,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_LIMIT_S
        while True:
            try:
                if _get(f"{base}/health") == {"status": "ok"}:
                    break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                log.flush()
                pytest.fail(f"graphmem serve did not start: {log_path.read_text()}")
            time.sleep(0.2)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("browser")
    home = build_corpus(root / "kb")
    for name, desc in [("deploy-service", "Deploy a service to production with a canary"),
                       ("pgbouncer-tuning", "Tune PgBouncer pool sizes when clients wait")]:
        (root / "skills" / name).mkdir(parents=True)
        (root / "skills" / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {desc}\n---\nSteps.\n")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GRAPHMEM_EMBED_MODEL", "none")
        with graphmem.open(home) as kb:
            kb.skills.build([root / "skills"])
    return home


@pytest.fixture(scope="module")
def server(corpus: Path) -> Iterator[str]:
    with serving(corpus) as base:
        yield base


@contextlib.contextmanager
def chromium_page(errors: list[str], console: list[str] | None = None) -> Iterator[Any]:
    """A page of a headless Chromium; its JavaScript errors (and console lines) are appended to the lists.
    Skips the test when no Chromium can be launched."""
    with sync_api.sync_playwright() as pw:
        try:
            browser = pw.chromium.launch(executable_path=_chromium(), args=["--no-sandbox"])
        except Exception as exc:  # no browser build at all on this machine
            pytest.skip(f"no Chromium to drive ({exc.__class__.__name__}); install Debian's `chromium` or set "
                        "GRAPHMEM_CHROMIUM")
        context = browser.new_context(viewport={"width": 1366, "height": 860})
        pg = context.new_page()
        pg.on("pageerror", lambda exc: errors.append(str(exc)))
        if console is not None:
            pg.on("console", lambda msg: console.append(msg.text))
        pg.set_default_timeout(20_000)
        yield pg
        context.close()
        browser.close()


@pytest.fixture(scope="module")
def page(server: str) -> Iterator[Any]:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    with chromium_page(errors) as pg:
        yield pg
    assert not errors, f"JavaScript errors in the page: {errors}"


def shot(pg: Any, name: str) -> None:
    pg.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=False)
    assert (ARTIFACTS / f"{name}.png").stat().st_size > 10_000


def test_search_with_the_keyboard_then_open_a_citation(page: Any, server: str) -> None:
    page.goto(f"{server}/#/search")
    page.wait_for_selector("#search-input")
    page.locator("body").click()
    page.keyboard.press("/")  # focuses the search box
    page.keyboard.type(QUESTION)
    page.keyboard.press("Enter")
    first = page.locator("article.hit").first
    first.wait_for()
    assert "INC-2041" in first.inner_text()
    assert "lexical" in first.locator(".parts").inner_text()
    shot(page, "1-search")
    citation = first.locator("a.citation").first
    quote = first.locator(".citations li").first.inner_text()
    citation.click()
    mark = page.locator("#passage mark#quoted")
    mark.wait_for()
    assert "INC-2041" in mark.inner_text()
    # The list shows the quote with its whitespace collapsed (a blank line after a heading is one space there).
    assert " ".join(quote.split("“", 1)[1][:60].rstrip("…”").split()) in " ".join(mark.inner_text().split())
    shot(page, "2-citation")


def test_entity_page_shows_relations_evidence_and_its_graph(page: Any, server: str) -> None:
    page.goto(f"{server}/#/search?q={urllib.request.quote(QUESTION)}&kinds=entity")
    entity_link = page.locator("article.hit[data-kind=entity] a.hit-title", has_text="INC-2041").first
    entity_link.wait_for()
    name = entity_link.inner_text()
    entity_link.click()
    page.wait_for_selector("#entity-graph canvas")
    assert page.locator("h1").first.inner_text().startswith(name)
    graph = page.locator("#entity-graph")
    assert int(graph.get_attribute("data-nodes") or 0) > 1 and int(graph.get_attribute("data-edges") or 0) >= 1
    assert page.locator("#relations tbody tr").count() >= 1
    shot(page, "3-entity")
    # an evidence record of a relation opens its passage with just the supporting sentence marked
    page.goto(f"{server}/#/entity/PgBouncer")
    row = page.locator("#relations tbody tr", has_text="ledger-db").first
    row.wait_for()
    row.locator(".evidence a").first.click()
    mark = page.locator("#passage mark#quoted")
    mark.wait_for()
    assert "PgBouncer connects to ledger-db" in mark.inner_text()
    assert len(page.locator("#passage").inner_text()) > len(mark.inner_text())
    shot(page, "4-evidence")


def test_wiki_page_renders_and_a_wikilink_navigates(page: Any, server: str) -> None:
    page.goto(f"{server}/#/wiki/pgbouncer")
    page.wait_for_selector("#wiki-body a.wikilink")
    assert page.locator("#wiki-body h1").first.inner_text() == "PgBouncer"  # markdown rendered, not shown raw
    assert page.locator("#backlinks li").count() >= 1
    link = page.locator("#wiki-body a.wikilink:not(.broken)", has_text="ledger-db").first
    link.click()
    page.wait_for_url("**/#/wiki/ledger-db")  # (no wait_for_function: the CSP forbids eval)
    page.wait_for_selector("#wiki-page h2:has-text('ledger-db')")
    assert page.locator("#lint summary").inner_text().startswith("Lint:")
    shot(page, "5-wikilink")


def test_a_new_event_appears_after_an_ingest_through_the_api(page: Any, server: str) -> None:
    page.goto(f"{server}/#/search")
    page.locator("#events-state", has_text="live").wait_for()
    assert page.locator("#event-list li[data-target='browser-note']").count() == 0
    documents = _get(f"{server}/stats")["documents"]
    page.locator("#stats", has_text=f"{documents} documents").wait_for()
    out = _post(f"{server}/documents", {"content": "The Browser Probe depends on the Dispatch API.",
                                        "doc_id": "browser-note", "title": "Browser note"})
    assert out["status"] == "added"
    item = page.locator("#event-list li[data-type='document.added']", has_text="browser-note").first
    item.wait_for()
    assert "fresh" in (item.get_attribute("class") or "")
    # the header's counts follow the events (they were read once, at load)
    page.locator("#stats", has_text=f"{documents + 1} documents").wait_for()
    shot(page, "6-live-event")


def test_memories_and_skills_views(page: Any, server: str) -> None:
    for text in ("The dispatch API was slow this morning", "The slowness came from PgBouncer"):
        _post(f"{server}/memories", {"messages": text, "user_id": "ops", "run_id": "r1"})
    page.goto(f"{server}/#/memories?user_id=ops")
    page.wait_for_selector("#memory-graph canvas")
    assert page.locator("#memories tbody tr").count() == 2
    assert int(page.locator("#memory-graph").get_attribute("data-edges") or 0) >= 1
    shot(page, "7-memories")
    page.goto(f"{server}/#/skills?q={urllib.request.quote('deploy the service to production')}")
    page.wait_for_selector("#prompt-block")
    assert page.locator("#skill-hits li").first.inner_text().startswith("deploy-service")
    assert "deploy-service" in page.locator("#prompt-block").inner_text()
    shot(page, "8-skills")


def test_ui_asks_for_the_token_and_then_sends_it(page: Any, corpus: Path) -> None:
    with serving(corpus, "--token", "browser-secret") as base:
        page.goto(f"{base}/#/search?q=PgBouncer")
        page.wait_for_selector("#token-bar:not([hidden]) #token-input")
        assert "Unauthorized" in page.locator("#error").inner_text()
        page.fill("#token-input", "browser-secret")
        page.keyboard.press("Enter")
        page.locator("article.hit").first.wait_for()
        page.locator("#events-state", has_text="live").wait_for()
        # the stream got the token in its header: its first event arrives (a wait, not a count: "live" can be
        # shown a moment before the first item is drawn on a loaded machine; times out if none ever comes)
        page.locator("#event-list li").first.wait_for(timeout=15_000)
        assert page.locator("#event-list li").count() >= 1
        shot(page, "9-token")
        page.evaluate("sessionStorage.clear()")

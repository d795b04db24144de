"""Hostile input at the public API (issue 12, defect 11): lone surrogates, non-string keys and
absurd config values are an InvalidInput naming the field, and a rejected call writes nothing.
Property tests throw random text, filters, metadata and config values at the entry points."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import graphmem
from conftest import snapshot
from graphmem.errors import GraphmemError, InvalidInput

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

pytestmark = pytest.mark.reliability

LONE = json.loads('"caf\\ud800e"')  # what json.loads gives for half a surrogate pair
NO_PAGES = {"wiki": {"auto_pages": False}}


@pytest.fixture
def kbm(tmp_path: Path) -> Any:
    with graphmem.open(tmp_path / "kb") as kb:
        kb.ingest_with_content("doc_1", "Crash", "crash.txt", "System crashes due to memory leaks.",
                               [{"name": "memory leak", "type": "issue", "supporting_text": "memory leaks"},
                                {"name": "system crash", "type": "issue", "supporting_text": "System crashes"}])
        mem_id = kb.memory.add("I like green tea", user_id="u")["results"][0]["id"]
        kb.wiki.write_page("topic", "Tea", "About tea.")
        yield kb, mem_id


def _calls(mem_id: str) -> list[tuple[str, Callable[[Any], Any]]]:
    return [
        ("content", lambda kb: kb.ingest_with_content("d2", "T", "s", LONE)),
        ("title", lambda kb: kb.ingest_with_content("d2", LONE, "s", "text")),
        ("doc_id", lambda kb: kb.ingest_with_content(LONE, "T", "s", "text")),
        ("entities[0]['name']", lambda kb: kb.ingest_with_content(
            "d2", "T", "s", "text", [{"name": LONE, "type": "x", "supporting_text": "text"}])),
        ("metadata['k']", lambda kb: kb.ingest_with_content("d2", "T", "s", "text", metadata={"k": LONE})),
        ("messages_or_text", lambda kb: kb.memory.add(LONE, user_id="u")),
        ("user_id", lambda kb: kb.memory.add("fine text", user_id=LONE)),
        ("metadata['k'][0]", lambda kb: kb.memory.add("fine text", user_id="u", metadata={"k": [LONE]})),
        ("memory_id", lambda kb: kb.memory.get(LONE)),
        ("text", lambda kb: kb.memory.update(mem_id, LONE)),
        ("memory_id", lambda kb: kb.memory.history(LONE)),
        ("query", lambda kb: kb.memory.feedback(mem_id, LONE, True)),
        ("query", lambda kb: kb.memory.search(LONE, user_id="u")),
        ("content", lambda kb: kb.wiki.write_page("topic", "Tea", LONE)),
        ("title", lambda kb: kb.wiki.write_page("topic", LONE, "body")),
        ("name_or_id", lambda kb: kb.graph.get_entity(LONE)),
        ("name", lambda kb: kb.add_node(LONE)),
        ("aliases[0]", lambda kb: kb.graph.add_node("fine", aliases=[LONE])),
        ("relation", lambda kb: kb.add_edge("memory leak", "system crash", LONE)),
        ("query", lambda kb: kb.search(LONE)),
        ("text", lambda kb: kb.query(LONE)),
        ("query", lambda kb: kb.documents.search(LONE)),
        ("query", lambda kb: kb.wiki.search_wiki(LONE)),
        ("message", lambda kb: kb.skills.retrieve(LONE)),
    ]


@pytest.mark.parametrize("index", range(len(_calls(""))))
def test_lone_surrogates_are_invalid_input_naming_the_field(kbm: Any, index: int) -> None:
    kb, mem_id = kbm
    field, call = _calls(mem_id)[index]
    before = snapshot(kb)
    with pytest.raises(InvalidInput) as info:
        call(kb)
    message = str(info.value)
    assert field in message and "lone surrogate" in message and "U+D800" in message
    assert snapshot(kb) == before


def test_memory_filters_with_a_non_string_key_are_invalid_input(kbm: Any) -> None:
    kb, _ = kbm
    before = snapshot(kb)
    with pytest.raises(InvalidInput, match=r"memory\.get_all: filters has the key 1 \(int\)"):
        kb.memory.get_all(filters={1: "a", "x": "b"})
    assert snapshot(kb) == before


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "0", "1e308"])
def test_bad_busy_timeout_in_the_file_names_the_key(tmp_path: Path, value: str) -> None:
    home = tmp_path / "kb"
    graphmem.open(home).close()
    (home / "config.toml").write_text(f"[store]\nbusy_timeout = {value}\n", encoding="utf-8")
    with pytest.raises(InvalidInput, match=r"\[store\] busy_timeout"):
        graphmem.open(home)


def test_config_argument_with_a_lone_surrogate_is_invalid_input(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match=r"open: config\['llm'\]\['model'\] holds a lone surrogate"):
        graphmem.open(tmp_path / "kb", config={"llm": {"model": LONE}})
    assert not (tmp_path / "kb").exists()


@pytest.mark.parametrize("value", ["nan", "1e308", "-5"])
def test_bad_busy_timeout_from_the_environment_names_the_key(tmp_path: Path, value: str,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHMEM_STORE__BUSY_TIMEOUT", value)
    with pytest.raises(InvalidInput, match=r"\[store\] busy_timeout"):
        graphmem.open(tmp_path / "kb")


# -- properties: only graphmem errors, and a failed call writes nothing ------------------------

CONFIG_KEYS = [("store", "busy_timeout"), ("chunking", "size"), ("chunking", "overlap"), ("graph", "max_depth"),
               ("graph", "min_confidence"), ("ingest", "batch_size"), ("ingest", "workers"),
               ("ingest", "max_file_mb"), ("wiki", "autosync_interval"), ("llm", "timeout"),
               ("embeddings", "batch_size"), ("memory", "max_text_chars")]
config_values = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True), st.integers(min_value=-10**30, max_value=10**30),
    st.text(max_size=8), st.booleans(), st.lists(st.integers(), max_size=2), st.none())


@given(key=st.sampled_from(CONFIG_KEYS), value=config_values)
@settings(max_examples=120)
def test_config_values_are_accepted_or_invalid_input(tmp_path_factory: pytest.TempPathFactory,
                                                     key: tuple[str, str], value: Any) -> None:
    section, name = key
    home = tmp_path_factory.mktemp("cfg")
    try:
        kb = graphmem.open(home, config={section: {name: value}})
    except InvalidInput as exc:
        assert f"{section}" in str(exc) and name in str(exc)
        return
    with kb:
        resolved = kb.config[section][name]
        assert not (isinstance(resolved, float) and not math.isfinite(resolved))
        kb.ingest_with_content("d", "T", "s", "Alice founded Acme in Paris.")


unicode_text = st.text(alphabet=st.characters(codec=None, blacklist_categories=()), max_size=40)
fts_text = st.one_of(unicode_text, st.lists(st.sampled_from(
    ['"', "'", "AND", "OR", "NOT", "NEAR(", ")", "*", "^", ":", "-", "+", "tea", "leak", "\ud800", "{", "}"]),
    max_size=8).map(" ".join))


@pytest.fixture(scope="module")
def shared_kb(tmp_path_factory: pytest.TempPathFactory) -> Any:
    offline = {**NO_PAGES, "embeddings": {"model": "none"}}  # module scope: before the env fixture
    with graphmem.open(tmp_path_factory.mktemp("prop") / "kb", config=offline) as kb:
        kb.ingest_with_content("doc_1", "Crash", "crash.txt", "System crashes due to memory leaks.")
        kb.memory.add("I like green tea", user_id="u")
        kb.wiki.write_page("topic", "Tea", "About tea.")
        yield kb


@given(text=fts_text)
def test_search_text_gives_results_or_invalid_input(shared_kb: Any, text: str) -> None:
    kb = shared_kb
    before = snapshot(kb)
    for call in (lambda: kb.search(text), lambda: kb.documents.search(text),
                 lambda: kb.memory.search(text, user_id="u"), lambda: kb.wiki.search_wiki(text)):
        try:
            call()
        except InvalidInput:
            pass
    after = snapshot(kb)
    # Searching may record memory uses (an update event), never anything else.
    assert {k: v for k, v in after.items() if k not in ("events", "event_ids")} == \
           {k: v for k, v in before.items() if k not in ("events", "event_ids")}


json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), unicode_text),
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.one_of(unicode_text, st.integers()), inner, max_size=3)),
    max_leaves=8)


@given(metadata=st.one_of(json_values, st.dictionaries(unicode_text, json_values, max_size=3)),
       filters=st.dictionaries(st.one_of(unicode_text, st.integers(), st.sampled_from(["user_id", "run_id"])),
                               st.one_of(unicode_text, st.integers(), st.none()), max_size=3))
def test_memory_metadata_and_filters_only_graphmem_errors_nothing_written_on_failure(
        shared_kb: Any, metadata: Any, filters: Any) -> None:
    kb = shared_kb
    before = snapshot(kb)
    try:
        kb.memory.add("remember the milk", user_id="u2", metadata=metadata)
    except GraphmemError:
        assert snapshot(kb) == before
    try:
        kb.memory.get_all(filters=filters)
    except GraphmemError:
        pass


TEXT_CALLS: list[Callable[[Any, str], Any]] = [
    lambda kb, t: kb.ingest_with_content("p", t, "s", t or "x"),
    lambda kb, t: kb.add_node(t),
    lambda kb, t: kb.wiki.write_page("topic", t, t),
    lambda kb, t: kb.memory.add(t, user_id="u"),
    lambda kb, t: kb.graph.get_entity(t),
    lambda kb, t: kb.memory.get(t),
]


@given(index=st.integers(0, len(TEXT_CALLS) - 1), text=unicode_text)
def test_text_entry_points_only_graphmem_errors_and_nothing_written_on_failure(
        shared_kb: Any, index: int, text: str) -> None:
    kb = shared_kb
    before = snapshot(kb)
    try:
        TEXT_CALLS[index](kb, text)
    except GraphmemError:
        assert snapshot(kb) == before


# Paging arguments: a count beyond what a store can page by used to escape as SQLite's OverflowError.
PAGED_CALLS: list[tuple[str, Callable[..., Any]]] = [
    ("documents.list", lambda kb, **kw: kb.documents.list(**kw)),
    ("graph.list", lambda kb, **kw: kb.graph.list(**kw)),
    ("wiki.list_pages", lambda kb, **kw: kb.wiki.list_pages(**kw)),
    ("events.list", lambda kb, **kw: kb.events.list(**kw)),
]


BAD_PAGING = [("offset", 2**63, "between 0 and"), ("limit", 2**64, "between 0 and"), ("offset", -1, "between 0 and"),
              ("limit", "3", "a whole number"), ("limit", True, "a whole number"), ("limit", 2.5, "a whole number")]
PAGING_CASES = [(label, call, *bad) for label, call in PAGED_CALLS for bad in BAD_PAGING
                if not (label == "events.list" and bad[0] == "offset")]  # events.list pages by after_id:
PAGING_CASES += [("events.list", PAGED_CALLS[3][1], "after_id", 2**64, "between 0 and"),
                 ("events.list", PAGED_CALLS[3][1], "after_id", -1, "between 0 and"),
                 ("events.list", PAGED_CALLS[3][1], "after_id", "x", "a whole number")]


@pytest.mark.parametrize("label,call,field,value,why", PAGING_CASES,
                         ids=[f"{c[0]}-{c[2]}={c[3]!r}" for c in PAGING_CASES])
def test_paging_arguments_out_of_range_are_invalid_input_naming_the_field(
        kbm: Any, label: str, call: Callable[..., Any], field: str, value: Any, why: str) -> None:
    kb, _ = kbm
    with pytest.raises(InvalidInput, match=rf"^{label}: {field} must be {why}"):
        call(kb, **{field: value})


def test_paging_arguments_at_the_limits_still_work(kbm: Any) -> None:
    kb, _ = kbm
    assert [d.doc_id for d in kb.documents.list(limit=2**63 - 1)] == ["doc_1"]
    assert kb.documents.list(offset=2**63 - 1) == []
    assert [n.name for n in kb.graph.list(limit=1, offset=1)] == ["system crash"]

"""Property tests over every parser of untrusted text (issue 12, the reliability suite).

The property: a parser returns a clean result or raises a graphmem error (a GraphmemError
subclass) — never another exception type, never a hang (input sizes are bounded). Readers may
also raise ``NotText``, their documented "this file is not text" signal that the ingest pipeline
turns into a skip. Where a call goes through a knowledge base, a failed call writes nothing (the
store's counts and event ids are compared before and after).

Deep JSON (issue 12 defect 7) is pinned by two explicit examples below.
"""

from __future__ import annotations

import json
import math
import string
from pathlib import Path
from typing import Any

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import example, given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import graphmem  # noqa: E402
from graphmem.errors import GraphmemError  # noqa: E402
from graphmem.extraction import Extraction, parse_extraction  # noqa: E402
from graphmem.frontmatter import FrontMatterError, load_front_matter  # noqa: E402
from graphmem.ingest.extractors.base import SourceDocument  # noqa: E402
from graphmem.ingest.readers import NotText, Skipped  # noqa: E402
from graphmem.ingest.readers import bulk as bulk_reader  # noqa: E402
from graphmem.ingest.readers import html as html_reader  # noqa: E402
from graphmem.ingest.readers import markdown as md_reader  # noqa: E402
from graphmem.skills.parse import SkillDoc, parse_skill  # noqa: E402
from graphmem.wiki.markdown import ParsedPage, parse_page, split_front_matter  # noqa: E402

pytestmark = pytest.mark.reliability

# -- strategies --------------------------------------------------------------------------------

YAML_CHARS = string.ascii_letters[:8] + string.digits[:4] + " :-[]{},&*!|>'\"#\n\t?%@`~.\\<=" + "é\u00a0\u2028"
yamlish = st.text(alphabet=YAML_CHARS, max_size=300)
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False),
                    st.text(max_size=20))
json_values = st.recursive(scalars, lambda kids: st.one_of(st.lists(kids, max_size=4),
                                                            st.dictionaries(st.text(max_size=8), kids, max_size=4)),
                           max_leaves=20)


@st.composite
def dates(draw: st.DrawFn) -> str:
    """Real and impossible dates and timestamps, as YAML would see them unquoted."""
    y, m, d = draw(st.integers(0, 9999)), draw(st.integers(0, 19)), draw(st.integers(0, 39))
    text = f"{y:04d}-{m:02d}-{d:02d}"
    if draw(st.booleans()):
        text += draw(st.sampled_from([" 10:00:00", "T25:61:61Z", "t1:2:3.5+05:00", " 00:00:00 -1"]))
    return text


@st.composite
def structured_yaml(draw: st.DrawFn) -> str:
    """Valid YAML of random data, then (sometimes) anchors, aliases, dates and tags spliced in."""
    import yaml

    data = draw(st.dictionaries(st.text(alphabet=string.ascii_lowercase, min_size=1, max_size=6), json_values,
                                max_size=5))
    text = yaml.safe_dump(data, allow_unicode=True, default_flow_style=draw(st.booleans()))
    extras = draw(st.lists(st.one_of(
        dates().map(lambda d: f"when: {d}\n"),
        dates().map(lambda d: f"dates: [{d}, {d}]\n"),
        st.sampled_from(["a: &x [1, 2]\nb: *x\n", "r: &a [*a]\n", "m: &m {k: *m}\n", "<<: {z: 1}\n",
                         "t: !!timestamp 2024-02-30\n", "i: !!int nope\n", "b: !!binary '%%%'\n",
                         "f: !!float .nan\n", "s: !!set {a, b}\n", "o: !!omap [a: 1]\n", "p: !!python/name:os\n",
                         "big: " + "7" * 5000 + "\n", "k: !!str [1]\n", "? [a, b]\n: c\n", "1: a\ntrue: b\n"]),
    ), max_size=3))
    return text + "".join(extras)


@st.composite
def deep_yaml(draw: st.DrawFn) -> str:
    depth = draw(st.integers(1, 3000))
    kind = draw(st.sampled_from(["flow_list", "flow_map", "block", "mixed"]))
    if kind == "flow_list":
        return "k: " + "[" * depth + "]" * depth + "\n"
    if kind == "flow_map":
        return "k: " + "{a: " * depth + "1" + "}" * depth + "\n"
    depth = min(depth, 400)  # block nesting costs one more space per level
    if kind == "block":
        return "".join(" " * i + f"k{i}:\n" for i in range(depth)) + " " * depth + "v\n"
    return "".join(" " * i + "- [\n" for i in range(depth // 2))


front_matter_texts = st.one_of(
    yamlish,
    structured_yaml(),
    deep_yaml(),
    st.binary(max_size=300).map(lambda b: b.decode("utf-8", errors="surrogateescape")),
    st.text(max_size=200),
)

BODY_PARTS = ["[[", "]]", "|", "#", "`", "```\n", "~~~\n", "![[", "\n", " ", "- ", "* ", "1. ", "**", "x", "Y",
              "page", "../", "<!-- graphmem:begin generated -->", "<!-- graphmem:end generated -->",
              "## Contradictions\n", "**Type:** thing", "---\n", "...\n", "\r\n", "é", "\x00"]
bodies = st.lists(st.sampled_from(BODY_PARTS) | st.text(max_size=5), max_size=60).map("".join)


def fenced(fm: str, body: str) -> str:
    return "---\n" + fm + ("" if fm.endswith("\n") else "\n") + "---\n" + body


def assert_json_data(value: Any) -> None:
    """Plain JSON data: string keys, finite numbers, equal after a round trip."""
    text = json.dumps(value, allow_nan=False)
    assert json.loads(text) == value


# -- front matter ------------------------------------------------------------------------------


@given(front_matter_texts)
@example("r: &a [*a]\n")
@example("d: 2024-02-30\n")
@example("a: &a [x,x]\nb: &b [*a,*a]\n")
@example("k: " + "[" * 100_000 + "]" * 100_000)
def test_front_matter_loader_returns_json_data_or_front_matter_error(text: str) -> None:
    try:
        data = load_front_matter(text)
    except FrontMatterError as exc:
        assert isinstance(exc, GraphmemError) and str(exc).startswith("front matter ")
        return
    assert isinstance(data, dict)
    assert_json_data(data)


@given(front_matter_texts, bodies, st.sampled_from(["entity", "summary", "topic"]))
def test_wiki_page_parsing_never_raises(fm: str, body: str, category: str) -> None:
    for text in (fenced(fm, body), body):
        parsed = parse_page(text, category)
        assert isinstance(parsed, ParsedPage)
        assert_json_data(parsed.front_matter)
        assert all(link.line >= 1 and link.target == link.target.lower() for link in parsed.links)
        got_fm, got_body, line, error = split_front_matter(text)
        assert line >= 1 and (error is None or error.startswith("front matter"))


@given(front_matter_texts, bodies)
def test_markdown_reader_yields_a_document_with_json_metadata(fm: str, body: str) -> None:
    raw = fenced(fm, body).encode("utf-8", errors="surrogateescape")
    try:
        out = list(md_reader.read(Path("x.md"), "x.md", raw))
    except NotText:
        return
    [doc] = out
    assert isinstance(doc, SourceDocument)
    assert_json_data(dict(doc.metadata))


@given(front_matter_texts, bodies, st.binary(max_size=200))
def test_skill_md_parsing_never_raises(fm: str, body: str, noise: bytes) -> None:
    for raw in (fenced(fm, body).encode("utf-8", errors="surrogateescape"), noise, b"---\n" + noise):
        doc = parse_skill("col/s", raw, "s", "col")
        assert isinstance(doc, SkillDoc) and doc.name and isinstance(doc.description, str)
        assert_json_data(doc.front_matter)
        assert all(isinstance(n, str) for n in doc.tags + doc.triggers + doc.related)


# -- HTML --------------------------------------------------------------------------------------

HTML_PARTS = ["<", ">", "</", "/>", "<!--", "-->", "<![CDATA[", "]]>", "<script>", "</script>", "<style>",
              "<title>", "</title>", "<p>", "<br>", "&amp;", "&#x", "&#", ";", "&", "'", '"', "=", " ",
              "\n", "a", "div", "<!DOCTYPE", "<?xml", "?>", "&#1114112;", "&#xD800;", "\x00", "é"]
html_texts = st.lists(st.sampled_from(HTML_PARTS) | st.text(max_size=4), max_size=80).map("".join)


@given(html_texts, st.binary(max_size=200))
def test_html_reader_yields_documents_or_not_text(html: str, noise: bytes) -> None:
    for raw in (html.encode("utf-8", errors="surrogateescape"), noise):
        try:
            out = list(html_reader.read(Path("x.html"), "x.html", raw))
        except (NotText, GraphmemError):
            continue
        assert all(isinstance(d, (SourceDocument, Skipped)) for d in out)
        for d in out:
            if isinstance(d, SourceDocument):
                assert isinstance(d.text, str) and isinstance(d.title, str)


# -- extraction JSON ---------------------------------------------------------------------------

KEYS = ["name", "type", "supporting_text", "aliases", "source", "target", "confidence", "x"]
wild = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=10), st.binary(max_size=4)),
    lambda kids: st.one_of(st.lists(kids, max_size=4), st.tuples(kids, kids),
                           st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=4), kids, max_size=5),
                           st.dictionaries(st.integers(), kids, max_size=2)),
    max_leaves=25)
items = st.one_of(wild, st.lists(st.one_of(wild, st.fixed_dictionaries(
    {"name": wild, "type": wild, "supporting_text": wild}, optional={"aliases": wild}),
    st.fixed_dictionaries({"source": wild, "target": wild, "type": wild}, optional={"confidence": wild})),
    max_size=5))


@given(items, items)
def test_parse_extraction_accepts_or_raises_invalid_input(entities: Any, relations: Any) -> None:
    try:
        out = parse_extraction(entities, relations)
    except GraphmemError:
        return
    assert isinstance(out, Extraction)
    for r in out.relations:
        assert 0.0 <= r.confidence <= 1.0 and not math.isnan(r.confidence)


# -- JSONL / JSON bulk files -------------------------------------------------------------------

records = st.one_of(
    st.fixed_dictionaries({"text": st.text(max_size=30)},
                          optional={"id": wild, "title": wild, "source": wild, "metadata": wild,
                                    "entities": items, "relations": items}),
    wild,
)
record_lines = st.one_of(
    records.map(lambda r: json.dumps(r, default=repr)),
    st.text(alphabet='{}[]":,0123456789abtrufnl \\', max_size=40),
    st.integers(1, 400).map(lambda n: '{"text": "t", "metadata": ' + "[" * n + "]" * n + "}"),
)


def bulk_read(raw: bytes, suffix: str) -> list[SourceDocument | Skipped]:
    return list(bulk_reader.read(Path("b" + suffix), "b" + suffix, raw))


@given(st.lists(record_lines, max_size=8))
def test_jsonl_reader_reads_each_line_on_its_own(lines: list[str]) -> None:
    raw = "\n".join(lines).encode("utf-8", errors="surrogateescape")
    try:
        out = bulk_read(raw, ".jsonl")
    except (NotText, GraphmemError):
        return
    assert all(isinstance(d, (SourceDocument, Skipped)) for d in out)
    # every non-blank line gives exactly one document or one skip with its line number
    assert len(out) == sum(1 for ln in "\n".join(lines).splitlines() if ln.strip())
    assert all(d.line is not None for d in out if isinstance(d, Skipped))


@given(st.lists(records, max_size=6), st.sampled_from(["list", "object", "garbage"]))
def test_json_reader_never_raises_anything_else(recs: list[Any], shape: str) -> None:
    body = json.dumps(recs if shape == "list" else {"documents": recs}, default=repr)
    if shape == "garbage":
        body = body[: len(body) // 2]
    try:
        out = bulk_read(body.encode("utf-8", errors="surrogateescape"), ".json")
    except (NotText, GraphmemError):
        return
    assert all(isinstance(d, (SourceDocument, Skipped)) for d in out)


DEEP = 100_000


def test_deep_json_line_is_one_skipped_line_defect_7() -> None:
    good = json.dumps({"id": "ok", "text": "a good record"})
    deep = '{"text": "t", "metadata": ' + "[" * DEEP + "]" * DEEP + "}"
    out = bulk_read(f"{good}\n{deep}\n{good.replace('ok', 'ok2')}\n".encode(), ".jsonl")
    assert [type(d).__name__ for d in out] == ["SourceDocument", "Skipped", "SourceDocument"]


def test_deep_extraction_json_is_invalid_input_defect_7() -> None:
    deep: Any = "x"
    for _ in range(DEEP):  # built in Python: json.loads itself cannot parse this deep
        deep = [deep]
    with pytest.raises(GraphmemError):
        parse_extraction([{"name": "a", "aliases": deep}], [])
    with pytest.raises(GraphmemError):
        parse_extraction([], [{"source": "a", "target": "b", "type": "uses", "supporting_text": deep}])


# -- through a knowledge base: a failed call writes nothing ------------------------------------


def snapshot(kb: graphmem.KnowledgeBase) -> dict[str, Any]:
    s = kb.stats()
    s.pop("size_bytes", None)
    s["event_ids"] = [e.id for e in kb.events.list(limit=100000)]
    return s


ALNUM = string.ascii_letters + string.digits
titles = st.text(alphabet=ALNUM + " -_é", min_size=1, max_size=30).filter(lambda t: any(c.isalnum() for c in t))


@given(front_matter_texts, bodies, titles)
def test_ingesting_markdown_with_any_front_matter(kb: graphmem.KnowledgeBase, tmp_path: Path, fm: str, body: str,
                                                  title: str) -> None:
    folder = tmp_path / "docs"
    folder.mkdir(exist_ok=True)
    path = folder / "page.md"
    path.write_bytes(fenced(fm, f"# {title}\n\n{body} end\n").encode("utf-8", errors="surrogateescape"))
    before = snapshot(kb)
    summary = kb.ingest_paths([path])
    if summary.added + summary.new_versions == 0:
        assert snapshot(kb)["event_ids"] == before["event_ids"], summary.to_dict()
        assert summary.unchanged or summary.skipped or summary.failed, summary.to_dict()
    else:
        [doc] = [d for d in kb.documents.list() if d.source.endswith("page.md")]
        assert_json_data(dict(doc.metadata))


@given(titles, bodies, st.lists(st.text(max_size=10), max_size=3) | st.none(), front_matter_texts)
def test_wiki_write_and_sync_with_any_content(kb: graphmem.KnowledgeBase, title: str, content: str,
                                              tags: list[str] | None, fm: str) -> None:
    before = snapshot(kb)
    try:
        kb.wiki.write_page("topic", title, content, tags=tags)
    except GraphmemError:
        assert snapshot(kb) == before
    # a hand-written page with any front matter: sync indexes it (with or without its front matter)
    hand = kb.wiki.dir / "notes" / "hand.md"
    hand.parent.mkdir(parents=True, exist_ok=True)
    hand.write_bytes(fenced(fm, "# Hand\n\n" + content.replace("\x00", "")).encode("utf-8", errors="replace"))
    kb.wiki.sync()
    pages = {p["slug"]: p for p in kb.wiki.list_pages(category="notes")}
    assert "hand" in pages
    page = kb.wiki.read_page_by_slug("hand")
    assert_json_data(page["front_matter"])

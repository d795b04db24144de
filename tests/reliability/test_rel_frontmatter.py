"""Issue 12, defect 4: hostile YAML front matter never escapes as a traceback, never recurses,
never expands an alias bomb, and dates stay text (so metadata stays JSON).

Every front matter in graphmem (wiki pages, ingested markdown, SKILL.md) goes through
``graphmem.frontmatter.load_front_matter``; a front matter it refuses is a warning for that one
file and the run goes on.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import graphmem
from graphmem.errors import GraphmemError
from graphmem.ingest.readers import markdown as md_reader
from graphmem.skills.parse import parse_skill
from graphmem.wiki.markdown import parse_page, split_front_matter

pytestmark = pytest.mark.reliability

BAD_DATE = "title: Bad date\nreviewed: 2024-02-30\n"
SELF_ALIAS = "r: &a [*a]\n"
# The "billion laughs": nine levels of nine aliases (9**9 strings once expanded) in 342 bytes.
BOMB = "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n" + "".join(
    f"{c}: &{c} [*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p}]\n" for p, c in zip("abcdefgh", "bcdefghi"))
# A small bomb (10**5 strings expanded) that today's loader still finishes quickly: expanding it is
# the bug, so a test can show the old behaviour without hanging.
SMALL_BOMB = "a: &a [x,x,x,x,x,x,x,x,x,x]\n" + "".join(
    f"{c}: &{c} [*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p}]\n" for p, c in zip("abcd", "bcde"))
IDS = ["date", "alias", "small_bomb", "bomb"]


def fenced(yaml_text: str, body: str = "# Heading\n\nbody text\n") -> str:
    return f"---\n{yaml_text}---\n{body}"


def run_cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHMEM_")}
    env["GRAPHMEM_EMBED_MODEL"] = "none"
    return subprocess.run([sys.executable, "-m", "graphmem", "--home", str(home), *args], capture_output=True,
                          text=True, env=env, timeout=120)


# -- the loader itself ---------------------------------------------------------------------------


def test_loader_refuses_the_alias_bomb_and_self_reference() -> None:
    from graphmem.frontmatter import FrontMatterError, load_front_matter

    for text in (BOMB, SELF_ALIAS, SMALL_BOMB, "a: &x 1\nb: *x\n", "base: &b {k: 1}\nc:\n  <<: *b\n"):
        with pytest.raises(FrontMatterError) as exc:
            load_front_matter(text)
        assert "alias" in str(exc.value) and isinstance(exc.value, GraphmemError)
        assert str(exc.value).startswith("front matter uses a YAML alias") and exc.value.line is not None


def test_dates_and_timestamps_stay_text() -> None:
    from graphmem.frontmatter import load_front_matter

    fm = load_front_matter("d: 2024-02-30\nok: 2024-01-01\nts: 2024-01-01 10:00:00\ndates: [2024-01-01]\n"
                           "explicit: !!timestamp 2024-02-31\n")
    assert fm == {"d": "2024-02-30", "ok": "2024-01-01", "ts": "2024-01-01 10:00:00", "dates": ["2024-01-01"],
                  "explicit": "2024-02-31"}
    json.dumps(fm, allow_nan=False)


def test_only_json_data_comes_out() -> None:
    from graphmem.frontmatter import load_front_matter

    fm = load_front_matter("1: one\ntrue: yes\n~: nothing\n2.5: x\nbig: " + "9" * 5000 + "\n"
                           "bad_int: !!int abc\nbad_bool: !!bool maybe\nbad_float: !!float abc\n"
                           "inf: .inf\nnan: .nan\nbin: !!binary aGVsbG8=\nset: !!set {a, b}\n"
                           "pairs: !!pairs [a: 1, b: 2]\nn: 0x1f\nf: 1.5\nok: true\n")
    assert fm["1"] == "one" and fm["true"] is True and fm["null"] == "nothing" and fm["2.5"] == "x"
    assert fm["big"] == "9" * 5000  # over Python's int-from-text digit limit: kept as written
    assert (fm["bad_int"], fm["bad_bool"], fm["bad_float"]) == ("abc", "maybe", "abc")
    assert (fm["inf"], fm["nan"], fm["bin"]) == (".inf", ".nan", "aGVsbG8=")
    assert fm["set"] == ["a", "b"] and fm["pairs"] == [["a", 1], ["b", 2]]
    assert (fm["n"], fm["f"], fm["ok"]) == (31, 1.5, True)
    assert json.loads(json.dumps(fm, allow_nan=False)) == fm


@pytest.mark.parametrize("text, words", [
    ("title: [unclosed\n", "not valid YAML"),
    ("- a\n- b\n", "not a YAML mapping"),
    ("just text\n", "not a YAML mapping"),
    ("x: !!python/object:os.system echo\n", "not valid YAML"),
    ("x: !custom 1\n", "not valid YAML"),
    ("x: \ud800\n", "not valid YAML"),
    ("a: b\n---\nc: d\n", "not valid YAML"),
    ("k: " + "[" * 60 + "]" * 60 + "\n", "nested"),
    ("k: " + "[" * 5000 + "]" * 5000 + "\n", "not valid YAML"),
])
def test_every_failure_is_one_error_type_with_a_reason(text: str, words: str) -> None:
    from graphmem.frontmatter import FrontMatterError, load_front_matter

    with pytest.raises(FrontMatterError) as exc:
        load_front_matter(text)
    assert words in str(exc.value) and str(exc.value).count("front matter") == 1, str(exc.value)


def test_size_is_capped_before_parsing() -> None:
    from graphmem.frontmatter import MAX_FRONT_MATTER_CHARS, FrontMatterError, load_front_matter

    big = "k: [" + "x," * (MAX_FRONT_MATTER_CHARS // 2) + "x]\n"
    with pytest.raises(FrontMatterError) as exc:
        load_front_matter(big)
    assert "KB" in str(exc.value) and "limit" in str(exc.value)
    assert load_front_matter("") == {} and load_front_matter("# only a comment\n") == {}


def test_error_names_the_line() -> None:
    from graphmem.frontmatter import FrontMatterError, load_front_matter

    with pytest.raises(FrontMatterError) as exc:
        load_front_matter("a: 1\nb: 2\nc: [unclosed\nd: 4\n")
    assert exc.value.line is not None and exc.value.line >= 3


# -- the wiki (wiki/markdown.py) ------------------------------------------------------------------


@pytest.mark.parametrize("yaml_text", [BAD_DATE, SELF_ALIAS, SMALL_BOMB, BOMB], ids=IDS)
def test_wiki_page_parsing_reports_instead_of_raising(yaml_text: str) -> None:
    fm, body, line, error = split_front_matter(fenced(yaml_text))
    if yaml_text is BAD_DATE:  # a date that does not exist is just text now
        assert fm == {"title": "Bad date", "reviewed": "2024-02-30"} and error is None
    else:
        assert fm == {} and "alias" in error
    assert body.startswith("# Heading")
    assert parse_page(fenced(yaml_text), "topic").body.startswith("# Heading")


def test_wiki_timestamps_are_kept_as_written() -> None:
    fm, _, _, error = split_front_matter(fenced("when: 2024-01-01 10:00:00\ndates: [2024-01-01]\n"))
    assert error is None and fm == {"when": "2024-01-01 10:00:00", "dates": ["2024-01-01"]}


@pytest.mark.parametrize("yaml_text", [BAD_DATE, SELF_ALIAS, BOMB], ids=["date", "alias", "bomb"])
def test_wiki_list_search_sync_write_survive_a_hostile_page(kb: graphmem.KnowledgeBase, yaml_text: str) -> None:
    kb.wiki.write_page("topic", "Good page", "nothing to see")
    (kb.wiki.dir / "topic" / "hostile.md").write_text(fenced(yaml_text, "# Hostile\n\nzebra words\n"),
                                                     encoding="utf-8")
    kb.wiki.sync()
    titles = {p["title"] for p in kb.wiki.list_pages()}
    assert {"Good page"} < titles and titles & {"Hostile", "Bad date"}
    assert [h["slug"] for h in kb.wiki.search_wiki("zebra")] == ["hostile"]
    page = kb.wiki.read_page_by_slug("hostile")
    assert "zebra words" in page["content"]
    title = page["title"]
    kb.wiki.write_page("topic", title, "rewritten zebra")  # the page is rewritten, front matter renewed
    assert "rewritten zebra" in kb.wiki.read_page_by_slug("hostile")["content"]


def test_wiki_cli_list_and_write_survive_a_bad_date(tmp_path: Path) -> None:
    home = tmp_path / "kb"
    assert run_cli(home, "wiki", "write", "topic", "Good", "--content", "x").returncode == 0
    (home / "wiki" / "topic" / "bad.md").write_text(fenced(BAD_DATE), encoding="utf-8")
    listed = run_cli(home, "wiki", "list")
    assert listed.returncode == 0 and "Traceback" not in listed.stderr, listed.stderr
    assert "Bad date" in listed.stdout
    wrote = run_cli(home, "wiki", "write", "topic", "Bad date", "--content", "fixed")
    assert wrote.returncode == 0 and "Traceback" not in wrote.stderr, wrote.stderr


# -- ingest (ingest/readers/markdown.py) ----------------------------------------------------------


def test_folder_ingest_goes_on_past_hostile_front_matter(kb: graphmem.KnowledgeBase, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a_date.md").write_text(fenced(BAD_DATE), encoding="utf-8")
    (docs / "b_good.md").write_text("a good file\n", encoding="utf-8")
    (docs / "c_dates.md").write_text(fenced("dates: [2024-01-01]\n", "body two\n"), encoding="utf-8")
    (docs / "d_alias.md").write_text(fenced(SELF_ALIAS, "body four\n"), encoding="utf-8")
    (docs / "e_bomb.md").write_text(fenced(BOMB, "body five\n"), encoding="utf-8")
    summary = kb.ingest_paths([docs])
    assert summary.added == 5 and not summary.skipped and not summary.failed, summary.to_dict()
    by_name = {Path(d.source).name: d for d in kb.documents.list()}
    assert by_name["a_date.md"].metadata["reviewed"] == "2024-02-30"
    assert by_name["c_dates.md"].metadata["dates"] == ["2024-01-01"]
    for name in ("d_alias.md", "e_bomb.md"):  # read without its front matter, the reason recorded
        assert "alias" in by_name[name].metadata["front_matter_problem"]


def test_markdown_reader_keeps_metadata_json(tmp_path: Path) -> None:
    [doc] = list(md_reader.read(tmp_path / "x.md", "x.md", fenced("dates: [2024-01-01]\nat: 2024-01-01 10:00:00\n"
                                                                  "n: {1: a}\n").encode()))
    assert doc.metadata["dates"] == ["2024-01-01"] and doc.metadata["at"] == "2024-01-01 10:00:00"
    assert doc.metadata["n"] == {"1": "a"}
    json.dumps(doc.metadata, allow_nan=False)


# -- skills (skills/parse.py) ---------------------------------------------------------------------


@pytest.mark.parametrize("yaml_text", [BAD_DATE, SELF_ALIAS, SMALL_BOMB, BOMB], ids=IDS)
def test_skill_parsing_reports_instead_of_raising(yaml_text: str) -> None:
    raw = fenced("name: hostile\ndescription: does things\n" + yaml_text).encode()
    doc = parse_skill("col/hostile", raw, "hostile", "col")
    assert doc.name == "hostile" and doc.description == "does things"
    json.dumps(doc.front_matter, allow_nan=False)
    if yaml_text is not BAD_DATE:
        assert any("col/hostile/SKILL.md" in w and "alias" in w for w in doc.warnings), doc.warnings


def test_skills_build_goes_on_past_hostile_front_matter(kb: graphmem.KnowledgeBase, tmp_path: Path) -> None:
    root = tmp_path / "skills"
    for name, extra in (("good", ""), ("dated", BAD_DATE), ("looped", SELF_ALIAS), ("bomb", BOMB)):
        (root / name).mkdir(parents=True)
        (root / name / "SKILL.md").write_text(fenced(f"name: {name}\ndescription: the {name} skill\n" + extra),
                                              encoding="utf-8")
    res = kb.skills.build([root])
    assert sorted(res.added) == ["bomb", "dated", "good", "looped"]
    assert kb.skills.get("dated")["front_matter"]["reviewed"] == "2024-02-30"
    assert any("looped/SKILL.md" in w for w in res.warnings) and any("bomb/SKILL.md" in w for w in res.warnings)


def test_an_ingest_names_each_file_whose_front_matter_it_kept_as_text(tmp_path: Path) -> None:
    """The README promises 'a warning for that file and the run goes on'; the reason was only in the document's
    metadata (front_matter_problem), and the summary said warnings 0."""
    from tests.conftest import write_tree

    folder = write_tree(tmp_path / "d", {"alias.md": "---\na: &x [1]\nb: *x\n---\n# Alias\nbody\n",
                                         "bad.md": "---\ntitle: [unclosed\n---\nbody\n",
                                         "fine.md": "---\ntitle: Fine\n---\nbody\n"})
    with graphmem.open(tmp_path / "kb") as kb:
        first = kb.ingest_paths([folder])
        assert first.added == 3
        said = sorted(w.split(": front matter not read: ")[0] for w in first.warnings if "front matter not read" in w)
        assert said == ["d/alias.md", "d/bad.md"]
        assert any("YAML alias" in w for w in first.warnings) and any("not valid YAML" in w for w in first.warnings)
        again = kb.ingest_paths([folder])  # unchanged files are not read again: nothing new to say
        assert again.unchanged == 3 and again.warnings == []

"""Skills face: parsing SKILL.md variants, incremental builds, edges, retrieval rules, prompts."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import backend_kb
import graphmem
from graphmem.errors import InvalidInput, NotFound
from graphmem.skills.parse import parse_skill, split_front_matter
from test_cli import run

# The knowledge base of these tests, on SQLite and on PostgreSQL (tests/backend_kb.py).
kb, backend_url = backend_kb.kb, backend_kb.backend_url


def skill(root: Path, rel: str, front: str, body: str = "Details follow.\n", newline: str = "\n") -> Path:
    folder = root / rel
    folder.mkdir(parents=True, exist_ok=True)
    text = f"---\n{front.strip()}\n---\n{body}" if front is not None else body
    path = folder / "SKILL.md"
    path.write_bytes(text.replace("\n", newline).encode("utf-8"))
    return path


def parse(front: str | None, body: str = "Body.\n", newline: str = "\n", sid: str = "col/my-skill"):
    text = (f"---\n{front.strip()}\n---\n{body}" if front is not None else body).replace("\n", newline)
    return parse_skill(sid, text.encode("utf-8"), sid.rsplit("/", 1)[-1], sid.rsplit("/", 1)[0])


# -- parsing ------------------------------------------------------------------------------------

@pytest.mark.parametrize("front, expected", [
    ("name: a\ndescription: d\nrelated: [x, y]", ["x", "y"]),
    ("name: a\ndescription: d\nrelated_skills:\n  - x\n  - y", ["x", "y"]),
    ("name: a\ndescription: d\nrelated-skills: x, y", ["x", "y"]),
    ("name: a\ndescription: d\nmetadata:\n  related-skills: x, y", ["x", "y"]),
    ("name: a\ndescription: d\nmetadata:\n  related_skills: [x]\n  related: [y]", ["x", "y"]),
    ("name: a\ndescription: d\nmetadata:\n  hermes:\n    related_skills: [x, y]", ["x", "y"]),
    ("name: a\ndescription: d\nrelated: [x]\nmetadata:\n  hermes:\n    related_skills: [X, y]", ["x", "y"]),
])
def test_every_related_form_is_read(front, expected):
    assert [r.lower() for r in parse(front).related] == expected


def test_nested_metadata_category_tags_triggers():
    d = parse("name: a\ndescription: d\nmetadata:\n  hermes:\n    tags: [security, cli]\n    category: security\n"
              "  triggers: [rotate keys, vault]")
    assert (d.category, d.tags, d.triggers) == ("security", ["security", "cli"], ["rotate keys", "vault"])
    d = parse("name: a\ndescription: d\nmetadata:\n  category: finance\n  tags: 'x, y'")
    assert (d.category, d.tags) == ("finance", ["x", "y"])
    d = parse("name: a\ndescription: d\ncategory: top\ntags: [t]\nmetadata:\n  category: inner")
    assert (d.category, d.tags) == ("top", ["t"])
    assert parse("name: a\ndescription: d").category == "col"  # the parent folder path


def test_missing_name_falls_back_to_folder_and_no_front_matter_warns():
    assert parse("description: does things").name == "my-skill"
    d = parse(None, body="# Title\n\nFirst paragraph here.\n")
    assert d.name == "my-skill" and d.description == "First paragraph here."
    assert any("no front matter" in w for w in d.warnings)


def test_bad_yaml_is_read_line_by_line_with_a_warning_naming_the_file():
    d = parse('name: broken-one\ndescription: Uses a colon: here and [unclosed\ntags: [a, b')
    assert d.name == "broken-one"
    assert d.description.startswith("Uses a colon")
    assert d.warnings and "col/my-skill/SKILL.md" in d.warnings[0] and "not valid YAML" in d.warnings[0]


def test_second_front_matter_block_belongs_to_the_body():
    body = "Intro.\n\n---\nname: impostor\ndescription: not me\n---\nMore.\n"
    d = parse("name: real\ndescription: the real one", body=body)
    assert d.name == "real" and d.description == "the real one"
    assert "name: impostor" in d.body
    fm, rest = split_front_matter("---\nname: x\n")  # never closed: not front matter
    assert fm is None and rest.startswith("---")


def test_crlf_and_bom_line_endings():
    raw = "\ufeff---\r\nname: crlf\r\ndescription: >\r\n  folded\r\n  text\r\nrelated: [a]\r\n---\r\nBody\r\n"
    d = parse_skill("c/crlf", raw.encode("utf-8"), "crlf", "c")
    assert (d.name, d.description, d.related, d.body) == ("crlf", "folded text", ["a"], "Body\n")


# -- building ------------------------------------------------------------------------------------

@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    skill(root, "alpha/pdf-tools", "name: pdf-tools\ndescription: Read, merge and split PDF files.\n"
          "related: [ocr-scan, missing-skill]\ncategory: documents")
    skill(root, "alpha/ocr-scan", "name: ocr-scan\ndescription: Extract text from scanned images with OCR.\n"
          "category: documents", body="Pair with `pdf-tools` when the scan is a PDF.\n")
    skill(root, "alpha/loner", "name: loner\ndescription: Only one in its category.\ncategory: solo")
    skill(root, "beta/pdf-tools", "name: pdf-tools\ndescription: Another collection's PDF helper.\n"
          "category: documents")
    return root


def edges_of(kb, typ):
    return {(s.removeprefix("skill:"), d.removeprefix("skill:"), w)
            for s, t, d, w, _ in kb.store.skill_edges() if t == typ}


def test_build_ids_names_and_edges(kb, tree):
    res = kb.skills.build([tree])
    assert sorted(res.added) == ["alpha/loner", "alpha/ocr-scan", "alpha/pdf-tools", "beta/pdf-tools"]
    # identical names in two collections stay two skills
    assert kb.skills.get("alpha/pdf-tools")["description"] != kb.skills.get("beta/pdf-tools")["description"]
    with pytest.raises(InvalidInput, match="ambiguous"):
        kb.skills.get("pdf-tools")
    # related: both directions, resolved in the skill's own collection, unresolved reported
    assert edges_of(kb, "related") == {("alpha/pdf-tools", "alpha/ocr-scan", 1.0),
                                       ("alpha/ocr-scan", "alpha/pdf-tools", 1.0)}
    assert res.unresolved_related == {"alpha/pdf-tools": ["missing-skill"]}
    assert kb.skills.info()["unresolved_related"] == {"alpha/pdf-tools": ["missing-skill"]}
    # sibling: same category at 0.3, none for a category of one
    sib = edges_of(kb, "sibling")
    assert {(a, b) for a, b, _ in sib} == {tuple(sorted(p)) for p in [
        ("alpha/pdf-tools", "alpha/ocr-scan"), ("alpha/pdf-tools", "beta/pdf-tools"),
        ("alpha/ocr-scan", "beta/pdf-tools")]}
    assert {w for *_, w in sib} == {0.3}
    assert not any("alpha/loner" in (a, b) for a, b, _ in sib)
    # mentions: the body names `pdf-tools`, resolved to the same collection
    assert edges_of(kb, "mentions") == {("alpha/ocr-scan", "alpha/pdf-tools", 0.5)}
    # the edges are rows of the shared graph
    assert {e.type for e in kb.store.edges_of(["skill:alpha/ocr-scan"])} >= {"related", "sibling", "mentions"}
    nb = kb.skills.neighbours("alpha/ocr-scan")
    assert [e["id"] for e in nb["edges"]["related"]] == ["alpha/pdf-tools"]


def test_sibling_edges_are_capped_per_skill(tmp_path):
    root = tmp_path / "big"
    for i in range(30):
        skill(root, f"c/s{i:02d}", f"name: s{i:02d}\ndescription: skill number {i}\ncategory: crowd")
    with graphmem.open(tmp_path / "kb", config={"skills": {"sibling_max": 4}}) as kb:
        kb.skills.build([root])
        sib = edges_of(kb, "sibling")
        assert len(sib) <= 30 * 4  # at most the cap per skill, not 435 pairs
        degree: dict[str, int] = {}
        for a, b, _ in sib:
            degree[a] = degree.get(a, 0) + 1
            degree[b] = degree.get(b, 0) + 1
        assert len(degree) == 30 and max(degree.values()) <= 8  # <= cap chosen + chosen by others, bounded


def test_similar_edges_with_a_model(tmp_path, model_dir, tree):
    skill(tree, "alpha/pdf-merge", "name: pdf-merge\ndescription: Merge and split PDF files, read PDF pages.\n"
          "category: other")
    cfg = {"embeddings": {"model": f"model2vec:{model_dir}"}, "skills": {"similar_min": 0.5}}
    with graphmem.open(tmp_path / "kb", config=cfg) as kb:
        kb.skills.build([tree])
        sim = edges_of(kb, "similar")
        pair = tuple(sorted(("alpha/pdf-tools", "alpha/pdf-merge")))
        assert any((a, b) == pair for a, b, _ in sim)
        assert all(0.5 <= w <= 1.0 for *_, w in sim)
        assert kb.skills.info()["with_vectors"]
        out = kb.reindex()
        assert out["skill"] == 5 and kb.store.vector_models()


def test_incremental_build_skips_updates_and_removes(kb, tree):
    kb.skills.build([tree])
    again = kb.skills.build([tree])
    assert (again.unchanged, again.added, again.updated, again.removed) == (4, [], [], [])
    assert again.edges_added == again.edges_removed == 0
    ver = kb.store.get_meta("skills.version")
    # touched but identical content: still unchanged, nothing relinked
    p = tree / "alpha/loner/SKILL.md"
    os.utime(p, ns=(p.stat().st_atime_ns, p.stat().st_mtime_ns + 10_000_000))
    assert kb.skills.build([tree]).unchanged == 4 and kb.store.get_meta("skills.version") == ver
    # changed: the new text is what retrieval sees
    skill(tree, "alpha/loner", "name: loner\ndescription: Now about quantum chemistry simulations.\ncategory: solo")
    res = kb.skills.build([tree])
    assert res.updated == ["alpha/loner"]
    assert kb.skills.get("alpha/loner")["description"].startswith("Now about quantum")
    # deleted: gone from the store, the graph and retrieval
    (tree / "alpha/ocr-scan/SKILL.md").unlink()
    res = kb.skills.build([tree])
    assert res.removed == ["alpha/ocr-scan"]
    with pytest.raises(NotFound):
        kb.skills.get("alpha/ocr-scan")
    assert not edges_of(kb, "related") and not edges_of(kb, "mentions")
    assert "alpha/ocr-scan" not in [h.id for h in kb.skills.retrieve("scanned images OCR", 8)]
    assert kb.store.get_nodes(["skill:alpha/ocr-scan"]) == {}


def test_a_new_skill_gets_mentions_from_existing_bodies(kb, tree):
    skill(tree, "alpha/writer", "name: writer\ndescription: Writes things.", body="Then run the report-maker tool.\n")
    kb.skills.build([tree])
    assert not edges_of(kb, "mentions") & {("alpha/writer", "alpha/report-maker", 0.5)}
    skill(tree, "alpha/report-maker", "name: report-maker\ndescription: Makes reports.")
    kb.skills.build([tree])
    assert ("alpha/writer", "alpha/report-maker", 0.5) in edges_of(kb, "mentions")


def test_rebuild_from_scratch_and_bad_folders(kb, tree, tmp_path):
    kb.skills.build([tree])
    before = kb.skills.info()
    res = kb.skills.rebuild()
    assert len(res.added) == 4 and kb.skills.info()["edges"] == before["edges"]
    with pytest.raises(InvalidInput, match="does not exist"):
        kb.skills.build([tmp_path / "nowhere"])
    (tmp_path / "file.md").write_text("x")
    with pytest.raises(InvalidInput, match="not a folder"):
        kb.skills.build([tmp_path / "file.md"])
    with pytest.raises(InvalidInput, match="does not exist"):
        kb.skills.rebuild([tmp_path / "nowhere"])
    assert kb.skills.info()["skills"] == 4  # the failed rebuild deleted nothing


def test_the_same_id_from_two_roots_keeps_the_first(kb, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    skill(a, "x/same", "name: same\ndescription: one")
    skill(b, "x/same", "name: same\ndescription: two")
    kb.skills.build([a])
    res = kb.skills.build([b])  # skipped with why (tests/test_skills_duplicates_and_names.py), not a Conflict
    assert res.added == [] and [s.reason for s in res.skipped if "common parent" in s.reason]
    assert kb.skills.get("x/same")["description"] == "one"


# -- retrieval ----------------------------------------------------------------------------------

@pytest.fixture
def crowd(tmp_path: Path) -> Path:
    root = tmp_path / "crowd"
    for i in range(30):  # their names hold the words of the target's name, not as its phrase
        skill(root, f"db/writer-notes-release-{i:02d}",
              f"name: writer-notes-release-{i:02d}\ndescription: Review postgres database migration locking, "
              f"postgres migration locking for tables and database migration review number {i}.\ncategory: db")
    skill(root, "misc/release-notes-writer", "name: release-notes-writer\n"
          "description: Drafts changelogs.\ncategory: misc")
    skill(root, "misc/sql-lint", "name: sql-lint\ndescription: Lints SQL.\ntriggers: [lint my sql]\ncategory: misc")
    return root


MESSAGE = ("Review the postgres database migration locking for these tables, then the release notes writer "
           "should summarise it")


def test_an_exact_name_match_is_never_dropped(kb, crowd):
    kb.skills.build([crowd])
    plain = [h.id for h in kb.skills.retrieve(MESSAGE, 3, config={"use_exact": False})]
    assert "misc/release-notes-writer" not in plain  # the fillers outrank it on words alone
    hits = kb.skills.retrieve(MESSAGE, 3)
    assert "misc/release-notes-writer" in [h.id for h in hits] and len(hits) == 3
    exact = next(h for h in hits if h.id == "misc/release-notes-writer")
    assert exact.via == "exact" and exact.parts["exact"] == 1.0
    # a multi-word trigger counts too
    assert "misc/sql-lint" in [h.id for h in kb.skills.retrieve(MESSAGE + "; also lint my sql", 3)]


def test_hits_carry_parts_path_and_how_they_were_found(kb, tree):
    for i in range(20):  # enough skills that not everything is returned
        skill(tree, f"gamma/filler-{i}", f"name: filler-{i}\ndescription: gardening tip {i}\ncategory: garden")
    kb.skills.build([tree])
    hits = kb.skills.retrieve("extract text from scanned images", 4)
    # only skills something points at: the seed and its graph neighbours, no unrelated filler
    assert {h.id for h in hits} == {"alpha/ocr-scan", "alpha/pdf-tools", "beta/pdf-tools"}
    assert hits[0].id == "alpha/ocr-scan" and hits[0].via == "seed"
    assert Path(hits[0].path).name == "SKILL.md" and Path(hits[0].path).exists()
    assert set(hits[0].parts) == {"dense", "lexical", "graph", "exact"} and hits[0].parts["lexical"] == 1.0
    graph_hits = [h for h in hits if h.via == "graph"]
    assert graph_hits and all(h.from_skill for h in graph_hits)  # reached from a seed, which is named
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    none = kb.skills.retrieve("extract text from scanned images", 4, strategy="none")
    assert not [h for h in none if h.via == "graph"]


def test_few_skills_are_all_returned(kb, tree):
    kb.skills.build([tree])
    hits = kb.skills.retrieve("anything at all", 2)  # 4 skills <= 2 * 2.5
    assert len(hits) == 4
    with graphmem.open(kb.home, config={"skills": {"return_all_factor": 1.0}}) as kb2:
        assert len(kb2.skills.retrieve("merge PDF files", 2)) == 2


def test_retrieve_rejects_bad_input(kb, tree):
    kb.skills.build([tree])
    for bad in ("", "   "):
        with pytest.raises(InvalidInput, match="message"):
            kb.skills.retrieve(bad)
    with pytest.raises(InvalidInput, match="top_k"):
        kb.skills.retrieve("pdf", 0)
    with pytest.raises(InvalidInput, match="strategy"):
        kb.skills.retrieve("pdf", strategy="dfs")
    with pytest.raises(InvalidInput, match="unknown skills search setting"):
        kb.skills.retrieve("pdf", config={"nope": 1})
    assert kb.skills.retrieve('"pdf* NEAR( -x: OR', 8)  # FTS syntax is just text


def test_skills_do_not_leak_into_entity_queries(kb, tree, quickstart):
    before = kb.query("Why does the system crash?")
    kb.skills.build([tree])
    after = kb.query("Why does the system crash?")
    assert after == before
    assert not any(n.startswith("skill:") for n in after["nodes"])


def test_graph_query_sees_a_skill_named_in_the_text(kb, tree):
    kb.skills.build([tree])
    q = kb.query("Should I use the ocr scan skill here?")
    assert q["nodes"]["skill:alpha/ocr-scan"]["kind"] == "skill"
    assert {(e["source"], e["type"], e["target"]) for e in q["edges"]} >= {
        ("skill:alpha/ocr-scan", "related", "skill:alpha/pdf-tools")}
    skill(tree, "alpha/ocr-scan", "name: image-reader\ndescription: OCR, renamed.")
    kb.skills.build([tree])  # a renamed skill is found by its new name only
    assert "skill:alpha/ocr-scan" not in kb.query("use the ocr scan skill")["nodes"]
    assert "skill:alpha/ocr-scan" in kb.query("use the image reader skill")["nodes"]


# -- prompts --------------------------------------------------------------------------------------

def test_prompt_blocks_and_token_estimates(kb, tree, tmp_path):
    kb.skills.build([tree])
    md = kb.skills.prompt("merge pdf files", 8, "markdown")
    assert "### documents" in md.text and "### solo" in md.text and "**pdf-tools**" in md.text
    assert md.tokens == (len(md.text) + 3) // 4 and md.skills == 4
    assert "Details follow" not in md.text and "Pair with" not in md.text  # bodies stay out of prompts
    hermes = kb.skills.prompt("merge pdf files", 8, "hermes")
    assert hermes.text.startswith("<available_skills>") and hermes.text.count("<skill>") == 4
    assert "<location>" in hermes.text
    out = tmp_path / "proj" / ".claude" / "skills-context.md"
    block = kb.skills.write_claude_context("merge pdf files", out)
    assert out.read_text(encoding="utf-8") == block.text and "SKILL.md" in block.text
    assert kb.skills.prompt_all().tokens >= md.tokens
    with pytest.raises(InvalidInput, match="format"):
        kb.skills.prompt("x", 8, "yaml")


# -- CLI ------------------------------------------------------------------------------------------

def test_cli_skills_commands(tmp_path, tree):
    home = tmp_path / "kb"
    out = json.loads(run(home, "skills", "build", str(tree), "--json").stdout)
    assert out["added"] == 4 and out["unresolved_related"] == {"alpha/pdf-tools": ["missing-skill"]}
    hits = json.loads(run(home, "skills", "query", "scanned images OCR", "-k", "2", "--json").stdout)
    assert set(hits[0]) >= {"id", "name", "description", "category", "path", "score", "via", "parts"}
    assert hits[0]["id"] == "alpha/ocr-scan"
    shown = run(home, "skills", "show", "alpha/ocr-scan").stdout
    assert shown == (tree / "alpha/ocr-scan/SKILL.md").read_text(encoding="utf-8")
    info = run(home, "skills", "info").stdout
    assert "4 skills" in info and "missing-skill" in info
    graph = run(home, "skills", "graph", "alpha/ocr-scan").stdout
    assert "related:" in graph and "alpha/pdf-tools" in graph
    p = run(home, "skills", "prompt", "merge pdf", "--format", "hermes")
    assert p.stdout.startswith("<available_skills>") and "tokens" in p.stderr
    target = tmp_path / "ctx.md"
    run(home, "skills", "prompt", "merge pdf", "--format", "claude", "--out", str(target))
    assert target.read_text(encoding="utf-8").startswith("# Skills for this task")
    rebuilt = json.loads(run(home, "skills", "rebuild", "--json").stdout)
    assert rebuilt["added"] == 4
    bad = run(home, "skills", "show", "nope/none", ok=False)
    assert bad.returncode == 1 and "no skill 'nope/none'" in bad.stderr and "Traceback" not in bad.stderr
    bad = run(home, "skills", "build", str(tmp_path / "missing"), ok=False)
    assert bad.returncode == 1 and "does not exist" in bad.stderr


def test_another_process_sees_a_rebuild(tmp_path, tree):
    """The in-memory index follows the store's version, also when another handle changed it."""
    home = tmp_path / "kb"
    with graphmem.open(home) as a, graphmem.open(home) as b:
        a.skills.build([tree])
        assert len(b.skills.retrieve("pdf", 8)) == 4
        (tree / "alpha/loner/SKILL.md").unlink()
        a.skills.rebuild()
        assert "alpha/loner" not in [h.id for h in b.skills.retrieve("only one in its category", 8)]
        assert b.skills.info()["skills"] == 3

"""Review findings over a real stdio server: out-of-range and NUL inputs are readable tool errors (1.5),
ingest_path reads only the working folder and --ingest-root folders (1.10), and a skill deleted from disk
is no longer served (1.8)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from mcp.server.mcpserver.exceptions import ToolError
from mcp_helpers import McpSession, stdio_server  # noqa: F401 - the fixture

import graphmem
from graphmem.mcp.server import build_server


@pytest.fixture(scope="module")
def session(stdio_server: tuple[McpSession, Path]) -> McpSession:  # noqa: F811
    return stdio_server[0]


@pytest.fixture(scope="module")
def work(stdio_server: tuple[McpSession, Path]) -> Path:  # noqa: F811
    return stdio_server[1].parent  # the server's working folder


def _error(session: McpSession, tool: str, args: dict[str, object]) -> str:
    res = session.call(tool, args)
    assert res.is_error, res
    return str(res.content[0].text)


# -- 1.5 --------------------------------------------------------------------------------------------

def test_a_huge_after_id_is_refused_by_the_schema(session: McpSession) -> None:
    text = _error(session, "list_events", {"after_id": 2**70})
    assert "after_id" in text and "less than or equal to 4611686018427387904" in text
    assert session.ok("list_events", {"after_id": 2**62})["results"] == []


def test_a_nul_in_a_skill_path_names_path(session: McpSession) -> None:
    text = _error(session, "read_skill_resource", {"name": "release-notes", "path": "refs\x00/x.md"})
    assert "InvalidInput: path: contains a NUL character" in text
    assert session.ok("read_graph")["entities"] == []  # the server is alive


def test_value_and_overflow_errors_become_readable_tool_errors(tmp_path: Path) -> None:
    with graphmem.open(tmp_path / "kb", create=True) as kb:
        _server, reg = build_server(kb, project_dir=tmp_path)

        def boom(after_id: int) -> None:
            raise OverflowError("Python int too large to convert to SQLite INTEGER")

        with pytest.raises(ToolError) as info:
            reg.call(boom, after_id=2**70)
        assert str(info.value).startswith("InvalidInput: boom: after_id: a value was refused (OverflowError")
        with pytest.raises(ToolError, match="ValueError: embedded null byte"):
            reg.call(lambda path: Path(path).stat(), path="a\x00b")


# -- 1.10 -------------------------------------------------------------------------------------------

def test_ingest_path_reads_the_working_folder_and_ingest_roots(session: McpSession, work: Path) -> None:
    (work / "notes").mkdir()
    (work / "notes" / "inside.md").write_text("# Inside\n\nThe depot opens at six.\n", encoding="utf-8")
    (work / "extra-root" / "extra.md").write_text("# Extra\n\nThe ferry runs hourly.\n", encoding="utf-8")
    done = session.ok("ingest_path", {"paths": [str(work / "notes"), str(work / "extra-root" / "extra.md")]})
    assert done["added"] == 2, done


def test_ingest_path_refuses_a_file_outside_the_roots(session: McpSession, work: Path,
                                                       tmp_path_factory: pytest.TempPathFactory) -> None:
    outside = tmp_path_factory.mktemp("elsewhere") / "secret.txt"
    outside.write_text("the host's secret", encoding="utf-8")
    before = session.ok("list_events", {"limit": 1000})["results"]
    for path in (str(outside), str(work / ".." / outside.parent.name / "secret.txt"), "/etc/hostname"):
        text = _error(session, "ingest_path", {"paths": [path]})
        assert "InvalidInput: paths[0]:" in text and "--ingest-root" in text, text
    (work / "link.txt").symlink_to(outside)  # a link inside the folder to a file outside
    assert "paths[0]" in _error(session, "ingest_path", {"paths": [str(work / "link.txt")]})
    # refused before anything was written, even with a good path first
    assert "paths[1]" in _error(session, "ingest_path", {"paths": [str(work / "notes"), str(outside)]})
    assert session.ok("list_events", {"limit": 1000})["results"] == before


# -- 1.8 --------------------------------------------------------------------------------------------

def test_a_skill_deleted_from_disk_is_not_served(session: McpSession, work: Path) -> None:
    folder = work / "project-skills" / "kiln-firing"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\nname: kiln-firing\ndescription: Fire a pottery kiln through its "
                                     "bisque and glaze schedule.\n---\n\nRamp slowly.\n", encoding="utf-8")
    found = session.ok("search_skills", {"message": "fire a pottery kiln", "top_k": 3})["skills"]
    assert "kiln-firing" in [s["name"] for s in found]
    assert session.ok("activate_skill", {"name": "kiln-firing"})["name"] == "kiln-firing"
    shutil.rmtree(folder)
    found = session.ok("search_skills", {"message": "fire a pottery kiln", "top_k": 3})["skills"]
    assert "kiln-firing" not in [s["name"] for s in found]
    assert "kiln-firing" in _error(session, "activate_skill", {"name": "kiln-firing"})
    # skills in other roots stay
    assert session.ok("activate_skill", {"name": "release-notes"})["name"] == "release-notes"


def test_an_unknown_argument_is_a_tool_error_naming_it(session: McpSession) -> None:
    """``search {"limit": 2}`` (the argument is ``k``) answered 10 hits: the SDK's models ignore unknown fields."""
    text = _error(session, "search", {"query": "release", "limit": 2})
    assert "limit" in text and "Extra inputs are not permitted" in text
    text = _error(session, "wiki_lint", {"fixx": True})
    assert "fixx" in text
    assert "problems" in session.ok("wiki_lint", {})  # the known arguments still work
    schemas = {t.name: t.input_schema for t in session.run(session.client.list_tools).tools}
    assert all(s.get("additionalProperties") is False for s in schemas.values()), [
        n for n, s in schemas.items() if s.get("additionalProperties") is not False]

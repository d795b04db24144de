"""SkillGraph's README examples through graphmem.compat.skillgraph, on a skills folder in tmp_path.

No test reaches the network: "local" runs on BM25 + graph (tests set no embedding model), and
the OpenAI-compatible backends talk to the loopback fake server."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from fake_openai import FakeOpenAI, Recorded, embedding_reply
from graphmem.compat.skillgraph import OLLAMA_BASE_URL, SkillGraph, embeddings_config
from graphmem.errors import Conflict, InvalidInput

# The seed's demo skills (examples/basic_usage.py) plus enough others that top_k is a real cut.
SKILLS = {
    "creative/excalidraw": ("excalidraw", "Hand-drawn Excalidraw JSON diagrams (arch, flow, seq).", "creative",
                            ["ascii-art", "sketch"]),
    "creative/ascii-art": ("ascii-art", "Text pictures with pyfiglet, cowsay and boxes.", "creative", ["excalidraw"]),
    "creative/sketch": ("sketch", "Quick pencil style mockups of screens.", "creative", []),
    "gaming/minecraft": ("minecraft-modpack-server", "Host modded Minecraft servers (CurseForge, Modrinth).",
                         "gaming", []),
    "research/arxiv": ("arxiv", "Search arXiv papers by keyword, author, category, or ID.", "research", []),
    "devops/helm": ("helm-chart-builder", "Turn Kubernetes YAML into a Helm chart.", "devops", []),
    "devops/terraform": ("terraform-plan", "Review Terraform plans before apply.", "devops", []),
    "devops/docker": ("dockerfile-lint", "Lint Dockerfiles for size and security.", "devops", []),
    "writing/blog": ("blog-post", "Draft a blog post from notes.", "writing", []),
    "writing/changelog": ("changelog", "Write release notes from commits.", "writing", []),
    "data/sql": ("sql-optimizer", "Explain and speed up slow SQL queries.", "data", []),
    "data/csv": ("csv-cleaner", "Clean messy CSV files.", "data", []),
    "data/plot": ("plotter", "Plot charts from tables.", "data", []),
    "ops/pager": ("incident-runbook", "Walk through an incident runbook.", "ops", []),
    "ops/oncall": ("oncall-handoff", "Summarise an on-call shift.", "ops", []),
    "web/scrape": ("web-scraper", "Fetch and parse web pages.", "web", []),
    "web/seo": ("seo-audit", "Audit a page for search ranking.", "web", []),
    "misc/todo": ("todo-triage", "Sort a todo list by urgency.", "misc", []),
    "misc/regex": ("regex-helper", "Build and test regular expressions.", "misc", []),
    "misc/cron": ("cron-helper", "Write cron schedules.", "misc", []),
    "misc/units": ("unit-converter", "Convert units of measure.", "misc", []),
}


def write_skills(root: Path, skills: dict = SKILLS) -> Path:
    for rel, (name, description, category, related) in skills.items():
        path = root / rel / "SKILL.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        rel_yaml = "".join(f"  - {r}\n" for r in related)
        path.write_text(f'---\nname: {name}\ndescription: "{description}"\ncategory: {category}\n'
                        + (f"related:\n{rel_yaml}" if related else "") + f"---\n\n# {name}\n\nUse it well.\n",
                        encoding="utf-8")
    return root


@pytest.fixture
def skills_dir(tmp_path: Path) -> Path:
    return write_skills(tmp_path / "skills")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "kb"
    monkeypatch.setenv("GRAPHMEM_HOME", str(home))
    return home


def test_readme_library_example(skills_dir: Path, home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from graphmem.compat.skillgraph import SkillGraph

    sg = SkillGraph(
        skills_dir=str(skills_dir),
        backend="local",
    )
    sg.build()

    results = sg.retrieve("generate a hand-drawn diagram", top_k=5)
    for skill in results:
        print(f"{skill.name}: {skill.description}  (score={skill.score:.3f})")
    sg.close()

    printed = capsys.readouterr().out.splitlines()
    # Without an embedding model only skills with some evidence come back (at most top_k).
    assert 3 <= len(results) <= 5 and len(printed) == len(results)
    assert printed[0].startswith("excalidraw: Hand-drawn Excalidraw JSON diagrams")
    assert results[0].name == "excalidraw" and results[0].source in ("seed", "exact")
    # The graph hop brings excalidraw's related skills even though the query names neither.
    by_name = {r.name: r for r in results}
    assert by_name["ascii-art"].source == "graph" and by_name["ascii-art"].via_skill == "creative/excalidraw"
    assert all(r.score >= 0 and r.path.endswith("SKILL.md") for r in results)
    assert (home / "graph.db").is_file()  # the index lives in the knowledge base GRAPHMEM_HOME names


def test_build_counts_and_is_incremental(skills_dir: Path, home: Path) -> None:
    with SkillGraph(skills_dir=skills_dir, backend="local") as sg:
        assert sg.build() == len(SKILLS)
        assert sg.last_build is not None and sg.last_build["added"] == len(SKILLS)
        assert sg.build() == len(SKILLS)
        assert sg.last_build["added"] == 0 and sg.last_build["unchanged"] == len(SKILLS)
        (skills_dir / "misc" / "cron" / "SKILL.md").unlink()
        assert sg.build() == len(SKILLS) - 1
        assert "cron-helper" not in {r.name for r in sg.retrieve("write cron schedules", top_k=3)}


def test_expand_graph_false_keeps_first_stage_hits(skills_dir: Path, home: Path) -> None:
    with SkillGraph(skills_dir=skills_dir) as sg:
        sg.build()
        plain = sg.retrieve("generate a hand-drawn diagram", top_k=5, expand_graph=False)
        assert plain[0].name == "excalidraw"
        assert all(r.source != "graph" for r in plain)


def test_stats_shape(skills_dir: Path, home: Path) -> None:
    with SkillGraph(skills_dir=skills_dir) as sg:
        sg.build()
        stats = sg.stats
    assert stats["total_skills"] == len(SKILLS)
    assert stats["categories"]["creative"] == 3 and stats["categories"]["devops"] == 3
    assert stats["graph"]["edge_types"]["related"] >= 3  # excalidraw->ascii-art, ->sketch, ascii-art->excalidraw
    assert stats["graph"]["edges"] == sum(stats["graph"]["edge_types"].values())
    assert stats["embedder"] == "none"


def test_backend_names_map_to_graphmem_embedders(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OLLAMA_BASE_URL", raising=False)
    assert OLLAMA_BASE_URL == "http://localhost:11434/v1"
    assert embeddings_config("ollama") == {"model": "openai:bge-m3", "base_url": "http://localhost:11434/v1"}
    assert embeddings_config("ollama", model="nomic-embed-text", url="http://gpu:11434") == {
        "model": "openai:nomic-embed-text", "base_url": "http://gpu:11434/v1"}
    monkeypatch.setenv("OLLAMA_BASE_URL", "http://box:11434/")
    assert embeddings_config("ollama")["base_url"] == "http://box:11434/v1"
    assert embeddings_config("openai") == {"model": "openai:text-embedding-3-small"}
    assert embeddings_config("local") == {}  # the knowledge base's configured (static) model
    assert embeddings_config("local", model="all-MiniLM-L6-v2") == {"model": "sentence-transformers:all-MiniLM-L6-v2"}
    assert embeddings_config("model2vec:/models/x") == {"model": "model2vec:/models/x"}
    assert embeddings_config("none") == {"model": "none"}
    for bad in ("cohere", "", None):
        with pytest.raises(InvalidInput, match="backend"):
            embeddings_config(bad)  # type: ignore[arg-type]


def test_ollama_backend_is_configured_at_ollamas_default_url(skills_dir: Path, home: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OLLAMA_BASE_URL", raising=False)
    with SkillGraph(skills_dir=skills_dir, backend="ollama") as sg:  # nothing is embedded before build
        emb = sg.kb.config["embeddings"]
        assert (emb["model"], emb["base_url"]) == ("openai:bge-m3", "http://localhost:11434/v1")


def _vector(text: str) -> list[float]:
    """A deterministic bag-of-words vector (16 dims) for the fake server."""
    vec = [0.0] * 16
    for word in text.lower().split():
        vec[int(hashlib.md5(word.encode()).hexdigest(), 16) % 16] += 1.0
    return vec


def _embed(req: Recorded):
    texts = req.body["input"] if isinstance(req.body["input"], list) else [req.body["input"]]
    return embedding_reply([_vector(t) for t in texts])


@pytest.mark.parametrize("backend", ["ollama", "openai"])
def test_openai_compatible_backends_embed_through_the_server(backend: str, skills_dir: Path, home: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOpenAI(responder=_embed) as server:
        if backend == "ollama":
            sg = SkillGraph(skills_dir=skills_dir, backend="ollama", url=server.base_url.removesuffix("/v1"))
            model = "bge-m3"
        else:
            monkeypatch.setenv("GRAPHMEM_OPENAI_BASE_URL", server.base_url)
            sg = SkillGraph(skills_dir=skills_dir, backend="openai")
            model = "text-embedding-3-small"
        with sg:
            assert sg.build() == len(SKILLS)
            hits = sg.retrieve("hand-drawn excalidraw diagrams", top_k=5)
            assert hits[0].name == "excalidraw"
            assert sg.stats["embedder"] == f"openai:{model}"
        assert server.requests and {r.path for r in server.requests} == {"/v1/embeddings"}
        assert {r.body["model"] for r in server.requests} == {model}


def test_switching_backend_on_a_built_index_is_a_conflict(skills_dir: Path, home: Path) -> None:
    with FakeOpenAI(responder=_embed) as server:
        with SkillGraph(skills_dir=skills_dir, backend="ollama", url=server.base_url) as sg:
            sg.build()
        with SkillGraph(skills_dir=skills_dir, backend="ollama", model="other-model", url=server.base_url) as sg:
            sg.build()  # nothing changed: nothing to embed
            with pytest.raises(Conflict, match="reindex"):
                sg.retrieve("hand-drawn diagrams")


def test_missing_skills_dir_is_a_clear_error(tmp_path: Path, home: Path) -> None:
    with SkillGraph(skills_dir=tmp_path / "nope") as sg, pytest.raises(InvalidInput, match="nope"):
        sg.build()
    with pytest.raises(InvalidInput, match="skills_dir"):
        SkillGraph(skills_dir="")


# -- adapters -----------------------------------------------------------------------------------


def test_readme_adapter_example(skills_dir: Path, home: Path) -> None:
    from graphmem.compat.skillgraph.adapters import GenericAdapter, HermesAdapter

    adapter = HermesAdapter(skills_dir=str(skills_dir), backend="local")
    prompt = adapter.build_prompt(user_message="generate a diagram")
    assert prompt.startswith("<available_skills>") and prompt.rstrip().endswith("</available_skills>")
    assert "<name>excalidraw</name>" in prompt
    assert adapter.top_k == 8
    n_skills = len(list(skills_dir.rglob("SKILL.md")))
    assert n_skills > 8 and 1 <= prompt.count("<skill>") <= 8  # the top 8, never all of them
    adapter.close()

    adapter = GenericAdapter(skills_dir=str(skills_dir), backend="local")
    block = adapter.build_prompt(user_message="generate a diagram", top_k=3)
    assert "**excalidraw**" in block and block.count("- **") == 3
    assert adapter.get_skills_dir() == skills_dir
    assert adapter.stats["total_skills"] == len(SKILLS)
    assert [s.name for s in adapter.retrieve("spin up a minecraft server", top_k=1)] == ["minecraft-modpack-server"]
    adapter.close()


def test_claude_code_adapter(skills_dir: Path, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from graphmem.compat.skillgraph.adapters import ClaudeCodeAdapter

    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    assert ClaudeCodeAdapter().get_skills_dir() == project / ".claude" / "skills"
    adapter = ClaudeCodeAdapter(skills_dir=skills_dir, backend="local", top_k=4)
    prompt = adapter.build_prompt(user_message="turn kubernetes yaml into a helm chart")
    assert "helm-chart-builder" in prompt
    written = adapter.write_context_file("turn kubernetes yaml into a helm chart")
    assert written == project / ".claude" / "skills-context.md"
    assert "helm-chart-builder" in written.read_text(encoding="utf-8")
    adapter.close()


def test_hermes_adapter_finds_hermes_home(tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from graphmem.compat.skillgraph.adapters import HermesAdapter

    hermes = tmp_path / "hermes"
    write_skills(hermes / "skills")
    monkeypatch.setenv("HERMES_HOME", str(hermes))
    adapter = HermesAdapter(backend="local")
    assert adapter.get_skills_dir() == hermes / "skills"
    assert "<name>arxiv</name>" in adapter.build_prompt("search arxiv for papers by this author")
    adapter.close()


def test_empty_skills_folder_gives_an_empty_prompt(tmp_path: Path, home: Path) -> None:
    from graphmem.compat.skillgraph.adapters import GenericAdapter

    (tmp_path / "empty").mkdir()
    adapter = GenericAdapter(skills_dir=tmp_path / "empty", backend="local")
    assert adapter.build_prompt(user_message="anything at all") == ""
    adapter.close()


def test_with_an_embedder_top_k_is_filled(skills_dir: Path, home: Path, model_dir: Path) -> None:
    """With embeddings (the offline test model as a SPEC backend) retrieval returns top_k skills."""
    with SkillGraph(skills_dir=skills_dir, backend=f"model2vec:{model_dir}") as sg:
        sg.build()
        results = sg.retrieve("generate a hand-drawn diagram", top_k=5)
        assert len(results) == 5
        assert results[0].name == "excalidraw"
        assert {"ascii-art", "sketch"} <= {r.name for r in results}  # excalidraw's related skills
        assert sg.stats["embedder"].startswith("model2vec:")

"""The key rule (issue 12, defect 6): $OPENAI_API_KEY only goes to an address the user chose
(environment, argument, default) or confirmed with `graphmem config trust`; a knowledge base's
own config.toml cannot send it (or the documents) anywhere on its own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import graphmem
from fake_openai import FakeOpenAI, Reply, chat_reply, embedding_reply, extraction_reply
from graphmem.cli import cli
from graphmem.errors import InvalidInput

pytestmark = pytest.mark.reliability

KEY = "sk-user-secret-0123456789"
TEXT = "Alice founded Acme in Paris. Acme builds robots."


@pytest.fixture(autouse=True)
def _user_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's key in the environment, and a private config dir for trusted.toml."""
    xdg = tmp_path / "xdg"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(xdg))
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    for name in ("GRAPHMEM_OPENAI_BASE_URL", "GRAPHMEM_LLM__BASE_URL", "GRAPHMEM_EMBEDDINGS__BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    return xdg


def _handed_kb(tmp_path: Path, server: FakeOpenAI, extra: str = "") -> Path:
    """A knowledge base folder someone hands you: its config.toml points [llm] at their server."""
    home = tmp_path / "kb"
    graphmem.open(home).close()
    cfg = home / "config.toml"
    cfg.write_text(cfg.read_text(encoding="utf-8").replace(
        'base_url = ""', f'base_url = "{server.base_url}"').replace('model = ""', 'model = "test-model"')
        .replace('extractor = "offline"', 'extractor = "llm"') + extra, encoding="utf-8")
    (tmp_path / "docs").mkdir(exist_ok=True)
    (tmp_path / "docs" / "a.txt").write_text(TEXT, encoding="utf-8")
    return home


def _extraction() -> Reply:
    return extraction_reply([{"name": "Alice", "type": "person", "supporting_text": "Alice founded Acme"}], [])


def test_kb_config_cannot_send_the_env_key_to_its_llm_server(tmp_path: Path) -> None:
    with FakeOpenAI([_extraction()]) as server:
        home = _handed_kb(tmp_path, server)
        with graphmem.open(home) as kb:
            before = kb.stats()["events"]
            with pytest.raises(InvalidInput) as info:
                kb.ingest_paths([tmp_path / "docs"])
            assert kb.stats()["events"] == before and kb.stats()["documents"] == 0
        message = str(info.value)
        assert "OPENAI_API_KEY" in message and server.base_url in message
        assert "graphmem --home" in message and "config trust" in message and "nothing was sent" in message
        assert KEY not in message
        assert server.requests == []


def test_cli_refuses_in_one_line_then_trust_allows_it(tmp_path: Path, _user_env: Path) -> None:
    with FakeOpenAI([_extraction()]) as server:
        home = _handed_kb(tmp_path, server)
        runner = CliRunner()
        refused = runner.invoke(cli, ["--home", str(home), "ingest", str(tmp_path / "docs")], obj={})
        assert refused.exit_code == 1
        assert refused.output.strip().count("\n") == 0 and refused.output.startswith("error: refusing to send")
        assert server.requests == []

        trusted = runner.invoke(cli, ["--home", str(home), "config", "trust", "--json"], obj={})
        assert trusted.exit_code == 0, trusted.output
        assert json.loads(trusted.output)["trusted"] == {"llm": server.base_url}
        record = _user_env / "graphmem" / "trusted.toml"
        assert record.exists() and str(home.resolve()) in record.read_text(encoding="utf-8")
        assert KEY not in record.read_text(encoding="utf-8")
        assert not any(p.name == "trusted.toml" for p in home.rglob("*"))  # never inside the folder

        done = runner.invoke(cli, ["--home", str(home), "ingest", str(tmp_path / "docs")], obj={})
        assert done.exit_code == 0, done.output
        (req,) = server.requests
        assert req.headers["Authorization"] == f"Bearer {KEY}"


def test_trust_is_per_folder_and_per_address(tmp_path: Path) -> None:
    with FakeOpenAI() as server:
        home = _handed_kb(tmp_path, server)
        assert graphmem.trust_endpoints(home) == {"llm": server.base_url}
        # The same address in another folder is not trusted.
        other = tmp_path / "other"
        other.mkdir()
        (other / "config.toml").write_text((home / "config.toml").read_text(encoding="utf-8"), encoding="utf-8")
        with graphmem.open(other) as kb, pytest.raises(InvalidInput, match="config trust"):
            kb.ingest_paths([tmp_path / "docs"])
        # Changing the trusted folder's address needs trusting again.
        cfg = home / "config.toml"
        cfg.write_text(cfg.read_text(encoding="utf-8").replace(server.base_url, "http://127.0.0.1:9/v1"),
                       encoding="utf-8")
        with graphmem.open(home) as kb, pytest.raises(InvalidInput, match=r"http://127\.0\.0\.1:9/v1"):
            kb.ingest_paths([tmp_path / "docs"])
        assert server.requests == []


def test_addresses_the_user_chose_get_the_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOpenAI([_extraction(), _extraction()]) as server:
        home = tmp_path / "kb"
        # A Python argument.
        with graphmem.open(home, config={"llm": {"base_url": server.base_url, "model": "m"}}) as kb:
            kb.ingest_paths([_doc(tmp_path, "a.txt")], extractor="llm")
        # The environment.
        monkeypatch.setenv("GRAPHMEM_LLM__BASE_URL", server.base_url)
        monkeypatch.setenv("GRAPHMEM_LLM__MODEL", "m")
        with graphmem.open(home) as kb:
            kb.ingest_paths([_doc(tmp_path, "b.txt")], extractor="llm")
        assert [r.headers.get("Authorization") for r in server.requests] == [f"Bearer {KEY}"] * 2


def _doc(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    path.write_text(TEXT + " " + name, encoding="utf-8")
    return path


def test_without_a_key_the_files_address_is_used_keyless(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    with FakeOpenAI([_extraction()]) as server:
        home = _handed_kb(tmp_path, server)
        with graphmem.open(home) as kb:
            kb.ingest_paths([tmp_path / "docs"])
        (req,) = server.requests
        assert "Authorization" not in req.headers


def test_kb_config_cannot_send_the_key_to_its_embeddings_server(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GRAPHMEM_EMBED_MODEL")
    with FakeOpenAI(responder=lambda r: embedding_reply([[1.0, 0.0]] * len(r.body["input"]))) as server:
        home = _handed_kb(tmp_path, server)
        cfg = home / "config.toml"
        text = cfg.read_text(encoding="utf-8").replace('extractor = "llm"', 'extractor = "offline"')
        text = text.replace('model = "model2vec:minishlab/potion-retrieval-32M"',
                            f'model = "openai:emb"\nbase_url = "{server.base_url}"')
        cfg.write_text(text, encoding="utf-8")
        with graphmem.open(home) as kb:
            with pytest.raises(InvalidInput, match=r"\[embeddings\] base_url"):
                kb.ingest_with_content("a", "A", "a.txt", TEXT)
            assert kb.stats()["documents"] == 0
            with pytest.raises(InvalidInput, match="OPENAI_API_KEY"):
                kb.search("Alice")
        assert server.requests == []
        graphmem.trust_endpoints(home)
        with graphmem.open(home) as kb:
            kb.ingest_with_content("a", "A", "a.txt", TEXT)
        assert server.requests and all(r.headers["Authorization"] == f"Bearer {KEY}" for r in server.requests)


def test_kb_config_cannot_send_the_key_to_its_memory_llm(tmp_path: Path) -> None:
    with FakeOpenAI([chat_reply(json.dumps({"facts": [{"fact": "likes tea", "message": 1}]}))]) as server:
        home = _handed_kb(tmp_path, server)
        with graphmem.open(home) as kb:
            with pytest.raises(InvalidInput, match="refusing to send"):
                kb.memory.add("I like tea", user_id="u", infer=True)
            assert kb.memory.get_all(user_id="u")["results"] == []
        assert server.requests == []


def test_a_kb_config_cannot_hold_a_key(tmp_path: Path) -> None:
    home = tmp_path / "kb"
    graphmem.open(home).close()
    (home / "config.toml").write_text('[llm]\napi_key = "sk-theirs"\n', encoding="utf-8")
    with pytest.raises(InvalidInput, match="unknown config key 'llm.api_key'"):
        graphmem.open(home)

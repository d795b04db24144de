"""``graphmem config ...``: which addresses a knowledge base's config.toml may send your key to."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..errors import InvalidInput
from ..trust import revoke_endpoints, trust_endpoints, trust_file, trusted_urls
from .app import _emit, handle_errors, json_option

__all__ = ["config"]


@click.group()
def config() -> None:
    """Configuration of the knowledge base."""


@config.command("trust")
@click.option("--revoke", is_flag=True, help="Forget the addresses trusted for this knowledge base.")
@click.option("--list", "list_only", is_flag=True, help="Only show what is trusted.")
@json_option
@click.pass_context
@handle_errors
def trust(ctx: click.Context, revoke: bool, list_only: bool, as_json: bool) -> None:
    """Allow this knowledge base's [llm] / [embeddings] base_url to receive $OPENAI_API_KEY.

    The addresses config.toml names now are recorded outside the folder, in
    $XDG_CONFIG_HOME/graphmem/trusted.toml; a changed address needs trusting again."""
    home: Path = ctx.obj["home"]
    if not (home / "config.toml").is_file():
        raise InvalidInput(f"no config.toml in {home}; nothing to trust (check --home)")
    where = str(trust_file())
    if revoke:
        data: dict[str, Any] = {"home": str(home.resolve()), "revoked": revoke_endpoints(home), "file": where}
        _emit(data, as_json, lambda d: f"revoked {len(d['revoked'])} address(es) for {d['home']}"
                                       + "".join(f"\n  {u}" for u in d["revoked"]))
        return
    if list_only:
        data = {"home": str(home.resolve()), "trusted": sorted(trusted_urls(home)), "file": where}
        _emit(data, as_json, lambda d: f"trusted for {d['home']}: " + (", ".join(d["trusted"]) or "nothing"))
        return
    added = trust_endpoints(home)
    data = {"home": str(home.resolve()), "trusted": added, "file": where}

    def human(d: dict[str, object]) -> str:
        if not added:
            return f"nothing to trust: {home / 'config.toml'} sets no [llm] or [embeddings] base_url"
        rows = "".join(f"\n  [{section}] base_url {url}" for section, url in added.items())
        return f"trusted for {d['home']} (recorded in {d['file']}):{rows}"

    _emit(data, as_json, human)

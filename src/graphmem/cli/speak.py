"""Library messages in the CLI's words.

The library's errors are written for Python callers ("add it with add_node(name, type)"); a person
at the terminal needs the command and its options instead. The wrapper that prints errors passes
every message through :func:`cli_wording`; an unknown message is printed unchanged.
"""

from __future__ import annotations

__all__ = ["cli_wording"]

# (what the library says, what the CLI says); checked in order, every match replaced
_PHRASES: tuple[tuple[str, str], ...] = (
    ("add it with add_node(name, type)", "add it with `graphmem entity add NAME --type TYPE`"),
    ("give at least one of user_id, agent_id, run_id, tenant_id",
     "give at least one of --user, --agent, --run, --tenant"),
    ("list ids with get_all(user_id=...) or `graphmem memory list --user ...`",
     "list ids with `graphmem memory list --user ...`"),
    ("use user_id, agent_id, run_id, tenant_id", "use --user, --agent, --run, --tenant"),
)


def cli_wording(message: str) -> str:
    """``message`` with the Python calls it names replaced by the matching command or option."""
    for python, command in _PHRASES:
        message = message.replace(python, command)
    return message

"""The seeds' own APIs over graphmem, so that their users change one import line.

- :mod:`graphmem.compat.mini_context_graph` — the Mini Context Graph Agent Skill
  (``ContextGraphSkill``, ``wiki_store``, ``documents_store``);
- :mod:`graphmem.compat.skillgraph` — SkillGraph (``SkillGraph``, and the adapters in
  :mod:`graphmem.compat.skillgraph.adapters`);
- :mod:`graphmem.compat.contextkit` — ContextKit's ``Memory`` with its ``context_graph`` block.

These are interfaces: they shape arguments and results and call the public graphmem API
(``graphmem.open`` and the ``kb.*`` faces); nothing below the interfaces imports them (the CLI
reuses SkillGraph's backend names). Each submodule is
imported on its own, so that using one seed's names costs nothing for the others.
"""

from __future__ import annotations

__all__ = ["mini_context_graph", "skillgraph", "contextkit"]

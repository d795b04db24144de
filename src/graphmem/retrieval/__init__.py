"""Retrieval: one core (seeds -> expand -> rerank -> evidence) and its adapters.

:mod:`.core` (the one BFS, with :mod:`.ppr` the one PageRank, and the rerank helpers) knows no
node kind; :mod:`.passages` / :mod:`.search` (chunks, entities, documents, pages),
:mod:`.graph_query` (the seed's entity query), ``memory/search.py`` and ``skills/retrieve.py``
are adapters over it, configured by one :class:`.config.SearchConfig`.
"""

from .graph_query import bfs, find_seed_entities, graph_query, query_with_evidence

__all__ = ["bfs", "find_seed_entities", "graph_query", "query_with_evidence"]

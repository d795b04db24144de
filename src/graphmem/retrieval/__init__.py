"""Retrieval: seeds, graph expansion and evidence."""

from .graph_query import bfs, find_seed_entities, graph_query, query_with_evidence

__all__ = ["bfs", "find_seed_entities", "graph_query", "query_with_evidence"]

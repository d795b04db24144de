"""Memories as a context graph: scopes and validation, automatic edges, search, decay, LLM help.

The public entry point is ``kb.memory`` (:class:`graphmem.faces.memory.Memory`).
"""

from .decay import relevance_now, tick
from .edges import AUTO_TYPES, EDGE_WEIGHTS, LLM_TYPES, plan_edges
from .search import STRATEGIES, rank_memories

__all__ = ["AUTO_TYPES", "EDGE_WEIGHTS", "LLM_TYPES", "STRATEGIES", "plan_edges", "rank_memories",
           "relevance_now", "tick"]

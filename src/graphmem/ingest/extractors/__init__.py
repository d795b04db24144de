"""Extractors behind one contract (see :mod:`.base`): offline rules, an LLM, or the agent."""

from .base import ExtractionError, Extractor, SourceDocument, validate_extraction

__all__ = ["ExtractionError", "Extractor", "SourceDocument", "validate_extraction"]

"""The wiki layer's engine: slugs, page markdown, atomic file changes, index files,
generated pages and lint. The public face is :class:`graphmem.faces.wiki.Wiki` (``kb.wiki``)."""

from .core import PageWrite, Plan, WikiCore
from .lint import LINT_KEYS
from .slugs import slugify

__all__ = ["LINT_KEYS", "PageWrite", "Plan", "WikiCore", "slugify"]

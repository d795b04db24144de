"""Skills: SKILL.md collections indexed as graph nodes and retrieved a few at a time."""

from .parse import SkillDoc, parse_skill

__all__ = ["SkillDoc", "parse_skill"]

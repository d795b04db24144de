"""The Agent Skills specification's front matter rules (agentskills.io/specification).

``name``: required, 1-64 characters, lowercase letters, digits and hyphens, no leading, trailing or
doubled hyphen, the same as the skill's folder name. ``description``: required, non-empty, at most
1024 characters. ``license``: optional text. ``compatibility``: optional, 1-500 characters.
``metadata``: optional map of string keys to string values. ``allowed-tools``: optional,
space-separated tool names (a string). Each violation is one sentence naming the field and what
to change; collections in use break these rules often, so they are reported, never refused.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..frontmatter import FrontMatterError, load_front_matter
from .parse import split_front_matter

__all__ = ["spec_violations", "check_skill_file", "model_may_invoke", "MAX_NAME", "MAX_DESCRIPTION",
           "MAX_COMPATIBILITY"]

MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_COMPATIBILITY = 500
_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


def spec_violations(front_matter: Mapping[str, Any], folder_name: str | None = None) -> list[str]:
    """What in ``front_matter`` breaks the Agent Skills specification (empty: nothing)."""
    out: list[str] = []
    name = front_matter.get("name")
    if not isinstance(name, str) or not name.strip():
        out.append("name: missing; give the skill a name (lowercase letters, digits, hyphens)")
    else:
        if len(name) > MAX_NAME:
            out.append(f"name: {len(name)} characters, over {MAX_NAME}")
        if not _NAME.match(name):
            out.append(f"name: '{name}' must be lowercase letters, digits and single hyphens, not starting or "
                       "ending with a hyphen")
        if folder_name is not None and name != folder_name:
            out.append(f"name: '{name}' differs from its folder '{folder_name}'; rename one to match")
    desc = front_matter.get("description")
    if not isinstance(desc, str) or not desc.strip():
        out.append("description: missing or empty; say what the skill does and when to use it")
    elif len(desc) > MAX_DESCRIPTION:
        out.append(f"description: {len(desc)} characters, over {MAX_DESCRIPTION}; shorten it")
    lic = front_matter.get("license")
    if lic is not None and (not isinstance(lic, str) or not lic.strip()):
        out.append("license: expected a licence name or the name of a bundled licence file")
    comp = front_matter.get("compatibility")
    if comp is not None:
        if not isinstance(comp, str) or not comp.strip():
            out.append("compatibility: expected a non-empty text")
        elif len(comp) > MAX_COMPATIBILITY:
            out.append(f"compatibility: {len(comp)} characters, over {MAX_COMPATIBILITY}")
    meta = front_matter.get("metadata")
    if meta is not None:
        if not isinstance(meta, Mapping):
            out.append("metadata: expected a map of string keys to string values")
        else:
            bad = sorted(str(k) for k, v in meta.items() if not isinstance(k, str) or not isinstance(v, str))
            if bad:
                out.append(f"metadata: values must be strings (not: {', '.join(bad[:5])})")
    tools = front_matter.get("allowed-tools")
    if tools is not None and (not isinstance(tools, str) or not tools.strip()):
        out.append("allowed-tools: expected a space-separated string of tool names")
    return out


def check_skill_file(path: str | Path) -> list[str]:
    """Violations of one SKILL.md (or of the folder holding it), its folder name included."""
    p = Path(path)
    if p.is_dir():
        p = p / "SKILL.md"
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return [f"{p}: cannot be read ({exc})"]
    fm_text, _body = split_front_matter(text)
    if fm_text is None:
        return ["front matter: missing; a SKILL.md starts with a --- block holding name and description"]
    try:
        fm = load_front_matter(fm_text)
    except FrontMatterError as exc:
        return [f"front matter: not valid YAML ({exc})"]
    return spec_violations(fm, p.parent.name)


def model_may_invoke(front_matter: Any) -> bool:
    """False for a skill whose front matter sets ``disable-model-invocation`` (true, "true", "yes",
    "1"): the user invokes it, so no interface offers it to an agent (MCP and HTTP share this rule)."""
    if not isinstance(front_matter, dict):
        return True
    value = front_matter.get("disable-model-invocation")
    return not (value is True or (isinstance(value, str) and value.strip().lower() in ("true", "yes", "1")))

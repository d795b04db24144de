"""Configuration: defaults < ``config.toml`` < environment < arguments.

A knowledge base folder holds ``config.toml``. Any key can be overridden from the
environment as ``GRAPHMEM_<SECTION>__<KEY>`` (e.g. ``GRAPHMEM_GRAPH__MAX_DEPTH=3``) and from
code with ``graphmem.open(home, config={"graph": {"max_depth": 3}})``.

The sections are frozen dataclasses declared in :mod:`graphmem.config_sections` (defaults, bounds
and template comments in one place); code reads attributes (``config.graph.max_depth``).
``config["graph"]`` remains as a read-only mapping view for users.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from .config_sections import (
    SECTIONS,
    ChunkingConfig,
    EmbeddingsConfig,
    GraphConfig,
    IngestConfig,
    LLMConfig,
    MemoryConfig,
    OntologyConfig,
    SearchSettings,
    SkillsConfig,
    StoreConfig,
    WikiConfig,
    check_store_url,
)
from .errors import InvalidInput
from .ontology import Ontology

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

__all__ = ["DEFAULTS", "Config", "load_config", "DEFAULT_CONFIG_TOML", "set_config_value", "config_template"]

_MAX_NUMBER = 1e12  # no setting needs more; past it arithmetic overflows (busy_timeout * 1000 ...)


# -- dataclasses <-> plain data ----------------------------------------------------------------

def _is_nested(f: dataclasses.Field[Any]) -> bool:
    return bool(f.metadata.get("nested"))


def _plain(obj: Any) -> dict[str, Any]:
    """A section instance as nested plain dicts (tables copied)."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if _is_nested(f):
            out[f.name] = _plain(value)
        elif isinstance(value, Mapping):
            out[f.name] = dict(value)
        else:
            out[f.name] = value
    return out


def _build(cls: type, data: Mapping[str, Any]) -> Any:
    """A section instance from validated plain data (tables frozen)."""
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        value = data[f.name]
        if _is_nested(f):
            kwargs[f.name] = _build(f.type if isinstance(f.type, type) else _field_class(cls, f.name), value)
        elif f.metadata.get("table"):
            kwargs[f.name] = MappingProxyType(dict(value))
        else:
            kwargs[f.name] = value
    return cls(**kwargs)


def _field_class(cls: type, name: str) -> type:
    # With postponed annotations f.type is a string; the default instance tells the class.
    return type(getattr(cls(), name))


def _readonly(data: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType({k: _readonly(v) if isinstance(v, Mapping) else v for k, v in data.items()})


def _defaults() -> dict[str, dict[str, Any]]:
    return {name: _plain(cls()) for name, cls in SECTIONS.items()}


DEFAULTS: dict[str, dict[str, Any]] = _defaults()


# -- merging file / environment / argument values over the defaults ------------------------------

def _table_keys(cls: type, prefix: str = "") -> set[str]:
    """Dotted names of the free-form string tables (merged rather than replaced)."""
    out: set[str] = set()
    for f in dataclasses.fields(cls):
        if _is_nested(f):
            out |= _table_keys(_field_class(cls, f.name), f"{prefix}{f.name}.")
        elif f.metadata.get("table"):
            out.add(f"{prefix}{f.name}")
    return out


_TABLES = {f"{name}.{key}" for name, cls in SECTIONS.items() for key in _table_keys(cls)}


def _merge(base: dict[str, Any], override: Mapping[str, Any], where: str) -> None:
    for key, value in override.items():
        if key not in base:
            raise InvalidInput(
                f"unknown config key '{where}{key}'; known keys: {', '.join(sorted(base))}"
            )
        if isinstance(base[key], dict):
            if not isinstance(value, Mapping):
                raise InvalidInput(f"config key '{where}{key}' must be a table, got {type(value).__name__}")
            if f"{where}{key}" in _TABLES:
                for k, v in value.items():
                    if not isinstance(v, str):
                        raise InvalidInput(f"config key '{where}{key}.{k}' must be a string")
                base[key].update(value)
            else:
                _merge(base[key], value, f"{where}{key}.")
        else:
            base[key] = _coerce(value, base[key], f"{where}{key}")


def _coerce(value: Any, default: Any, name: str) -> Any:
    kind = type(default)
    try:
        if kind is bool:
            if isinstance(value, str):
                if value.lower() in ("1", "true", "yes", "on"):
                    return True
                if value.lower() in ("0", "false", "no", "off"):
                    return False
                raise ValueError(value)
            return bool(value)
        if kind is int and isinstance(value, float) and not value.is_integer():
            raise ValueError(value)
        if isinstance(value, bool) and kind in (int, float):
            raise ValueError(value)
        return kind(value)
    except (TypeError, ValueError):
        raise InvalidInput(
            f"config key '{name}' must be {kind.__name__}, got {value!r}"
        ) from None


# -- validation: every rule in one place, each error naming its key -----------------------------

def _check_section(cls: type, data: Mapping[str, Any], where: str) -> None:
    """Numbers finite and within their declared bounds, strings among their declared choices."""
    for f in dataclasses.fields(cls):
        value = data[f.name]
        if _is_nested(f):
            _check_section(_field_class(cls, f.name), value, f"{where}.{f.name}")
            continue
        meta = f.metadata
        if meta.get("checked_where_used"):
            continue
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if not math.isfinite(value) or abs(value) > _MAX_NUMBER:
                raise InvalidInput(f"config key [{where}] {f.name}: {value!r} is not a usable number "
                                   f"(must be finite and at most {_MAX_NUMBER:g} in size)")
            # No setting means anything below zero (a count, a weight, a similarity, a time): a bound not
            # declared is 0, so wiki.max_documents = -5 is refused by name instead of truncating pages.
            lo = 0.0 if meta.get("low") is None else meta["low"]
            hi = _MAX_NUMBER if meta.get("high") is None else meta["high"]
            low_open = bool(meta.get("low_open"))
            if value > hi or value < lo or (value == lo and low_open):
                bound = f"> {lo:g}" if low_open else f">= {lo:g}"
                raise InvalidInput(f"config key [{where}] {f.name}: {value!r} is out of range "
                                   f"(must be {bound} and <= {hi:g})")
        choices = meta.get("choices")
        if choices and value not in choices:
            raise InvalidInput(f"config key '{where}.{f.name}' must be "
                               f"{' or '.join(map(repr, choices))}, got {value!r}")


def _validate(data: Mapping[str, Mapping[str, Any]]) -> None:
    for name, cls in SECTIONS.items():
        _check_section(cls, data[name], name)
    size, overlap = data["chunking"]["size"], data["chunking"]["overlap"]
    check_store_url(data["store"]["url"], "config key [store] url")
    if overlap >= size // 2:  # the chunker's own rule, checked on open rather than at the first ingest
        raise InvalidInput(f"config key [chunking] overlap: {overlap!r} must be less than half of "
                           f"[chunking] size ({size // 2})")


# -- the resolved configuration -----------------------------------------------------------------

@dataclass(frozen=True)
class Config:
    """Resolved configuration of one knowledge base: one frozen section per ``config.toml`` table.

    Build it with :func:`load_config` (or ``Config.from_data``, which validates). ``origins`` maps
    ``"section.key"`` to file / env / argument (absent: default), for the key rule (trust.py).
    """

    chunking: ChunkingConfig = field(default_factory=ChunkingConfig)
    graph: GraphConfig = field(default_factory=GraphConfig)
    ontology_settings: OntologyConfig = field(default_factory=OntologyConfig)
    store: StoreConfig = field(default_factory=StoreConfig)
    ingest: IngestConfig = field(default_factory=IngestConfig)
    embeddings: EmbeddingsConfig = field(default_factory=EmbeddingsConfig)
    search: SearchSettings = field(default_factory=SearchSettings)
    skills: SkillsConfig = field(default_factory=SkillsConfig)
    wiki: WikiConfig = field(default_factory=WikiConfig)
    memory: MemoryConfig = field(default_factory=MemoryConfig)
    llm: LLMConfig = field(default_factory=LLMConfig)
    origins: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)
    ontology: Ontology = field(init=False, compare=False, repr=False)
    _views: dict[str, Mapping[str, Any]] = field(init=False, compare=False, repr=False, default_factory=dict)

    def __post_init__(self) -> None:
        o = self.ontology_settings
        try:
            onto = Ontology(dict(o.type_synonyms), dict(o.relation_synonyms), dict(o.inverse_relations),
                            dict(o.opposite_relations), max_entity_types=o.max_entity_types)
        except ValueError as exc:
            raise InvalidInput(str(exc)) from None
        object.__setattr__(self, "ontology", onto)
        object.__setattr__(self, "origins", MappingProxyType(dict(self.origins)))

    @classmethod
    def from_data(cls, data: Mapping[str, Mapping[str, Any]], origins: Mapping[str, str] | None = None) -> Config:
        """Validate plain data (every section and key present, as in :data:`DEFAULTS`) into a Config."""
        _validate(data)
        sections = {("ontology_settings" if name == "ontology" else name): _build(section_cls, data[name])
                    for name, section_cls in SECTIONS.items()}
        return cls(**sections, origins=dict(origins or {}))

    def section(self, name: str) -> Any:
        """The section dataclass of table ``name`` (``"ontology"`` gives the settings, not the Ontology)."""
        if name not in SECTIONS:
            raise KeyError(name)
        return getattr(self, "ontology_settings" if name == "ontology" else name)

    def __getitem__(self, name: str) -> Mapping[str, Any]:
        """Read-only mapping view of one table, for users who read ``config["graph"]["max_depth"]``."""
        view = self._views.get(name)
        if view is None:  # built once per table: the sections are frozen
            view = self._views[name] = _readonly(_plain(self.section(name)))
        return view

    def origin(self, section: str, key: str) -> str:
        """Where ``[section] key`` was set last: file, env, argument or default."""
        return self.origins.get(f"{section}.{key}", "default")

    def to_dict(self) -> dict[str, Any]:
        """The resolved configuration as plain data."""
        return {name: _plain(self.section(name)) for name in SECTIONS}


def load_config(
    home: Path | None,
    overrides: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Config:
    """Resolve the configuration for the knowledge base at ``home``."""
    data = copy.deepcopy(DEFAULTS)
    origins: dict[str, str] = {}
    if home is not None:
        path = home / "config.toml"
        if path.exists():
            try:
                with path.open("rb") as fh:
                    file_data = tomllib.load(fh)
            except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
                raise InvalidInput(f"{path}: not valid TOML ({exc}); fix or delete the file") from None
            _merge(data, file_data, "")
            _record_origins(origins, file_data, "file")
    env = os.environ if environ is None else environ
    env_data: dict[str, dict[str, Any]] = {}
    for name, value in env.items():
        if not name.startswith("GRAPHMEM_") or "__" not in name:
            continue
        section, _, key = name[len("GRAPHMEM_"):].lower().partition("__")
        if section not in data or isinstance(data[section].get(key), dict):
            continue
        if key not in data[section]:
            raise InvalidInput(f"environment variable {name}: unknown config key '{section}.{key}'")
        env_data.setdefault(section, {})[key] = value
    # The issue-named shortcut for the one embedding setting.
    if env.get("GRAPHMEM_EMBED_MODEL"):
        env_data.setdefault("embeddings", {})["model"] = env["GRAPHMEM_EMBED_MODEL"]
    # and for where the store lives (checked here, so that the error names the variable)
    if env.get("GRAPHMEM_STORE", "").strip():
        env_data.setdefault("store", {})["url"] = check_store_url(env["GRAPHMEM_STORE"], "environment variable "
                                                                  "GRAPHMEM_STORE")
    _merge(data, env_data, "")
    _record_origins(origins, env_data, "env")
    if overrides:
        _merge(data, json.loads(json.dumps(overrides)), "")
        _record_origins(origins, overrides, "argument")
    if isinstance(data["store"]["url"], str):  # a url pasted with spaces around it still works
        data["store"]["url"] = data["store"]["url"].strip()
    return Config.from_data(data, origins)


def _record_origins(origins: dict[str, str], source: Mapping[str, Any], origin: str) -> None:
    for section, table in source.items():
        if isinstance(table, Mapping):
            for key in table:
                origins[f"{section}.{key}"] = origin


# -- the config.toml template, written from the declarations --------------------------------------

def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    return repr(value)


def config_template() -> str:
    """The ``config.toml`` a new knowledge base gets: the settings marked ``template`` with their
    comments, the rest left at their defaults (every key is documented in the section classes)."""
    lines = ["# graphmem knowledge base configuration.",
             "# Precedence: argument > environment (GRAPHMEM_<SECTION>__<KEY>) > this file > defaults."]
    for name, cls in SECTIONS.items():
        chosen = [f for f in dataclasses.fields(cls) if f.metadata.get("template")]
        if not chosen:
            continue
        header = f"[{name}]"
        note = getattr(cls, "TEMPLATE_HEADER", "")
        lines += ["", f"{header:<23} # {note}" if note else header]
        rendered = [(f, f"{f.name} = {_toml_value(f.default)}") for f in chosen]
        width = max(len(text) for _, text in rendered) + 3
        for f, text in rendered:
            doc = f.metadata.get("doc", "")
            if "\n" in doc:
                lines += [f"# {ln}" for ln in doc.splitlines()] + [text]
            else:
                lines.append(f"{text:<{width}}# {doc}" if doc else text)
        lines += [f"# {ln}" for ln in getattr(cls, "TEMPLATE_NOTE", "").splitlines()]
    return "\n".join(lines) + "\n"


DEFAULT_CONFIG_TOML = config_template()


def set_config_value(home: Path, section: str, key: str, value: str) -> None:
    """Set one string value in ``<home>/config.toml``, keeping the rest of the file (comments
    included) as it is; the file is replaced atomically."""
    if section not in DEFAULTS or key not in DEFAULTS[section]:
        raise InvalidInput(f"unknown config key '{section}.{key}'")
    path = home / "config.toml"
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    rendered = f"{key} = {json.dumps(value)}"
    # "[store]  # a comment" is that table's header too: appending a second [store] makes invalid TOML
    start = next((i for i, ln in enumerate(lines) if ln.split("#", 1)[0].strip() == f"[{section}]"), None)
    if start is None:
        lines += ["", f"[{section}]", rendered]
    else:
        end = next((i for i in range(start + 1, len(lines)) if lines[i].lstrip().startswith("[")), len(lines))
        hit = next((i for i in range(start + 1, end)
                    if lines[i].split("=", 1)[0].strip() == key and not lines[i].lstrip().startswith("#")), None)
        if hit is None:
            lines.insert(start + 1, rendered)
        else:
            lines[hit] = rendered
    tmp = path.with_name(".config.toml.tmp")
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tmp.replace(path)

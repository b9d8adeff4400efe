"""Settings: defaults here, overrides in `.rose/config.yaml`, and `ROSE_SECTION_KEY` in the env.

Every key is `section.key` (or a bare top-level key such as `agent`); its
environment variable is `ROSE_` + the key upper-cased with dots as underscores,
e.g. `recall.max_pack_tokens` ↔ `ROSE_RECALL_MAX_PACK_TOKENS`. The reference in
docs/configuration.md is generated from the field descriptions below.

A setting whose behaviour is not built yet keeps its name, but its Field carries
`json_schema_extra=NOT_BUILT`: `rose config` and the docs then say "(not built yet)".
Remove the mark when code starts reading the setting (tests/test_settings_are_read.py
fails until you do, and fails on an unmarked setting that nothing reads).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.fields import FieldInfo

from rose.errors import ConfigError

#: The mark on a setting that is validated and shown but read by no code yet.
NOT_BUILT: dict[str, Any] = {"not_built": True}
#: How the mark reads in descriptions, `rose config` and the reference docs.
NOT_BUILT_LABEL = "(not built yet)"


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class Recall(_Section):
    enabled: bool = Field(True, description="Inject lessons on each prompt at all.")
    max_pack_tokens: int = Field(
        2000, ge=0, description="A store that fits this many tokens is served whole, unfiltered."
    )
    judge_calls: int = Field(3, ge=0, description="Most relevance calls one prompt may make.")
    max_depth: int = Field(3, ge=0, description="Most levels recall descends below the apexes.")
    stays_fresh_turns: int = Field(
        8, ge=1, description="Turns a served lesson counts as still in context."
    )
    strategy: Literal["delta-patch", "delta-jump", "stepwise"] = Field(
        "delta-patch",
        description="How descent restores detail when a compressed lesson fails.",
        json_schema_extra=NOT_BUILT,
    )


class Graph(_Section):
    engine: Literal["kuzu", "ladybug"] = Field(
        "kuzu", description="Embedded graph engine: kuzu 0.11.3, or its fork ladybug."
    )
    lock_timeout_s: float = Field(
        30.0, gt=0, description="How long a command waits for another process's database lock."
    )
    hook_lock_timeout_s: float = Field(
        2.0, gt=0, description="How long a hook waits for the database lock before degrading."
    )


class Compress(_Section):
    max_level: int = Field(
        6, ge=1, description="No compression above this level.", json_schema_extra=NOT_BUILT
    )
    min_successes: int = Field(
        2,
        ge=1,
        description="Used-and-succeeded recalls a lesson needs before compressing.",
        json_schema_extra=NOT_BUILT,
    )
    ratio: float = Field(
        0.75,
        gt=0,
        le=1,
        description="A compression must be at most this share of the tokens.",
        json_schema_extra=NOT_BUILT,
    )
    sample: int = Field(
        5,
        ge=1,
        description="Regression episodes replayed per compression.",
        json_schema_extra=NOT_BUILT,
    )


class Routing(_Section):
    max_tokens: int = Field(
        300,
        ge=0,
        description="Token cap on the always-injected rules.",
        json_schema_extra=NOT_BUILT,
    )


class Reflect(_Section):
    mode: Literal["background", "fork", "block", "off"] = Field(
        "background",
        description="How the per-turn reflector sees the session.",
        json_schema_extra=NOT_BUILT,
    )
    nudge_after_tool_calls: int = Field(
        12,
        ge=1,
        description="Tool calls that make a turn worth a thought.",
        json_schema_extra=NOT_BUILT,
    )
    nudge_after_turns: int = Field(
        3,
        ge=1,
        description="Turns that make a reflection worthwhile.",
        json_schema_extra=NOT_BUILT,
    )
    min_surprises: int = Field(
        2,
        ge=1,
        description="Failed tool calls that make a turn notable.",
        json_schema_extra=NOT_BUILT,
    )
    nudge_cooldown_s: int = Field(
        300,
        ge=0,
        description="Least seconds between two reflections.",
        json_schema_extra=NOT_BUILT,
    )


class Jobs(_Section):
    max_concurrent: int = Field(
        2, ge=1, description="Detached jobs that may run at once per store; the rest wait."
    )
    queue_max: int = Field(
        20, ge=1, description="Jobs that may wait for a slot; one more is dropped and logged."
    )
    deadline_s: float = Field(
        600.0, gt=0, description="Seconds a job may run unless its kind sets its own limit."
    )
    keep_days: float = Field(
        7.0,
        gt=0,
        description="Days a done job is kept (failed ones stay); its key is not rerun meanwhile.",
    )


class Config(_Section):
    agent: Literal["claude", "codex", "simulated"] = Field(
        "claude", description="Which model backend answers the judge's calls."
    )
    model: str = Field("", description="Model name passed to the backend CLI; empty: its default.")
    recall: Recall = Field(default_factory=Recall)
    graph: Graph = Field(default_factory=Graph)
    compress: Compress = Field(default_factory=Compress)
    routing: Routing = Field(default_factory=Routing)
    reflect: Reflect = Field(default_factory=Reflect)
    jobs: Jobs = Field(default_factory=Jobs)


def fields() -> dict[str, FieldInfo]:
    """Every settable key's pydantic field, in declaration order."""
    out: dict[str, FieldInfo] = {}
    for name, field in Config.model_fields.items():
        ann = field.annotation
        if isinstance(ann, type) and issubclass(ann, _Section):
            out.update({f"{name}.{sub}": sf for sub, sf in ann.model_fields.items()})
        else:
            out[name] = field
    return out


def _is_not_built(field: FieldInfo) -> bool:
    extra = field.json_schema_extra
    return isinstance(extra, dict) and bool(extra.get("not_built"))


def not_built(key: str) -> bool:
    """Whether `key` is marked NOT_BUILT: validated and shown, but read by no code yet."""
    field = fields().get(key)
    if field is None:
        raise ConfigError(key, None, "unknown key; `rose config` lists them")
    return _is_not_built(field)


def keys() -> dict[str, tuple[Any, str]]:
    """Every settable key with its default and description, in declaration order; the
    description of a key marked NOT_BUILT starts with NOT_BUILT_LABEL."""
    out: dict[str, tuple[Any, str]] = {}
    for key, field in fields().items():
        description = field.description or ""
        if _is_not_built(field):
            description = f"{NOT_BUILT_LABEL} {description}"
        out[key] = (field.default, description)
    return out


def env_name(key: str) -> str:
    return "ROSE_" + key.replace(".", "_").upper()


def _nest(flat: dict[str, Any]) -> dict[str, Any]:
    nested: dict[str, Any] = {}
    for key, value in flat.items():
        if "." in key:
            sec, sub = key.split(".", 1)
            nested.setdefault(sec, {})[sub] = value
        else:
            nested[key] = value
    return nested


def _flatten(data: dict[str, Any], where: str) -> dict[str, Any]:
    known = keys()
    flat: dict[str, Any] = {}
    for k, v in (data or {}).items():
        if isinstance(v, dict):
            for sk, sv in v.items():
                flat[f"{k}.{sk}"] = sv
        else:
            flat[str(k)] = v
    for k in flat:
        if k not in known:
            raise ConfigError(k, flat[k], f"unknown key in {where}; `rose config` lists them")
    return flat


def read_overrides(path: Path) -> dict[str, Any]:
    """The flat `key: value` overrides a config.yaml holds (empty when there is none)."""
    import yaml

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(str(path), "", f"not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(str(path), "", "must be a mapping of settings")
    return _flatten(data, str(path))


def _env_overrides() -> dict[str, Any]:

    out = {}
    for key in keys():
        raw = os.environ.get(env_name(key))
        if raw is not None:
            out[key] = parse_value(key, raw)
    return out


def parse_value(key: str, raw: str) -> Any:
    """A value typed on the command line or in the environment, as the setting's type wants.

    Text settings take the text as typed: YAML would read `off` or `no` as a boolean and
    `3` as a number, and `rose config reflect.mode off` must mean the word.
    """
    import yaml

    field = fields().get(key)
    if field is not None and _is_text(field.annotation):
        return raw.strip()
    return yaml.safe_load(raw) if raw.strip() else ""


def _is_text(annotation: Any) -> bool:
    if annotation is str:
        return True
    args = getattr(annotation, "__args__", ())
    return getattr(annotation, "__origin__", None) is Literal and all(
        isinstance(a, str) for a in args
    )


def load(paths: list[Path]) -> Config:
    """Defaults, then each config file in order (later wins), then the environment."""
    flat: dict[str, Any] = {}
    for p in paths:
        flat.update(read_overrides(p))
    flat.update(_env_overrides())
    return validate(flat)


def validate(flat: dict[str, Any]) -> Config:
    try:
        return Config.model_validate(_nest(flat))
    except ValidationError as exc:
        from rose.redact import redact_obj  # an error message is no place for a secret

        err = exc.errors()[0]
        key = ".".join(str(p) for p in err["loc"])
        raise ConfigError(key, redact_obj(flat.get(key)), err["msg"]) from None


def get(cfg: Config, key: str) -> Any:
    if key not in keys():
        raise ConfigError(key, None, "unknown key; `rose config` lists them")
    obj: Any = cfg
    for part in key.split("."):
        obj = getattr(obj, part)
    return obj


def set_override(path: Path, key: str, raw: str) -> Any:
    """Validate `key=raw`, write it to the config file at `path` keeping other overrides, and
    return the value as stored: redacted like every write, and validated redacted, so a
    secret neither leaves a file that no longer loads nor is echoed back."""
    import yaml

    from rose.atomic import write_text
    from rose.redact import redact, redact_obj

    if key not in keys():
        raise ConfigError(key, redact(raw), "unknown key; `rose config` lists them")
    flat = read_overrides(path)
    flat[key] = redact_obj(parse_value(key, raw))
    cfg = validate(flat)
    value = get(cfg, key)
    flat[key] = value
    write_text(path, yaml.safe_dump(_nest(flat), sort_keys=True, allow_unicode=True))
    return value

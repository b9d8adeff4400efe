"""Settings: defaults here, overrides in `.rose/config.yaml`, and `ROSE_SECTION_KEY` in the env.

Every key is `section.key` (or a bare top-level key such as `agent`); its
environment variable is `ROSE_` + the key upper-cased with dots as underscores,
e.g. `recall.max_pack_tokens` ↔ `ROSE_RECALL_MAX_PACK_TOKENS`. The reference in
docs/configuration.md is generated from the field descriptions in `rose.config_schema`.

A setting whose behaviour is not built yet keeps its name, but its Field carries
`json_schema_extra=NOT_BUILT`: `rose config` and the docs then say "(not built yet)".
Remove the mark when code starts reading the setting (tests/test_settings_are_read.py
fails until you do, and fails on an unmarked setting that nothing reads).

Reading settings never switches memory off: an unknown key (a newer ROSE's, or a typo), an
invalid value or a file that is not YAML is ignored with a `ConfigProblem` naming where it
came from (file and line, or environment variable), and the key keeps the value the layers
below give it, in the end its default. `rose doctor` and `rose status` show the problems,
and `rose config KEY VALUE` writes a file whatever else it holds.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError
from pydantic.fields import FieldInfo

from rose.config_schema import NOT_BUILT as NOT_BUILT
from rose.config_schema import NOT_BUILT_LABEL as NOT_BUILT_LABEL
from rose.config_schema import Config as Config
from rose.config_schema import Reflect as Reflect
from rose.config_schema import Section
from rose.errors import ConfigError, RoseError


def fields() -> dict[str, FieldInfo]:
    """Every settable key's pydantic field, in declaration order."""
    out: dict[str, FieldInfo] = {}
    for name, field in Config.model_fields.items():
        ann = field.annotation
        if isinstance(ann, type) and issubclass(ann, Section):
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


def sections() -> dict[str, list[str]]:
    """Each section (`recall`, `graph` ...) with its keys, in declaration order."""
    out: dict[str, list[str]] = {}
    for key in fields():
        if "." in key:
            out.setdefault(key.split(".", 1)[0], []).append(key)
    return out


def choices(key: str) -> tuple[str, ...]:
    """The words a setting with a fixed set of values accepts (empty for any other)."""
    field = fields().get(key)
    if field is None:
        raise UnknownKey(key)
    args = getattr(field.annotation, "__args__", ())
    return tuple(a for a in args if isinstance(a, str))


class UnknownKey(ConfigError):
    """A key that is no setting: the message says which it might have meant."""

    def __init__(self, key: str):
        self.key, self.value = key, None
        RoseError.__init__(self, f"config {key}: unknown key{unknown_hint(key)}")


def unknown_hint(key: str) -> str:
    """What an unknown key might have meant, for its error or warning."""
    import difflib

    secs = sections()
    if key in secs:
        return f" ({key} is a section; its keys: {', '.join(secs[key])})"
    near = difflib.get_close_matches(key, list(fields()), n=1, cutoff=0.8)
    lists = "`rose config` lists every key"
    return f"; did you mean {near[0]}? ({lists})" if near else f"; {lists}"


# -- reading: a bad setting is a warning, never the end of memory -------------------------------


@dataclass(frozen=True)
class ConfigProblem:
    """A setting that was ignored: where it came from, and what is used instead."""

    source: str  # "path:line", "path", or "environment variable ROSE_..."
    key: str  # "" when the whole file was ignored
    message: str


def _problem(source: str, key: str, why: str) -> ConfigProblem:
    return ConfigProblem(source, key, f"{source}: {why}")


def _source(path: Path, line: int | None) -> str:
    return f"{path}:{line}" if line else str(path)


def _read_file(path: Path) -> tuple[list[tuple[str, Any, str]], list[ConfigProblem]]:
    """(key, value, source) for each setting a config.yaml holds, in file order, and what in
    it was ignored: the whole file when it is not a readable mapping, else each unknown key."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return [], []
    except (OSError, UnicodeDecodeError) as exc:
        return [], [_problem(str(path), "", f"cannot be read ({exc}); its settings are ignored")]
    bad = unreadable_text(text)
    if bad:
        why = f"{bad[1]}; all its settings are ignored (`rose config KEY VALUE` rewrites it)"
        return [], [_problem(_source(path, bad[0]), "", why)]
    data, lines = _parse(text)
    found, problems = [], []
    for key, value in _flatten(data):
        where = _source(path, lines.get(key))
        if key in fields():
            found.append((key, value, where))
        else:
            why = f"unknown key {key!r} (a newer ROSE's, or a typo?), ignored{unknown_hint(key)}"
            problems.append(_problem(where, key, why))
    return found, problems


def _parse(text: str) -> tuple[dict, dict[str, int]]:
    """The mapping a config.yaml holds, and the line each `key` / `section.key` is on."""
    import yaml

    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else {}
    finally:
        loader.dispose()
    lines: dict[str, int] = {}
    for k, v in node.value if isinstance(node, yaml.MappingNode) else ():
        lines[str(k.value)] = k.start_mark.line + 1
        for sk, _ in v.value if isinstance(v, yaml.MappingNode) else ():
            lines[f"{k.value}.{sk.value}"] = sk.start_mark.line + 1
    return data or {}, lines


def unreadable_text(text: str) -> tuple[int | None, str] | None:
    """(line, why) when a config.yaml's text is not a YAML mapping of settings, else None."""
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        what = " ".join(str(getattr(exc, "problem", "") or exc).split())
        line = mark.line + 1 if mark is not None else None
        return line, f"not valid YAML ({what})"
    if data is not None and not isinstance(data, dict):
        return None, "not a mapping of settings (`section:`, then `  key: value` under it)"
    return None


def _flatten(data: dict) -> list[tuple[str, Any]]:
    flat: list[tuple[str, Any]] = []
    for k, v in data.items():
        if isinstance(v, dict) and str(k) in sections():
            flat += [(f"{k}.{sk}", sv) for sk, sv in v.items()]
        else:
            flat.append((str(k), v))
    return flat


def _env_overrides() -> list[tuple[str, Any, str]]:
    out = []
    for key in keys():
        raw = os.environ.get(env_name(key))
        if raw is not None:
            out.append((key, parse_value(key, raw), f"environment variable {env_name(key)}"))
    return out


def parse_value(key: str, raw: str) -> Any:
    """A value typed on the command line or in the environment, as the setting's type wants.

    Text settings take the text as typed: YAML would read `off` or `no` as a boolean and
    `3` as a number, and `rose config reflect.mode off` must mean the word. Text that is
    not YAML at all stays text, for validation to refuse with the setting's own reason.
    """
    import yaml

    field = fields().get(key)
    if field is not None and _is_text(field.annotation):
        return raw.strip()
    if not raw.strip():
        return ""
    try:
        return yaml.safe_load(raw)
    except yaml.YAMLError:
        return raw.strip()


def _is_text(annotation: Any) -> bool:
    if annotation is str:
        return True
    args = getattr(annotation, "__args__", ())
    return getattr(annotation, "__origin__", None) is Literal and all(
        isinstance(a, str) for a in args
    )


def load(paths: list[Path]) -> Config:
    """Defaults, then each config file in order (later wins), then the environment.

    Never raises for what the files or the environment hold: an unknown key, an invalid
    value, or a file that is not YAML is ignored (a value falls back to the one the layers
    below it give, in the end the default), and recorded in the result's `problems`,
    naming where it came from, for `rose doctor` and `rose status` to show.
    """
    found: list[tuple[str, Any, str]] = []
    problems: list[ConfigProblem] = []
    for p in paths:
        settings, bad = _read_file(p)
        found += settings
        problems += bad
    found += _env_overrides()
    chosen: dict[str, Any] = {}
    origin: dict[str, str] = {}
    rejected: list[tuple[str, Any, str, str]] = []
    for key, value, where in found:  # lowest layer first: a later valid value wins
        why = _invalid(key, value)
        if why:
            rejected.append((key, value, where, why))
        else:
            chosen[key], origin[key] = value, where
    cfg = Config.model_validate(_nest(chosen))
    if rejected:
        from rose.redaction.redact import redact_obj  # a warning is no place for a secret

        for key, value, where, why in rejected:
            used = f"from {origin[key]}" if key in origin else "the default"
            problems.append(
                _problem(
                    where,
                    key,
                    f"{key}={redact_obj(value)!r} is not valid ({why}); "
                    f"using {get(cfg, key)!r} ({used})",
                )
            )
    cfg._problems = problems
    return cfg


def _invalid(key: str, value: Any) -> str:
    """Why `value` is no valid `key`, or "" when it is."""
    try:
        Config.model_validate(_nest({key: value}))
    except ValidationError as exc:
        return str(exc.errors()[0]["msg"])
    return ""


def _nest(flat: dict[str, Any]) -> dict[str, Any]:
    nested: dict[str, Any] = {}
    for key, value in flat.items():
        if "." in key:
            sec, sub = key.split(".", 1)
            nested.setdefault(sec, {})[sub] = value
        else:
            nested[key] = value
    return nested


def validate(flat: dict[str, Any]) -> Config:
    """A Config from `key: value` pairs; a ConfigError naming the first invalid key."""
    try:
        return Config.model_validate(_nest(flat))
    except ValidationError as exc:
        from rose.redaction.redact import redact_obj  # an error message is no place for a secret

        err = exc.errors()[0]
        key = ".".join(str(p) for p in err["loc"])
        raise ConfigError(key, redact_obj(flat.get(key)), err["msg"]) from None


def get(cfg: Config, key: str) -> Any:
    if key not in keys():
        raise UnknownKey(key)
    obj: Any = cfg
    for part in key.split("."):
        obj = getattr(obj, part)
    return obj


# -- writing: `rose config KEY VALUE` repairs a file whatever else it holds -----------------------


def broken_copy(path: Path) -> Path:
    """Where `set_override` keeps the text of a config file it could not read."""
    return path.with_name(path.name + ".broken")


def unreadable(path: Path) -> str | None:
    """Why the config file at `path` cannot be read as settings, or None (also when absent)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(str(path), "", f"cannot be read ({exc})") from None
    bad = unreadable_text(text)
    return None if bad is None else (f"line {bad[0]}: " if bad[0] else "") + bad[1]


def _raw(path: Path) -> dict:
    """The mapping the config file holds as it is, unknown and invalid entries included; empty
    when there is none, or when it is unreadable (its text is then kept in broken_copy)."""
    import yaml

    from rose.disk.atomic import write_text

    if unreadable(path) is not None:
        write_text(broken_copy(path), path.read_text(encoding="utf-8", errors="replace"))
        return {}
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8", errors="replace")) or {}
    except FileNotFoundError:
        return {}


def _write(path: Path, data: dict) -> None:
    import yaml

    from rose.disk.atomic import write_text

    write_text(path, yaml.safe_dump(data, sort_keys=True, allow_unicode=True) if data else "")


def set_override(path: Path, key: str, raw: str) -> Any:
    """Validate `key=raw`, write it to the config file at `path` keeping every other entry as
    it is (unknown keys, perhaps a newer ROSE's, and invalid values too), and return the value
    as stored: redacted like every write, and validated redacted, so a secret neither leaves a
    file that no longer loads nor is echoed back. A file that is not YAML is replaced, its
    text kept in `broken_copy(path)`."""
    from rose.redaction.redact import redact_obj

    if key not in keys():
        raise UnknownKey(key)
    value = get(validate({key: redact_obj(parse_value(key, raw))}), key)
    data = _raw(path)
    if "." in key:
        sec, sub = key.split(".", 1)
        if not isinstance(data.get(sec), dict):
            data[sec] = {}
        data[sec][sub] = value
    else:
        data[key] = value
    _write(path, data)
    return value


def unset_override(path: Path, key: str) -> bool:
    """Remove `key` (known or not) from the config file at `path`; False when it was not set."""
    data = _raw(path) if path.exists() else {}
    sec, _, sub = key.partition(".")
    if sub and isinstance(data.get(sec), dict) and sub in data[sec]:
        del data[sec][sub]
        if not data[sec]:
            del data[sec]
    elif key in data:
        del data[key]
    else:
        return False
    _write(path, data)
    return True

"""Check a JSON answer against the JSON schema it was asked to fit, and dig it out of prose.

The validator covers what pydantic's ``model_json_schema()`` emits (types, properties,
required, enum/const, items/prefixItems, anyOf/oneOf/allOf, ``$defs``/``$ref``,
additionalProperties, and the numeric, length and size bounds of ``Field``). Keywords it
does not know are ignored, as JSON Schema prescribes. Standard library only: this runs
in every model call and must not pull in a schema package.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from rose.errors import AnswerInvalid

_TYPES: dict[str, Any] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    # JSON has one number type: 2.0 is an integer as far as a schema is concerned.
    "integer": lambda v: (
        (isinstance(v, int) and not isinstance(v, bool))
        or (isinstance(v, float) and v.is_integer())
    ),
}

_FENCE = re.compile(r"```(?:json|JSON)?[ \t]*\n(.*?)```", re.DOTALL)


class _Mismatch(Exception):
    def __init__(self, path: str, why: str):
        super().__init__(f"at {path}: {why}")


def schema_error(instance: Any, schema: dict[str, Any]) -> str | None:
    """The first way `instance` fails `schema`, as ``at $.path: why``; None when it fits."""
    try:
        _check(instance, schema, schema, "$")
    except _Mismatch as exc:
        return str(exc)
    return None


def check_answer(call: str, data: Any, schema: dict[str, Any], raw: str) -> dict[str, Any]:
    """Return `data` when it is an object fitting `schema`, else raise AnswerInvalid."""
    if not isinstance(data, dict):
        raise AnswerInvalid(call, raw, f"expected a JSON object, got {_kind(data)}")
    why = schema_error(data, schema)
    if why is not None:
        raise AnswerInvalid(call, raw, why)
    return data


def parse_answer(call: str, text: str, schema: dict[str, Any]) -> dict[str, Any]:
    """Recover the JSON object from a model's text answer and check it against `schema`."""
    data = extract_object(text)
    if data is None:
        raise AnswerInvalid(call, text, "no JSON object found in the answer")
    return check_answer(call, data, schema, text)


def extract_object(text: str) -> dict[str, Any] | None:
    """Find the JSON object in `text`: the whole text, a fenced json block, or the first {...}.

    A fenced block wins over a bare brace so that prose mentioning ``{x}`` before the
    answer does not shadow it.
    """
    stripped = text.strip()
    candidates = [stripped, *(m.group(1).strip() for m in _FENCE.finditer(text))]
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            value, _ = decoder.raw_decode(text, start)
        except ValueError:
            value = None
        if isinstance(value, dict):
            return value
        start = text.find("{", start + 1)
    return None


def _kind(value: Any) -> str:
    for name in ("null", "boolean", "integer", "number", "string", "array", "object"):
        if _TYPES[name](value):
            return name
    return type(value).__name__


def _resolve(ref: str, root: dict[str, Any], path: str) -> dict[str, Any]:
    if not ref.startswith("#"):
        raise _Mismatch(path, f"cannot follow the non-local $ref {ref!r}")
    node: Any = root
    for part in ref[1:].split("/"):
        if not part:
            continue
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            raise _Mismatch(path, f"the schema's $ref {ref!r} points nowhere")
        node = node[part]
    if not isinstance(node, dict):
        raise _Mismatch(path, f"the schema's $ref {ref!r} is not a schema")
    return node


def _check(value: Any, schema: Any, root: dict[str, Any], path: str) -> None:
    if schema is True or schema == {}:
        return
    if schema is False:
        raise _Mismatch(path, "no value is allowed here")
    if "$ref" in schema:
        _check(value, _resolve(schema["$ref"], root, path), root, path)
    _check_type(value, schema, path)
    _check_choices(value, schema, path)
    _check_combinators(value, schema, root, path)
    if isinstance(value, dict):
        _check_object(value, schema, root, path)
    elif isinstance(value, list):
        _check_array(value, schema, root, path)
    elif isinstance(value, str):
        _check_string(value, schema, path)
    elif _TYPES["number"](value):
        _check_number(value, schema, path)


def _check_type(value: Any, schema: dict[str, Any], path: str) -> None:
    expected = schema.get("type")
    if expected is None:
        return
    names = [expected] if isinstance(expected, str) else list(expected)
    if not any(_TYPES.get(name, lambda _v: True)(value) for name in names):
        raise _Mismatch(path, f"expected {' or '.join(names)}, got {_kind(value)}")


def _check_choices(value: Any, schema: dict[str, Any], path: str) -> None:
    if "const" in schema and not _same(value, schema["const"]):
        raise _Mismatch(path, f"expected {schema['const']!r}, got {value!r}")
    if "enum" in schema and not any(_same(value, option) for option in schema["enum"]):
        raise _Mismatch(path, f"{value!r} is not one of {schema['enum']!r}")


def _same(a: Any, b: Any) -> bool:
    # True == 1 in Python but not in JSON.
    return a == b and isinstance(a, bool) == isinstance(b, bool)


def _check_combinators(value: Any, schema: dict[str, Any], root: dict[str, Any], path: str) -> None:
    for sub in schema.get("allOf", []):
        _check(value, sub, root, path)
    for keyword in ("anyOf", "oneOf"):
        options = schema.get(keyword)
        if options is None:
            continue
        reasons = []
        for sub in options:
            try:
                _check(value, sub, root, path)
            except _Mismatch as exc:
                reasons.append(str(exc))
            else:
                break
        else:
            raise _Mismatch(path, f"fits none of the {len(options)} allowed shapes: {reasons}")


def _check_object(value: dict[str, Any], schema: dict[str, Any], root: dict[str, Any], path: str):
    for key in schema.get("required", []):
        if key not in value:
            raise _Mismatch(path, f"missing required field {key!r}")
    properties = schema.get("properties", {})
    extra = schema.get("additionalProperties", True)
    for key, item in value.items():
        where = f"{path}.{key}"
        if key in properties:
            _check(item, properties[key], root, where)
        elif extra is False:
            raise _Mismatch(path, f"unexpected field {key!r} (allowed: {sorted(properties)})")
        elif isinstance(extra, dict):
            _check(item, extra, root, where)
    _check_size(len(value), schema, "minProperties", "maxProperties", "fields", path)


def _check_array(value: list[Any], schema: dict[str, Any], root: dict[str, Any], path: str):
    prefix = schema.get("prefixItems", [])
    for index, sub in enumerate(prefix[: len(value)]):
        _check(value[index], sub, root, f"{path}[{index}]")
    items = schema.get("items")
    if isinstance(items, list):  # the pre-2020 spelling of prefixItems
        for index, sub in enumerate(items[: len(value)]):
            _check(value[index], sub, root, f"{path}[{index}]")
    elif items is not None:
        for index in range(len(prefix), len(value)):
            _check(value[index], items, root, f"{path}[{index}]")
    _check_size(len(value), schema, "minItems", "maxItems", "items", path)
    if schema.get("uniqueItems"):
        seen = [json.dumps(item, sort_keys=True) for item in value]
        if len(set(seen)) != len(seen):
            raise _Mismatch(path, "items must be unique")


def _check_string(value: str, schema: dict[str, Any], path: str) -> None:
    _check_size(len(value), schema, "minLength", "maxLength", "characters", path)
    pattern = schema.get("pattern")
    if pattern is not None and re.search(pattern, value) is None:
        raise _Mismatch(path, f"{value[:60]!r} does not match the pattern {pattern!r}")


def _check_number(value: float, schema: dict[str, Any], path: str) -> None:
    bounds = (
        ("minimum", lambda v, b: v >= b, "below the minimum"),
        ("maximum", lambda v, b: v <= b, "above the maximum"),
        ("exclusiveMinimum", lambda v, b: v > b, "not above the exclusive minimum"),
        ("exclusiveMaximum", lambda v, b: v < b, "not below the exclusive maximum"),
    )
    for keyword, ok, words in bounds:
        bound = schema.get(keyword)
        # Draft-4 booleans (exclusiveMinimum: true) are not bounds of their own.
        if isinstance(bound, (int, float)) and not isinstance(bound, bool) and not ok(value, bound):
            raise _Mismatch(path, f"{value!r} is {words} {bound!r}")
    step = schema.get("multipleOf")
    if step and not math.isclose(value / step, round(value / step), abs_tol=1e-9):
        raise _Mismatch(path, f"{value!r} is not a multiple of {step!r}")


def _check_size(size: int, schema: dict[str, Any], low: str, high: str, unit: str, path: str):
    if low in schema and size < schema[low]:
        raise _Mismatch(path, f"has {size} {unit}, fewer than the minimum {schema[low]}")
    if high in schema and size > schema[high]:
        raise _Mismatch(path, f"has {size} {unit}, more than the maximum {schema[high]}")

"""The stdlib validator that checks every model answer against its pydantic-made schema.

Locks in: whatever a pydantic model dumps is accepted by its own schema (so a right
answer is never refused), each kind of misfit is refused with the path that failed (so a
wrong answer is never a pass), and the JSON object is recovered from a model's prose.
"""

from __future__ import annotations

from typing import Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, Field

from rose.errors import AnswerInvalid
from rose.model._schema import check_answer, extract_object, parse_answer, schema_error


class Claim(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1)
    weight: float = Field(ge=0, le=1)


class Verdict(BaseModel):
    verdict: Literal["keep", "drop"]
    kind: Literal["assess"] = "assess"
    claims: list[Claim] = Field(default_factory=list, max_length=3)
    parent: Claim | None = None
    counts: dict[str, int] = Field(default_factory=dict)
    span: tuple[int, str] = (0, "")
    rank: int = Field(default=1, gt=0)


SCHEMA = Verdict.model_json_schema()

claims = st.builds(
    Claim,
    text=st.text(min_size=1, max_size=20),
    weight=st.floats(min_value=0, max_value=1, allow_nan=False),
)
verdicts = st.builds(
    Verdict,
    verdict=st.sampled_from(["keep", "drop"]),
    claims=st.lists(claims, max_size=3),
    parent=st.none() | claims,
    counts=st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
    span=st.tuples(st.integers(), st.text(max_size=5)),
    rank=st.integers(min_value=1),
)


@given(verdicts)
def test_every_dump_of_the_model_fits_its_schema(verdict):
    assert schema_error(verdict.model_dump(mode="json"), SCHEMA) is None


@pytest.mark.parametrize(
    ("patch", "where"),
    [
        ({"verdict": "maybe"}, "$.verdict"),
        ({"kind": "compress"}, "$.kind"),
        ({"claims": [{"text": "x", "weight": 2}]}, "$.claims[0].weight"),
        ({"claims": [{"text": "", "weight": 0.5}]}, "$.claims[0].text"),
        ({"claims": [{"text": "x", "weight": 0.5, "why": "?"}]}, "$.claims[0]"),
        ({"claims": [{"text": "x", "weight": 0.1}] * 4}, "$.claims"),
        ({"parent": "a claim"}, "$.parent"),
        ({"counts": {"a": 1.5}}, "$.counts.a"),
        ({"counts": {"a": True}}, "$.counts.a"),
        ({"span": [1, 2]}, "$.span[1]"),
        ({"span": [1, "a", 3]}, "$.span"),
        ({"rank": 0}, "$.rank"),
        ({"rank": "1"}, "$.rank"),
    ],
)
def test_each_misfit_is_refused_at_its_path(patch, where):
    answer = {"verdict": "keep", **patch}
    why = schema_error(answer, SCHEMA)
    assert why is not None
    assert why.startswith(f"at {where}:"), why


def test_missing_required_field_is_named():
    assert "missing required field 'verdict'" in schema_error({}, SCHEMA)


def test_integral_float_counts_as_integer_but_bool_does_not():
    assert schema_error({"verdict": "keep", "rank": 2.0}, SCHEMA) is None
    assert schema_error({"verdict": "keep", "rank": True}, SCHEMA) is not None
    assert schema_error(1, {"const": True}) is not None


def test_refs_to_defs_and_root_are_followed():
    tree = {
        "type": "object",
        "properties": {"children": {"type": "array", "items": {"$ref": "#"}}},
        "additionalProperties": False,
    }
    assert schema_error({"children": [{"children": []}]}, tree) is None
    assert schema_error({"children": [{"leaf": 1}]}, tree).startswith("at $.children[0]:")
    assert "points nowhere" in schema_error(1, {"$ref": "#/$defs/Missing"})


def test_one_of_all_of_and_type_lists():
    schema = {"oneOf": [{"type": "string"}, {"type": ["integer", "null"]}]}
    assert schema_error(None, schema) is None
    assert "fits none" in schema_error(1.5, schema)
    assert schema_error(3, {"allOf": [{"minimum": 1}, {"maximum": 2}]}) is not None
    assert schema_error("abc", {"pattern": "^a"}) is None
    assert schema_error("xbc", {"pattern": "^a"}) is not None
    assert schema_error([1, 1], {"uniqueItems": True}) is not None
    assert schema_error(7, {"multipleOf": 2}) is not None


def test_check_answer_raises_answer_invalid_with_call_and_excerpt():
    with pytest.raises(AnswerInvalid) as caught:
        check_answer("assess", {"verdict": 3}, SCHEMA, '{"verdict": 3}')
    assert caught.value.call == "assess"
    assert caught.value.excerpt == '{"verdict": 3}'
    assert "$.verdict" in str(caught.value)
    with pytest.raises(AnswerInvalid, match="expected a JSON object"):
        check_answer("assess", ["keep"], SCHEMA, '["keep"]')


@pytest.mark.parametrize(
    "text",
    [
        '{"verdict": "keep"}',
        'Here you go:\n```json\n{"verdict": "keep"}\n```\nDone.',
        'The set {a, b} is small, so:\n```\n{"verdict": "keep"}\n```',
        'My answer is {"verdict": "keep"} as asked.',
        'Note the brace in "{": {"verdict": "keep", "claims": [{"text": "a}b", "weight": 1}]}',
    ],
)
def test_the_object_is_recovered_from_prose(text):
    assert extract_object(text)["verdict"] == "keep"
    assert parse_answer("assess", text, SCHEMA)["verdict"] == "keep"


def test_text_without_an_object_is_invalid():
    assert extract_object("keep it, I think [1, 2]") is None
    with pytest.raises(AnswerInvalid, match="no JSON object"):
        parse_answer("assess", "keep it", SCHEMA)

"""Every semantic call renders from its context model, and only from it.

Locks in: a template whose variables drift from its context model's fields (a renamed
field, a forgotten one) fails here rather than at a user's prompt; every call has exactly
one template and every template a call; candidates reach the model as one line each (id,
title, gist), never as bodies; answer schemas are closed objects a backend can enforce.
"""

from __future__ import annotations

import jinja2
import pytest
from jinja2 import meta

from rose import prompt_files
from rose.judge import calls as judge

LESSON = {
    "id": "n_7f2a91",
    "title": "Retrying flaky services",
    "gist": "Retry idempotent calls.",
    "body": "Retry only idempotent calls.\nBackoff is 100ms, 400ms, 1600ms.",
}
OTHER = {
    "id": "n_c41b00",
    "title": "S3 quirks",
    "gist": "S3 needs body parsing.",
    "body": "A 200 from S3 can still carry an error in the body.",
}
CANDS = [
    {"id": "n_7f2a91", "title": "Retrying flaky services", "gist": "Retry idempotent calls."},
    {"id": "n_c41b00", "title": "S3 quirks", "gist": "S3 needs\nbody parsing."},
]
PROMPT = "add retry to the http client"
DIGEST = "User: add retry\nAgent: added exponential backoff; tests pass"

EXAMPLES = {
    "relevance": {
        "prompt": PROMPT,
        "candidates": CANDS,
        "found": [OTHER],
        "rules": [{"id": "r_s3", "text": "when the task touches retries: read the S3 lessons"}],
    },
    "family_gist": {"family": "retries", "lessons": CANDS},
    "related": {"lesson": LESSON, "candidates": CANDS[1:]},
    "reconcile": {"lesson": LESSON, "existing": [OTHER]},
    "scope": {"lesson": LESSON, "project": "acme-shop"},
    "assess": {"prompt": PROMPT, "digest": DIGEST, "served": [LESSON, OTHER]},
    "reflect": {"prompt": PROMPT, "digest": DIGEST, "known": CANDS},
    "rank_repairs": {
        "prompt": PROMPT,
        "failure": "treated HTTP 200 as success",
        "claims": [{"id": "c1", "claim": "Parse the body, not the status code", "kind": "caveat"}],
    },
    "gist": {"lesson": OTHER, "task": PROMPT, "keep_title": True},
    "rule_conflict": {
        "new": {"id": "r_new", "text": "when the task touches retries: skip the S3 lessons"},
        "existing": [{"id": "r_s3", "text": "when the task touches retries: read the S3 lessons"}],
    },
    "rule_form": {"when": "the task runs the integration tests", "then": "read the testing ones"},
    "compress": {
        "lesson": LESSON,
        "evidence": ["Retry only idempotent calls."],
        "preserve": ["Backoff is 100ms"],
        "target_ratio": 0.6,
    },
    "replay_probe": {"prompt": PROMPT, "lesson": LESSON},
    "replay_judge": {"prompt": PROMPT, "accepted": "added backoff", "approach": "add backoff"},
    "counterfactual_probe": {"prompt": PROMPT, "lessons": [LESSON, OTHER]},
    "counterfactual": {
        "prompt": PROMPT,
        "lesson": LESSON,
        "with_lesson": "add backoff of 100ms, 400ms, 1600ms",
        "without_lesson": "add a retry loop",
    },
    "split": {
        "name": "CLAUDE.md",
        "text": "## Retries\n\nRetry only idempotent calls: backoff 100ms, 400ms, 1600ms.",
        "part": 2,
        "parts": 3,
    },
    "merge": {
        "lessons": [LESSON, OTHER],
        "budget_tokens": 30,
        "evidence": ["Retry only idempotent calls."],
        "preserve": ["A 200 from S3 can carry an error"],
    },
}


def test_every_call_has_an_example_and_a_template_and_nothing_else():
    files = {
        p.name[: -len(".j2")]
        for p in prompt_files.prompts_dir().iterdir()
        if p.name.endswith(".j2")
    }
    assert files == set(judge.CALLS) == set(EXAMPLES)


@pytest.mark.parametrize("name", sorted(judge.CALLS))
def test_template_variables_are_the_context_fields(name):
    parsed = judge.environment().parse(judge.template_source(name))
    assert meta.find_undeclared_variables(parsed) == set(judge.CALLS[name].context.model_fields)


@pytest.mark.parametrize("name", sorted(judge.CALLS))
def test_renders_from_example(name):
    text = judge.render(name, EXAMPLES[name])
    assert text.strip()
    assert "None" not in text  # an optional value leaking as Python's repr
    # Every string in the example that a template shows is shown verbatim.
    ctx = judge.coerce_context(name, EXAMPLES[name])
    for field in ("prompt", "digest", "failure", "accepted", "approach", "project"):
        if field in type(ctx).model_fields:
            assert getattr(ctx, field) in text


@pytest.mark.parametrize("name", ["relevance", "related", "reflect"])
def test_candidates_are_one_line_each_never_the_body(name):
    context = dict(EXAMPLES[name])
    key = "known" if name == "reflect" else "candidates"
    context[key] = CANDS
    text = judge.render(name, context)
    for cand in CANDS:
        lines = [line for line in text.splitlines() if f"[{cand['id']}]" in line]
        assert len(lines) == 1
        assert cand["title"] in lines[0]
        assert cand["gist"].replace("\n", " ") in lines[0]
    # A candidate cannot carry its body into the prompt: the model refuses one.
    context[key] = [{**CANDS[0], "body": "the whole lesson"}]
    with pytest.raises(ValueError, match="body"):
        judge.render(name, context)


def test_unknown_variable_is_an_error_not_an_empty_string():
    with pytest.raises(jinja2.UndefinedError):
        judge.render("scope", EXAMPLES["scope"], source="{{ lesson.title }} {{ nonexistent }}")


def test_context_is_validated():
    with pytest.raises(ValueError):
        judge.render("scope", {"lesson": LESSON})  # project missing


def test_unknown_call_names_the_calls():
    with pytest.raises(judge.RoseError, match="relevance"):
        judge.render("nope", {})


@pytest.mark.parametrize("name", sorted(judge.CALLS))
def test_answer_schema_is_a_closed_object(name):
    schema = judge.schema_of(name)
    assert schema["type"] == "object"
    assert schema.get("additionalProperties") is False
    assert schema["required"]

"""`rose digest PATH`: the digest a reflector would read, from the command line.

Locks in: the plain output is a header (host, version, prompts, tool calls, failed, cited)
and then the digest's lines; `--json` prints exactly the digest's keys; `--budget` cuts
and says how much; a missing file or one that is not a transcript is one `rose: ...`
line and exit 1, never a traceback; `--help` says it shows what a background reflector
would see.
"""

from __future__ import annotations

import json

from typer.testing import CliRunner

from rose.cli import app
from tests._transcripts import fixture


def _cli(*args: str):
    return CliRunner().invoke(app, list(args), prog_name="rose")


def test_plain_output_is_a_header_then_the_digest():
    res = _cli("digest", str(fixture("codex-0.171-hand")))
    assert res.exit_code == 0, res.output
    head, *lines = res.output.splitlines()
    assert head == "codex 0.171.0: 2 prompts, 4 tool calls, 2 failed, cited: n_1a2b3c4d"
    assert lines[0] == "User: fix the failing build; the CI key is [REDACTED:anthropic-key]"
    assert lines[-1] == "Tool: shell make test"


def test_json_has_the_digest_and_its_counts():
    res = _cli("digest", str(fixture("claude-code-2.1.38-short")), "--json")
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert set(data) >= {
        "host",
        "version",
        "user_prompts",
        "tool_calls",
        "failed_tool_calls",
        "cited",
        "tokens",
        "digest",
    }
    assert (data["host"], data["version"], data["tool_calls"], data["failed_tool_calls"]) == (
        "claude-code",
        "2.1.38",
        2,
        2,
    )
    assert data["user_prompts"] == ["mix phx.server doesnt seem to start"]
    assert data["digest"].startswith("User: mix phx.server doesnt seem to start\n")


def test_a_budget_cuts_and_the_header_says_so():
    res = _cli("digest", str(fixture("codex-0.128-desktop-excerpt")), "--budget", "200")
    assert res.exit_code == 0, res.output
    assert "steps left out" in res.output.splitlines()[0]
    assert "[… " in res.output


def test_errors_are_one_line_and_exit_1(tmp_path):
    missing = tmp_path / "gone.jsonl"
    res = _cli("digest", str(missing))
    assert res.exit_code == 1
    assert res.output.startswith(f"rose: transcript {missing}: no such file")
    assert len(res.output.strip().splitlines()) == 1 and "Traceback" not in res.output
    other = tmp_path / "other.jsonl"
    other.write_text('{"a": 1}\n')
    res = _cli("digest", str(other))
    assert res.exit_code == 1 and "not a Claude Code or Codex transcript" in res.output


def test_help_says_what_it_shows():
    res = _cli("digest", "--help")
    assert res.exit_code == 0
    assert "background reflector" in " ".join(res.output.split())

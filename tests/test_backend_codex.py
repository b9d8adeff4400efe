"""The codex backend against a fake `codex` executable first on PATH.

Locks in: `codex exec` gets the schema file, the answer file, a read-only sandbox, the
prompt on stdin and ROSE_CHILD=1; usage is summed from the --json events; the scratch
files are gone after every outcome (answer, bad answer, failure, timeout); and each
failure raises its own error.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from rose.errors import AnswerInvalid, BackendFailed, BackendTimeout, BackendUnavailable
from rose.model.base import Backend
from rose.model.codex import CodexBackend

FAKES = Path(__file__).parent / "fakes"
SCHEMA = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": ["yes", "no"]},
        "reasons": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["verdict", "reasons"],
    "additionalProperties": False,
}
ANSWER = {"verdict": "yes", "reasons": ["same family", "same failure"]}


class Fake:
    def __init__(self, record: Path):
        self.record = record

    def calls(self) -> list[dict]:
        if not self.record.exists():
            return []
        return [json.loads(line) for line in self.record.read_text().splitlines()]

    def only_call(self) -> dict:
        (call,) = self.calls()
        return call

    def scratch_paths(self) -> list[Path]:
        argv = self.only_call()["argv"]
        files = [
            argv[argv.index(flag) + 1] for flag in ("--output-schema", "--output-last-message")
        ]
        return [Path(self.only_call()["cwd"]), *map(Path, files)]


def install_fake(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Fake:
    """Copy a fake CLI onto a fresh PATH dir, run by this interpreter, and allow spawning."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    body = (FAKES / name).read_text().split("\n", 1)[1]
    exe = bin_dir / name
    exe.write_text(f"#!{sys.executable}\n{body}")
    exe.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("ROSE_ALLOW_MODEL_SPAWN", "1")
    monkeypatch.setenv("FAKE_RECORD", str(tmp_path / "record.jsonl"))
    monkeypatch.setenv("FAKE_ANSWER", json.dumps(ANSWER))
    monkeypatch.setenv("FAKE_MODE", "good")
    return Fake(tmp_path / "record.jsonl")


@pytest.fixture
def fake(tmp_path, monkeypatch) -> Fake:
    return install_fake("codex", tmp_path, monkeypatch)


def assert_scratch_removed(fake: Fake) -> None:
    for path in fake.scratch_paths():
        assert not path.exists(), f"{path} was left behind"


def test_good_answer_is_read_from_the_last_message_file(fake):
    answer = CodexBackend().complete("related", "Are these related?", SCHEMA, timeout_s=10)
    assert answer.data == ANSWER
    assert json.loads(answer.raw) == ANSWER
    assert answer.usage.input_tokens == 1200
    assert answer.usage.cached_tokens == 1000
    assert answer.usage.output_tokens == 40
    assert answer.usage.cost_usd == 0.0
    assert answer.usage.wall_s > 0
    assert_scratch_removed(fake)


def test_exec_gets_schema_sandbox_stdin_and_rose_child(fake):
    CodexBackend().complete("related", "Are these related?", SCHEMA, timeout_s=10)
    call = fake.only_call()
    argv = call["argv"]
    assert argv[0] == "exec"
    assert "--json" in argv
    assert argv[argv.index("--sandbox") + 1] == "read-only"
    assert "--skip-git-repo-check" in argv
    assert "-m" not in argv
    assert argv[-1] == "-"
    assert call["schema"] == SCHEMA
    assert call["stdin"].endswith("Are these related?")
    assert call["rose_child"] == "1"


def test_model_is_passed_through(fake):
    CodexBackend(model="gpt-5-codex").complete("related", "q", SCHEMA, timeout_s=10)
    argv = fake.only_call()["argv"]
    assert argv[argv.index("-m") + 1] == "gpt-5-codex"


def test_final_message_without_json_is_invalid(fake, monkeypatch):
    monkeypatch.setenv("FAKE_MODE", "malformed")
    with pytest.raises(AnswerInvalid, match="no JSON object"):
        CodexBackend().complete("related", "q", SCHEMA, timeout_s=10)
    assert_scratch_removed(fake)


def test_answer_not_fitting_the_schema_is_invalid(fake, monkeypatch):
    monkeypatch.setenv("FAKE_MODE", "wrong-schema")
    with pytest.raises(AnswerInvalid) as caught:
        CodexBackend().complete("related", "q", SCHEMA, timeout_s=10)
    assert caught.value.call == "related"
    assert "verdict" in str(caught.value)
    assert_scratch_removed(fake)


def test_hanging_cli_is_killed_and_its_files_removed(fake, monkeypatch):
    monkeypatch.setenv("FAKE_MODE", "slow")
    started = time.monotonic()
    with pytest.raises(BackendTimeout):
        CodexBackend().complete("related", "q", SCHEMA, timeout_s=0.5)
    # the fake sleeps 30 s: a call that waited for it would take 60 times the deadline
    assert time.monotonic() - started < 20 * 0.5, "the child and its grandchild were killed"
    assert_scratch_removed(fake)


def test_non_zero_exit_fails_with_code_and_last_stderr_line(fake, monkeypatch):
    monkeypatch.setenv("FAKE_MODE", "fail")
    with pytest.raises(BackendFailed) as caught:
        CodexBackend().complete("related", "q", SCHEMA, timeout_s=10)
    assert "exited with code 1" in str(caught.value)
    assert "401 Unauthorized" in str(caught.value)
    assert_scratch_removed(fake)


def test_no_final_message_fails_with_the_turn_error(fake, monkeypatch):
    monkeypatch.setenv("FAKE_MODE", "no-answer")
    with pytest.raises(BackendFailed, match="stream disconnected"):
        CodexBackend().complete("related", "q", SCHEMA, timeout_s=10)
    assert_scratch_removed(fake)


def test_missing_binary_is_unavailable_with_a_hint(tmp_path, monkeypatch):
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.setenv("ROSE_ALLOW_MODEL_SPAWN", "1")
    with pytest.raises(BackendUnavailable, match="`codex` is not on PATH"):
        CodexBackend().complete("related", "q", SCHEMA, timeout_s=10)


def test_refuses_to_spawn_under_pytest_without_opt_in(fake, monkeypatch):
    monkeypatch.delenv("ROSE_ALLOW_MODEL_SPAWN")
    with pytest.raises(BackendUnavailable, match="disabled under tests"):
        CodexBackend().complete("related", "q", SCHEMA, timeout_s=10)
    assert fake.calls() == []


def test_is_a_backend():
    assert isinstance(CodexBackend(), Backend)


@pytest.mark.parametrize(
    ("version", "quiet"), [("0.171.0", True), ("0.172.3", True), ("0.120.0", False), ("", False)]
)
def test_a_judge_call_leaves_no_session_and_runs_no_user_hook_where_codex_can(
    fake: Fake, monkeypatch: pytest.MonkeyPatch, version: str, quiet: bool
):
    """On a Codex with the flags, a call persists no rollout (`codex resume` would list it
    among the user's sessions) and runs none of the user's hooks; an older Codex, or one
    whose version cannot be read, gets neither flag rather than an error."""
    from rose.model import _proc

    monkeypatch.setattr(_proc, "_versions", {})
    monkeypatch.setenv("FAKE_VERSION", version)
    CodexBackend().complete("classify", "Classify this.", SCHEMA, timeout_s=20)
    argv = fake.only_call()["argv"]
    assert ("--ephemeral" in argv) is quiet
    assert (argv[argv.index("--disable") + 1] == "hooks") if quiet else "--disable" not in argv


def test_a_judge_call_starts_none_of_the_users_mcp_servers(
    fake: Fake, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
):
    """Each server the user's config.toml registers is disabled for the call (Codex would
    start every one, a process each, for a question that uses no tool); a name a dotted
    `-c` path cannot spell is left, and a broken config.toml adds nothing."""
    from rose.model import _proc

    monkeypatch.setattr(_proc, "_versions", {})
    monkeypatch.setenv("FAKE_VERSION", "0.171.0")
    home = tmp_path / "codex-home"
    home.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(home))
    (home / "config.toml").write_text(
        'model = "gpt-5"\n[mcp_servers.rose]\ncommand = "rose"\nargs = ["mcp"]\n'
        '[mcp_servers.docs-search]\ncommand = "npx"\n[mcp_servers."odd.name"]\ncommand = "x"\n'
    )
    assert _overrides(fake) == [
        "mcp_servers.docs-search.enabled=false",
        "mcp_servers.rose.enabled=false",
    ]
    (home / "config.toml").write_text("[mcp_servers\n")
    assert _overrides(fake) == []


def _overrides(fake: Fake) -> list[str]:
    """The `-c` overrides of one judge call."""
    fake.record.unlink(missing_ok=True)
    CodexBackend().complete("classify", "Classify this.", SCHEMA, timeout_s=20)
    argv = fake.only_call()["argv"]
    return [argv[i + 1] for i, a in enumerate(argv) if a == "-c"]

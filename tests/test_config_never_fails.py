"""A bad setting never switches memory off (issue "Never broken, never leaking", item 2).

Locks in: one bad value in a committed config.yaml (`max_pack_tokens: lots`), an unknown key
(a newer ROSE's, or a typo), a file that is not YAML, or a bad ROSE_* environment variable
used to make every command and every hook fail, and `rose config` could not repair the file.
Now each is a warning naming the key and where it came from (file and line, or the variable),
the key falls back to the value below it (the default), `rose doctor` and `rose status` show
it, and `rose config KEY VALUE` writes whatever else the file holds.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rose import config
from rose.cli import app
from rose.files.layout import global_root
from rose.store.facade import Store
from tests._hookrun import payload, run_hook

pytestmark = pytest.mark.graph

BAD = "agent: codex\nrecall:\n  max_pack_tokens: lots\n  judge_calls: 5\n  from_the_future: 1\n"


def _cli(*args: str):
    return CliRunner().invoke(app, list(args))


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_a_bad_value_falls_back_and_the_rest_is_used(tmp_path: Path):
    path = _write(tmp_path / "config.yaml", BAD)
    cfg = config.load([path])
    assert cfg.recall.max_pack_tokens == 2000  # the default, not a failure
    assert (cfg.agent, cfg.recall.judge_calls) == ("codex", 5)  # the good settings still count
    messages = {p.key: p.message for p in cfg.problems}
    assert set(messages) == {"recall.max_pack_tokens", "recall.from_the_future"}
    assert messages["recall.max_pack_tokens"].startswith(f"{path}:3: ")
    assert "'lots'" in messages["recall.max_pack_tokens"]
    assert "using 2000 (the default)" in messages["recall.max_pack_tokens"]
    assert messages["recall.from_the_future"].startswith(f"{path}:5: unknown key")


def test_an_invalid_override_leaves_the_layer_below_in_force(tmp_path: Path):
    below = _write(tmp_path / "global.yaml", "recall:\n  max_pack_tokens: 4000\n")
    above = _write(tmp_path / "project.yaml", "recall:\n  max_pack_tokens: -5\n")
    cfg = config.load([below, above])
    assert cfg.recall.max_pack_tokens == 4000
    (problem,) = cfg.problems
    assert f"using 4000 (from {below}:2)" in problem.message


def test_a_bad_environment_value_names_the_variable(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("ROSE_RECALL_MAX_PACK_TOKENS", "abc")
    monkeypatch.setenv("ROSE_RECALL_JUDGE_CALLS", "[unclosed")  # not even YAML
    cfg = config.load([])
    assert (cfg.recall.max_pack_tokens, cfg.recall.judge_calls) == (2000, 8)
    sources = sorted(p.source for p in cfg.problems)
    assert sources == [
        "environment variable ROSE_RECALL_JUDGE_CALLS",
        "environment variable ROSE_RECALL_MAX_PACK_TOKENS",
    ]


def test_a_file_that_is_not_yaml_is_ignored_with_its_line(tmp_path: Path):
    path = _write(tmp_path / "config.yaml", "agent: codex\nrecall: [unclosed\n")
    cfg = config.load([path])
    assert cfg.agent == "claude"
    (problem,) = cfg.problems
    assert problem.message.startswith(f"{path}:") and "not valid YAML" in problem.message


def test_a_secret_in_a_bad_value_is_not_repeated(tmp_path: Path):
    secret = "sk-ant-api03-" + "a" * 40
    path = _write(tmp_path / "config.yaml", f"recall:\n  max_pack_tokens: {secret}\n")
    (problem,) = config.load([path]).problems
    assert secret not in problem.message and "REDACTED" in problem.message


def test_status_doctor_and_commands_work_with_a_broken_committed_config(store: Store):
    _write(store.primary.config, BAD)
    assert _cli("add", "Use port 5433 for the test database.").exit_code == 0
    res = _cli("status")
    assert res.exit_code == 0, res.output
    assert "config     2 setting(s) ignored" in res.output
    assert f"{store.primary.config}:3: recall.max_pack_tokens='lots'" in res.output
    data = json.loads(_cli("status", "--json").output)
    assert data["config"]["ok"] is False
    assert {p["key"] for p in data["config"]["problems"]} == {
        "recall.max_pack_tokens",
        "recall.from_the_future",
    }
    checks = json.loads(_cli("doctor", "--json").output)["checks"]
    config_checks = [c for c in checks if c["name"] == "config"]
    assert all(c["level"] == "warn" for c in config_checks)
    assert any("'lots'" in c["detail"] for c in config_checks)


def test_rose_config_repairs_a_file_and_keeps_what_it_does_not_know(store: Store):
    path = _write(store.primary.config, BAD)
    res = _cli("config", "recall.max_pack_tokens", "3000")
    assert res.exit_code == 0, res.output
    cfg = config.load([path])
    assert cfg.recall.max_pack_tokens == 3000 and cfg.agent == "codex"
    assert "from_the_future: 1" in path.read_text()  # perhaps a newer ROSE's: kept
    assert "unknown key 'recall.from_the_future'" in res.output  # and still warned about
    res = _cli("config", "recall.from_the_future", "--unset")
    assert res.exit_code == 0, res.output
    assert config.load([path]).problems == []


def test_rose_config_repairs_a_file_that_is_not_yaml(store: Store):
    path = _write(store.primary.config, "recall: [unclosed\n")
    res = _cli("config", "agent", "codex")
    assert res.exit_code == 0, res.output
    assert config.load([path]).agent == "codex"
    kept = config.broken_copy(path)
    assert kept.read_text() == "recall: [unclosed\n"
    assert str(kept) in res.output


def test_rose_config_still_refuses_a_bad_value_and_an_unknown_key(store: Store):
    res = _cli("config", "recall.max_pack_tokens", "lots")
    assert res.exit_code == 1 and "recall.max_pack_tokens" in res.output
    res = _cli("config", "recal.max_depth", "2")
    assert res.exit_code == 1 and "did you mean recall.max_depth?" in res.output
    assert not store.primary.config.exists()


def test_rose_config_section_lists_its_keys(store: Store):
    res = _cli("config", "recall")
    assert res.exit_code == 0, res.output
    assert "None" not in res.output and "unknown key" not in res.output
    lines = res.output.splitlines()
    assert lines[0].startswith("recall.enabled = ")
    assert all(line.startswith("recall.") for line in lines)
    assert {r["key"] for r in json.loads(_cli("config", "recall", "--json").output)} == set(
        config.sections()["recall"]
    )


def _one_lesson(store: Store, project: Path) -> dict:
    store.add("Use port 5433 for the test database.")
    return payload("user-prompt-submit", project)


def test_the_prompt_hook_injects_despite_a_bad_environment_value(store: Store, project: Path):
    data = _one_lesson(store, project)
    code, out, _, err = run_hook(
        "user-prompt-submit", data, env={"ROSE_RECALL_MAX_PACK_TOKENS": "abc"}
    )
    assert code == 0, err
    assert out is not None and "port 5433" in out["hookSpecificOutput"]["additionalContext"]


def test_the_prompt_hook_injects_despite_a_bad_committed_config(store: Store, project: Path):
    data = _one_lesson(store, project)
    _write(store.primary.config, BAD)
    _write(global_root() / "config.yaml", "recall: [unclosed\n")
    code, out, _, err = run_hook("user-prompt-submit", data)
    assert code == 0, err
    assert out is not None and "port 5433" in out["hookSpecificOutput"]["additionalContext"]

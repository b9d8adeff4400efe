"""`rose doctor` says whether Codex trusts ROSE's hooks for their current content, since
Codex runs no hook it does not trust (and `codex exec` skips one without a word): trusted,
untrusted, stale (a hook changed after it was trusted), disabled, not listed (hooks off, or
a project Codex does not trust), or codex not installed, each with what to do. An AGENTS.md
recall block beside hooks that run is a warning: every prompt would recall twice."""

from __future__ import annotations

import json
from pathlib import Path

from rose.hosts.install import BEGIN, install
from rose.inspect.doctor import wiring
from tests._codex_app import install_fake, no_codex


def trust_check(project: Path | None = None, scope: str = "user") -> dict:
    checks = {c["name"]: c for c in wiring(project)}
    return checks.get(f"trust codex {scope}") or checks["trust codex"]


def test_trusted_hooks_are_ok(tmp_path, monkeypatch, rose_exe):
    install_fake(tmp_path, monkeypatch)
    install("codex", "user", rose_cmd=rose_exe, trust=True)
    check = trust_check()
    assert check["level"] == "ok" and "5 hooks trusted for their current content" in check["detail"]


def test_untrusted_hooks_warn_with_the_command_that_trusts_them(tmp_path, monkeypatch, rose_exe):
    install_fake(tmp_path, monkeypatch)
    install("codex", "user", rose_cmd=rose_exe)
    check = trust_check()
    assert check["level"] == "warn"
    assert (
        "untrusted: session-start, user-prompt-submit, stop, pre-compact, session-end"
        in (check["detail"])
    )
    assert "rose install --target codex --trust" in check["detail"]


def test_a_hook_edited_after_trust_is_stale(tmp_path, monkeypatch, rose_exe):
    install_fake(tmp_path, monkeypatch)
    install("codex", "user", rose_cmd=rose_exe, trust=True)
    path = Path.home() / ".codex" / "hooks.json"
    data = json.loads(path.read_text())
    data["hooks"]["Stop"][0]["hooks"][0]["timeout"] = 99
    path.write_text(json.dumps(data))
    check = trust_check()
    assert check["level"] == "warn"
    assert "stale (trusted for earlier content): stop" in check["detail"]
    assert "untrusted" not in check["detail"]


def test_a_disabled_hook_is_named(tmp_path, monkeypatch, rose_exe):
    fake = install_fake(tmp_path, monkeypatch)
    install("codex", "user", rose_cmd=rose_exe, trust=True)
    state = fake.state()
    (key,) = [k for k in state["hooks"] if ":user_prompt_submit:" in k]
    state["hooks"][key]["enabled"] = False
    fake.state_file().write_text(json.dumps(state))
    check = trust_check()
    assert (
        check["level"] == "warn"
        and "disabled in Codex's /hooks: user-prompt-submit" in (check["detail"])
    )


def test_without_codex_trust_cannot_be_told(tmp_path, monkeypatch, rose_exe):
    no_codex(tmp_path, monkeypatch)
    install("codex", "user", rose_cmd=rose_exe)
    check = trust_check()
    assert check["level"] == "warn" and "codex is not on PATH" in check["detail"]


def test_a_project_codex_does_not_trust_is_named(tmp_path, monkeypatch, rose_exe, project):
    install_fake(tmp_path, monkeypatch)
    install("codex", "project", rose_cmd=rose_exe, project_dir=project)
    check = trust_check(project, "project")
    assert check["level"] == "warn"
    assert "only in a project it trusts" in check["detail"] and str(project) in check["detail"]


def test_hooks_turned_off_are_named(tmp_path, monkeypatch, rose_exe):
    install_fake(tmp_path, monkeypatch, mode="hooks-off")
    install("codex", "user", rose_cmd=rose_exe)
    check = trust_check()
    assert check["level"] == "warn" and "hooks are off in this Codex" in check["detail"]


def test_a_failing_app_server_is_a_warning_not_a_crash(tmp_path, monkeypatch, rose_exe):
    install_fake(tmp_path, monkeypatch)
    install("codex", "user", rose_cmd=rose_exe)
    monkeypatch.setenv("FAKE_CODEX_MODE", "crash")
    check = trust_check()
    assert check["level"] == "warn" and "failed to load configuration: boom" in check["detail"]


def test_no_codex_hooks_wired_means_no_trust_check(tmp_path, monkeypatch):
    fake = install_fake(tmp_path, monkeypatch)
    names = {c["name"] for c in wiring()}
    assert not any(n.startswith("trust codex") for n in names)
    assert fake.received() == []  # nothing to ask, so Codex is not started


def test_an_agents_block_beside_running_hooks_warns(tmp_path, monkeypatch, rose_exe):
    install_fake(tmp_path, monkeypatch, mode="hooks-off")
    install("codex", "user", rose_cmd=rose_exe)  # a Codex without hooks: the block is written
    monkeypatch.setenv("FAKE_CODEX_MODE", "")  # hooks turned on later, and trusted
    from rose.hosts import codex_trust as ct

    ct.trust(str(tmp_path / "fake-bin" / "codex"), "user", Path.home() / ".codex" / "hooks.json",
             Path.cwd())  # fmt: skip
    assert BEGIN in (Path.home() / ".codex" / "AGENTS.md").read_text()
    check = {c["name"]: c for c in wiring()}["AGENTS.md user"]
    assert check["level"] == "warn" and "recalls twice" in check["detail"]

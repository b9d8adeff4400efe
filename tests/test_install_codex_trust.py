"""`rose install --target codex --trust` trusts ROSE's own hooks, and only those, through
`codex app-server` (hooks/list, then one config/batchWrite of each hook's current hash),
after the user consents (a confirmation, or --yes). Without `codex` on PATH it stops before
writing anything; when the app-server fails or will not trust them, the files it wrote are
put back byte for byte and the error names what failed. Uninstall takes ROSE's trust
records out of Codex's config again, and works without Codex. Tested against a fake `codex` that
speaks the JSON-RPC subset and records what it received."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rose.cli import app
from rose.hosts.codex_trust import CodexTrustError
from rose.hosts.install import install
from tests._codex_app import install_fake, no_codex

ROSE = "/opt/rose/bin/rose"
THEIRS = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}}


@pytest.fixture
def run():
    runner = CliRunner()
    return lambda *args, input=None: runner.invoke(app, list(args), input=input)


def hooks_json() -> Path:
    return Path.home() / ".codex" / "hooks.json"


def users_hooks_file() -> str:
    hooks_json().parent.mkdir(parents=True)
    text = json.dumps(THEIRS, indent=4) + "\n"
    hooks_json().write_text(text)
    return text


def listed(fake) -> list[dict]:
    """What the fake's last hooks/list answered, read back the way Codex would list them."""
    import subprocess

    msgs = [
        {"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "t", "version": "0"}}},
        {"id": 2, "method": "hooks/list", "params": {"cwds": [str(Path.cwd())]}},
    ]
    out = subprocess.run(
        [str(fake.bin), "app-server"],
        input="".join(json.dumps(m) + "\n" for m in msgs),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    answers = [json.loads(line) for line in out.splitlines()]
    (result,) = [a["result"] for a in answers if a.get("id") == 2]
    return result["data"][0]["hooks"]


def test_trust_writes_the_current_hash_of_roses_hooks_only(tmp_path, monkeypatch):
    fake = install_fake(tmp_path, monkeypatch)
    users_hooks_file()
    report = install("codex", "user", rose_cmd=ROSE, trust=True)
    hooks = {h["key"]: h for h in listed(fake)}
    rose = {k: h for k, h in hooks.items() if h["command"].startswith(ROSE)}
    assert len(rose) == 5 and len(hooks) == 6
    edits = {e["keyPath"]: e["value"] for e in fake.edits()}
    assert edits == {f'hooks.state."{k}".trusted_hash': h["currentHash"] for k, h in rose.items()}
    assert all(h["trustStatus"] == "trusted" for h in rose.values())
    (users,) = [h for h in hooks.values() if h["command"] == "notify-send done"]
    assert users["trustStatus"] == "untrusted"  # the user's own hook is left to the user
    assert fake.methods().count("config/batchWrite") == 1
    assert "Codex now trusts ROSE's 5 hooks" in report.render()


def test_hooks_already_trusted_are_not_written_again(tmp_path, monkeypatch):
    fake = install_fake(tmp_path, monkeypatch)
    install("codex", "user", rose_cmd=ROSE, trust=True)
    fake.record.unlink()
    report = install("codex", "user", rose_cmd=ROSE, trust=True)
    assert "config/batchWrite" not in fake.methods()
    assert "already trusts ROSE's 5 hooks" in report.render()


def test_a_changed_hook_is_trusted_again_for_its_new_content(tmp_path, monkeypatch):
    fake = install_fake(tmp_path, monkeypatch)
    install("codex", "user", rose_cmd=ROSE, trust=True)
    install("codex", "user", rose_cmd="/new/place/rose", trust=True)
    hooks = listed(fake)
    assert {h["trustStatus"] for h in hooks} == {"trusted"}
    assert all(h["command"].startswith("/new/place/rose ") for h in hooks)


def test_the_cli_asks_first_and_no_means_nothing_changes(run, tmp_path, monkeypatch):
    fake = install_fake(tmp_path, monkeypatch)
    res = run("install", "--target", "codex", "--trust", input="n\n")
    assert res.exit_code == 1
    assert str(hooks_json()) in res.output
    assert " hook user-prompt-submit # rose-managed" in res.output
    assert "no other hook is trusted" in res.output and "not trusted" in res.output
    assert not hooks_json().exists()
    assert "app-server" not in [a for r in fake.received() for a in r.get("argv", [])]


def test_the_cli_takes_yes_at_the_prompt(run, tmp_path, monkeypatch):
    fake = install_fake(tmp_path, monkeypatch)
    res = run("install", "--target", "codex", "--trust", input="y\n")
    assert res.exit_code == 0, res.output
    assert {h["trustStatus"] for h in listed(fake)} == {"trusted"}


def test_no_answer_at_all_is_no(run, tmp_path, monkeypatch):
    install_fake(tmp_path, monkeypatch)
    res = run("install", "--target", "codex", "--trust", input="")
    assert res.exit_code == 1 and "--yes" in res.output
    assert not hooks_json().exists()


def test_yes_consents_for_scripts(run, tmp_path, monkeypatch):
    fake = install_fake(tmp_path, monkeypatch)
    res = run("install", "--target", "codex", "--trust", "--yes")
    assert res.exit_code == 0, res.output
    assert "Trust them?" not in res.output
    assert len(fake.edits()) == 5


def test_trust_is_for_codex_only(run):
    res = run("install", "--trust", "--yes")
    assert res.exit_code == 2 and "--target codex" in res.output
    assert not (Path.home() / ".claude").exists()


def test_a_dry_run_asks_codex_nothing(run, tmp_path, monkeypatch):
    fake = install_fake(tmp_path, monkeypatch)
    res = run("install", "--target", "codex", "--trust", "--dry-run")
    assert res.exit_code == 0, res.output
    assert "would then ask Codex to trust" in res.output
    assert not hooks_json().exists() and fake.methods() == []


def test_without_codex_on_path_nothing_is_written(run, tmp_path, monkeypatch):
    no_codex(tmp_path, monkeypatch)
    res = run("install", "--target", "codex", "--trust", "--yes")
    assert res.exit_code == 1
    assert "codex is not on PATH" in res.output and "Traceback" not in res.output
    assert not hooks_json().exists() and not hooks_json().parent.exists()


@pytest.mark.parametrize(
    ("mode", "said"),
    [
        ("crash", "exited before answering initialize; it said: error: failed to load"),
        ("refuse-write", "refused config/batchWrite: config.toml is locked"),
        ("ignore-write", "still lists ROSE's"),
        ("hooks-off", "hooks are off in this Codex"),
    ],
)
def test_a_failing_app_server_puts_every_file_back(tmp_path, monkeypatch, mode, said):
    install_fake(tmp_path, monkeypatch, mode=mode)
    before = users_hooks_file()
    with pytest.raises(CodexTrustError, match=said) as err:
        install("codex", "user", rose_cmd=ROSE, trust=True)
    assert "put back as they were" in str(err.value)
    assert hooks_json().read_text() == before
    left = sorted(p.name for p in hooks_json().parent.iterdir() if p.name != "fake-trust.json")
    assert left == ["hooks.json"]  # and no backup


def test_a_fresh_install_that_cannot_be_trusted_leaves_no_folder(tmp_path, monkeypatch):
    install_fake(tmp_path, monkeypatch, mode="refuse-write")
    with pytest.raises(CodexTrustError):
        install("codex", "user", rose_cmd=ROSE, trust=True)
    assert not hooks_json().parent.exists()


def test_an_untrusted_project_is_named_and_its_files_put_back(tmp_path, monkeypatch, project):
    fake = install_fake(tmp_path, monkeypatch)
    with pytest.raises(CodexTrustError, match="only in a project it trusts") as err:
        install("codex", "project", rose_cmd=ROSE, project_dir=project, trust=True)
    assert str(project) in str(err.value)
    assert not (project / ".codex").exists()
    fake.trust_project(project)
    install("codex", "project", rose_cmd=ROSE, project_dir=project, trust=True)
    assert len(fake.edits()) == 5
    assert all(str(project / ".codex" / "hooks.json") in e["keyPath"] for e in fake.edits())


def test_uninstall_removes_roses_trust_records_and_keeps_the_users(tmp_path, monkeypatch):
    from rose.hosts.install import uninstall

    fake = install_fake(tmp_path, monkeypatch)
    users_hooks_file()
    install("codex", "user", rose_cmd=ROSE, trust=True)
    state = fake.state()
    theirs = f"{hooks_json()}:stop:0:0"
    state["hooks"][theirs] = {"trusted_hash": "sha256:the-users-own"}
    fake.state_file().write_text(json.dumps(state))
    report = uninstall("codex", "user")
    assert fake.state()["hooks"] == {theirs: {"trusted_hash": "sha256:the-users-own"}}
    assert "removed Codex's trust records for ROSE's 5 hooks" in report.render()
    assert json.loads(hooks_json().read_text()) == THEIRS


def test_uninstall_without_codex_still_removes_the_hooks(tmp_path, monkeypatch):
    from rose.hosts.install import uninstall

    install_fake(tmp_path, monkeypatch)
    install("codex", "user", rose_cmd=ROSE, trust=True)
    no_codex(tmp_path, monkeypatch)
    uninstall("codex", "user")
    assert not hooks_json().exists()

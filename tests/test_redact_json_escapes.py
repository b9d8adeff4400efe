"""A secret stays off disk when JSON escapes sit beside it, and the newer formats do too.

Locks in: redaction ran over the JSON text of an appended line, where a token right after
a `\\n` or `\\t` escape follows a letter (`n`, `t`) and a start-of-word check fails, so a
Telegram bot token on its own line of a prompt reached the session log in clear. Each
JSON string holding an escape is now redacted as the text it stands for, and the runs
between terminal colour codes (`\x1b[32m<token>`) each on their own. Also: Sentry
DSNs, Mailgun `key-...` and Doppler `dp.st.<config>.<token>` are redacted in `rose add`,
the session log and the event log (every file of the store is searched afterwards, the
graph's included); and a PHP array's `'secret_key' => '...'` loses its value, not its `>`.
Test secrets are assembled at runtime: no secret literal sits here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rose.cli import app
from rose.events import append_event
from rose.files import sessions
from rose.redaction.redact import redact

HEX32 = "3f9c2b7a1e4d8c6b" + "0a5f7e2d9c1b4a86"
NEW = {
    "telegram-token": "7312046853:" + "AAHk9vQm2xLp4RtZ8wYc1Nf6Ub3Je5Gd0Sa",
    "mailgun-key": "key-" + "3ax6xnjp29jd6fds4gc373sgvjxteol0",
    "doppler-token": "dp.st.dev_frontend." + "Xq7Lm2Np4Rt8Vw1Yz3Bc5Df7Gh9Jk0Lm2Np4Rt8Vw1Yz3",
    "doppler-token-plain": "dp.pt." + "Xq7Lm2Np4Rt8Vw1Yz3Bc5Df7Gh9Jk0Lm2Np4Rt8Vw1Yz3",
    "sentry-dsn": f"https://{HEX32}@o123456.ingest.sentry.io/4505123456789",
    "sentry-dsn-secret": f"https://{HEX32}:{HEX32[::-1]}@o77.ingest.us.sentry.io/42",
    "sentry-dsn-self-hosted": f"http://{HEX32}@sentry.internal.example.com:9000/7",
}
# The part of each sample that must not reach disk (a DSN keeps its host and project).
SECRET = {name: token.split("//")[1].split("@")[0] if "//" in token else token
          for name, token in NEW.items()}  # fmt: skip
ESCAPES = ["\n", "\t", "\r\n", "\x1b[0m", '"', "\\"]


def _kind(name: str) -> str:
    return name.rsplit("-", 1)[0] if name.endswith(("-plain", "-secret", "-hosted")) else name


@pytest.mark.parametrize("name", sorted(NEW))
def test_each_new_format_is_redacted_in_text(name):
    token = NEW[name]
    out = redact(f"set it to {token} now")
    assert SECRET[name] not in out
    kind = "sentry-dsn" if name.startswith("sentry") else _kind(name)
    assert f"[REDACTED:{kind}]" in out


def test_a_dsn_keeps_its_host_and_project():
    out = redact(NEW["sentry-dsn"])
    assert out == "https://[REDACTED:sentry-dsn]@o123456.ingest.sentry.io/4505123456789"


@pytest.mark.parametrize("escape", ESCAPES)
@pytest.mark.parametrize("name", sorted(NEW))
def test_a_token_after_an_escape_is_redacted_in_the_session_log(tmp_path, name, escape):
    prompt = f"here is the bot:{escape}{NEW[name]}{escape}thanks"
    sessions.append(tmp_path, "s1", "prompt", turn=1, prompt=prompt)
    raw = sessions.log_path(tmp_path, "s1").read_text(encoding="utf-8")
    assert SECRET[name] not in raw
    (entry,) = sessions.read(tmp_path, "s1")
    assert SECRET[name] not in entry["prompt"]
    assert entry["prompt"].startswith(f"here is the bot:{escape}")
    assert entry["prompt"].endswith(f"{escape}thanks")


@pytest.mark.parametrize("name", sorted(NEW))
def test_a_token_after_an_escape_is_redacted_in_the_event_log(tmp_path, name):
    path = tmp_path / "events.jsonl"
    append_event(path, "note", {"text": f"line one\n{NEW[name]}\tdone"})
    raw = path.read_text(encoding="utf-8")
    assert SECRET[name] not in raw
    text = json.loads(raw)["text"]
    assert text.startswith("line one\n")
    assert "[REDACTED:" in text


def test_an_ascii_only_line_stays_ascii_and_valid():
    line = json.dumps({"p": "café\n" + NEW["telegram-token"]})  # ensure_ascii: \u00e9
    out = redact(line)
    assert out.isascii()
    assert json.loads(out) == {"p": "café\n[REDACTED:telegram-token]"}


def test_a_lone_surrogate_beside_a_token_still_encodes():
    line = json.dumps({"p": "é\ud800\n" + NEW["mailgun-key"]}, ensure_ascii=False)
    out = redact(line)
    out.encode("utf-8")
    assert json.loads(out)["p"].endswith("\n[REDACTED:mailgun-key]")


def test_json_inside_a_json_string_is_redacted_too():
    inner = json.dumps({"out": "token:\n" + NEW["telegram-token"]})
    out = redact(json.dumps({"tool_result": inner}))
    assert SECRET["telegram-token"] not in out
    assert "[REDACTED:telegram-token]" in json.loads(json.loads(out)["tool_result"])["out"]


@pytest.mark.parametrize("name", sorted(NEW))
def test_redaction_of_an_escaped_line_is_idempotent(name):
    line = json.dumps({"a": f"x\n{NEW[name]}", "b": ["\t" + NEW[name]]}, ensure_ascii=False)
    once = redact(line)
    assert redact(once) == once


def test_rose_add_keeps_every_new_format_off_disk(project: Path):
    runner = CliRunner()
    assert runner.invoke(app, ["init"]).exit_code == 0
    body = "Deploy settings, one a line:\n" + "\n".join(NEW.values()) + "\n\tend"
    res = runner.invoke(app, ["add", body, "--title", "Deploy settings"])
    assert res.exit_code == 0, res.output
    assert runner.invoke(app, ["status"]).exit_code == 0  # the graph and the view are built
    files = [p for p in (project / ".rose").rglob("*") if p.is_file()]
    assert any(p.suffix == ".md" for p in files)
    for p in files:
        data = p.read_bytes()
        for name, secret in SECRET.items():
            assert secret.encode() not in data, f"{name} in {p}"


def test_a_php_array_value_is_redacted_whole():
    value = "sk_" + "rv5HtmS5yj5BkN3BxtS8kzZASerJn"
    assert redact(f"'secret_key' => '{value}',") == "'secret_key' => '[REDACTED:secret]',"

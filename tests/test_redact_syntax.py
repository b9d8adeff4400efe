"""Redaction never changes a file's syntax, and nothing prints a secret it will not store.

Locks in (issue "Never broken, never leaking", item 3): `rose config model sk-proj-...`
used to write `model: [REDACTED:openai-key]`, a YAML list, after which every command
failed, and it echoed the raw key. Now YAML (config.yaml, a lesson's front matter) is
redacted value by value, so a scalar stays a string and a list keeps its length; text
with nothing to hide is written byte for byte; JSON stays JSON; and the config echo and
error messages show the stored, redacted value.
Test secrets are assembled at runtime so no secret-looking literal sits in this file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from rose import config
from rose.cli import app
from rose.disk.atomic import append_line, write_json, write_text
from rose.errors import ConfigError
from rose.files.nodefile import dump_node, parse_node
from rose.models import Node
from rose.redaction.redact_files import redact_file

OPENAI_PROJ = "sk-" + "proj-" + "Ab1_Cd2-" * 8
GITHUB = "ghp" + "_" + "a1B2c3D4e5" * 4
PLACEHOLDER = "[REDACTED:openai-key]"


def test_a_secret_scalar_stays_a_string_in_yaml():
    out = redact_file("config.yaml", yaml.safe_dump({"model": OPENAI_PROJ, "agent": "codex"}))
    assert yaml.safe_load(out) == {"model": PLACEHOLDER, "agent": "codex"}
    assert out == "agent: codex\nmodel: '[REDACTED:openai-key]'\n"


def test_yaml_keeps_its_shape_lists_keys_and_numbers_included():
    data = {
        "preserve": [OPENAI_PROJ, "keep me", f"use {GITHUB} here"],
        "flow": {"a": 1, "b": [2.5, True, None]},
        f"key {GITHUB}": "value",
    }
    out = redact_file("x.yml", yaml.safe_dump(data, default_flow_style=True))
    assert yaml.safe_load(out) == {
        "preserve": [PLACEHOLDER, "keep me", "use [REDACTED:github-token] here"],
        "flow": {"a": 1, "b": [2.5, True, None]},
        "key [REDACTED:github-token]": "value",
    }


def test_yaml_with_nothing_to_hide_is_kept_byte_for_byte():
    text = "# my settings\nrecall:\n  max_pack_tokens: 4000   # roomy\nmodel: 'opus'\n"
    assert redact_file("config.yaml", text) == text


def test_a_secret_only_in_a_yaml_comment_is_dropped_with_the_comments():
    text = f"# key was {GITHUB}\nagent: codex\n"
    out = redact_file("config.yaml", text)
    assert GITHUB not in out and yaml.safe_load(out) == {"agent": "codex"}


def test_a_secret_the_dumper_folded_onto_the_next_line_is_still_found():
    long = "word " * 17 + "password: hunter2 and more"
    text = yaml.safe_dump({"gist": long}, width=100)
    assert "password:\n  hunter2" in text  # folded apart: text-level redaction misses it
    out = redact_file("config.yaml", text)
    assert "hunter2" not in out
    assert yaml.safe_load(out) == {"gist": long.replace("hunter2", "[REDACTED:password]")}


def test_text_that_is_not_yaml_is_redacted_as_text():
    text = f"recall: [unclosed {GITHUB}\n"
    assert redact_file("config.yaml", text) == "recall: [unclosed [REDACTED:github-token]\n"


def test_a_lesson_front_matter_stays_yaml_and_the_lesson_still_parses(tmp_path: Path):
    node = Node(title=OPENAI_PROJ, gist="Rotate it.", body=f"Leaked {GITHUB} once.\n---\nmore")
    text = redact_file("n_1.md", dump_node(node))
    back = parse_node(text, tmp_path / f"{node.id}.md", "project")
    assert back.title == PLACEHOLDER and back.gist == "Rotate it."
    assert back.body == "Leaked [REDACTED:github-token] once.\n---\nmore"


def test_a_lesson_with_nothing_to_hide_is_kept_byte_for_byte():
    text = dump_node(Node(title="Retry flaky uploads", gist="Back off.", body="n_7f2a91 said so."))
    assert redact_file("n_7f2a91.md", text) == text


def test_markdown_without_front_matter_is_redacted_as_text():
    text = f"# report\n\nsaw {GITHUB}\n"
    assert redact_file("r.md", text) == "# report\n\nsaw [REDACTED:github-token]\n"


def test_written_json_and_event_lines_stay_json(tmp_path: Path):
    data = {"out": f"{OPENAI_PROJ}\n{GITHUB}", "card": 4111111111111111, "n": [1, "x"]}
    for compact in (False, True):
        write_json(tmp_path / "v.json", data, compact=compact)
        loaded = json.loads((tmp_path / "v.json").read_text())
        assert loaded["out"] == f"{PLACEHOLDER}\n[REDACTED:github-token]"
    append_line(tmp_path / "e.jsonl", json.dumps({"cmd": f"curl -u bob:pw1 x\n{GITHUB}"}))
    line = json.loads((tmp_path / "e.jsonl").read_text())
    assert line == {"cmd": "curl -u bob:[REDACTED:password] x\n[REDACTED:github-token]"}


def test_a_secret_config_value_is_stored_redacted_and_the_file_still_loads(tmp_path: Path):
    path = tmp_path / "config.yaml"
    config.set_override(path, "recall.max_pack_tokens", "4000")
    assert config.set_override(path, "model", OPENAI_PROJ) == PLACEHOLDER
    write_text(path, path.read_text())  # a second trip through redaction changes nothing
    cfg = config.load([path])
    assert cfg.model == PLACEHOLDER and cfg.recall.max_pack_tokens == 4000
    assert OPENAI_PROJ not in path.read_text()


@pytest.mark.parametrize("key", ["agent", "recall.max_pack_tokens", "no.such_key"])
def test_a_config_error_never_shows_the_secret(tmp_path: Path, key: str):
    with pytest.raises(ConfigError) as err:
        config.set_override(tmp_path / "config.yaml", key, OPENAI_PROJ)
    assert OPENAI_PROJ not in str(err.value)
    assert not (tmp_path / "config.yaml").exists()


def test_rose_config_echoes_the_stored_value_and_later_commands_work(project: Path):
    runner = CliRunner()
    assert runner.invoke(app, ["init"]).exit_code == 0
    res = runner.invoke(app, ["config", "model", OPENAI_PROJ])
    assert res.exit_code == 0, res.output
    assert OPENAI_PROJ not in res.output
    assert res.output.startswith(f"model = {PLACEHOLDER}  (")
    assert yaml.safe_load((project / ".rose" / "config.yaml").read_text())["model"] == PLACEHOLDER
    res = runner.invoke(app, ["config", "model"])
    assert (res.exit_code, res.output.strip()) == (0, PLACEHOLDER)
    assert runner.invoke(app, ["config"]).exit_code == 0
    assert runner.invoke(app, ["status"]).exit_code == 0

"""Settings resolve as defaults < global config.yaml < project config.yaml < ROSE_* env, every key
has an env name, and a bad value or unknown key is a problem naming the key and where it came
from, never an error that stops loading (tests/test_config_never_fails.py has the rest)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rose import config
from rose.errors import ConfigError


def test_every_key_has_a_default_a_description_and_an_env_name():
    ks = config.keys()
    assert "recall.max_pack_tokens" in ks and "agent" in ks and "graph.engine" in ks
    for key, (_default, help_) in ks.items():
        assert help_, key
        assert config.env_name(key).startswith("ROSE_")
    assert config.env_name("recall.max_pack_tokens") == "ROSE_RECALL_MAX_PACK_TOKENS"


def test_layering_and_env_override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    glob, proj = tmp_path / "g.yaml", tmp_path / "p.yaml"
    glob.write_text("recall:\n  max_pack_tokens: 100\n  judge_calls: 9\n")
    proj.write_text("recall:\n  max_pack_tokens: 200\n")
    cfg = config.load([glob, proj])
    assert cfg.recall.max_pack_tokens == 200 and cfg.recall.judge_calls == 9
    monkeypatch.setenv("ROSE_RECALL_MAX_PACK_TOKENS", "300")
    monkeypatch.setenv("ROSE_AGENT", "codex")
    cfg = config.load([glob, proj])
    assert cfg.recall.max_pack_tokens == 300 and cfg.agent == "codex"


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("recall:\n  max_pack_tokens: lots\n", "recall.max_pack_tokens"),
        ("recall:\n  nonsense: 1\n", "recall.nonsense"),
        ("recall: [unclosed\n", "not valid YAML"),
        ("- a list\n", "mapping"),
    ],
)
def test_bad_config_names_the_problem(tmp_path: Path, text: str, needle: str, monkeypatch):
    monkeypatch.delenv("ROSE_CALLS_BACKOFF_S")  # the suite's own setting, not a default
    p = tmp_path / "config.yaml"
    p.write_text(text)
    cfg = config.load([p])
    assert cfg.model_dump() == config.Config().model_dump()
    assert [needle in p.message and str(tmp_path) in p.message for p in cfg.problems] == [True]


def test_bad_env_value_names_the_key(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("ROSE_GRAPH_ENGINE", "sqlite")
    cfg = config.load([])
    assert cfg.graph.engine == "kuzu"
    (problem,) = cfg.problems
    assert "graph.engine" in problem.message and "ROSE_GRAPH_ENGINE" in problem.message


def test_set_override_keeps_other_keys_and_validates(tmp_path: Path):
    p = tmp_path / "config.yaml"
    config.set_override(p, "recall.judge_calls", "5")
    config.set_override(p, "agent", "codex")
    cfg = config.load([p])
    assert cfg.recall.judge_calls == 5 and cfg.agent == "codex"
    with pytest.raises(ConfigError):
        config.set_override(p, "recall.judge_calls", "-1")
    assert config.load([p]).recall.judge_calls == 5  # the refused value was not written


def test_text_settings_take_the_words_as_typed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """YAML reads `off` as false and `3` as a number; a text setting must keep the word."""
    path = tmp_path / "config.yaml"
    assert config.set_override(path, "reflect.mode", "off") == "off"
    assert config.set_override(path, "model", "3") == "3"
    assert config.set_override(path, "recall.enabled", "off") is False  # a real boolean
    cfg = config.load([path])
    assert (cfg.reflect.mode, cfg.model, cfg.recall.enabled) == ("off", "3", False)
    monkeypatch.setenv("ROSE_REFLECT_MODE", "block")
    monkeypatch.setenv("ROSE_MODEL", "no")
    cfg = config.load([path])
    assert (cfg.reflect.mode, cfg.model) == ("block", "no")

"""Choosing a backend by name, and what `rose doctor` reports about the CLIs.

Locks in: the four names build their backends (model passed through), an unknown name
or an unloadable simulated world is BackendUnavailable with a hint, available_backends
reads PATH, and importing rose.model loads no backend implementation.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from rose.errors import BackendUnavailable
from rose.model import available_backends, make_backend
from rose.model.claude import ClaudeBackend
from rose.model.codex import CodexBackend
from rose.model.scripted import ScriptedBackend


def test_names_build_their_backends_with_the_model():
    claude = make_backend("claude", model="opus")
    codex = make_backend(" Codex ", model="gpt-5")
    assert isinstance(claude, ClaudeBackend) and claude.model == "opus"
    assert isinstance(codex, CodexBackend) and codex.model == "gpt-5"
    assert isinstance(make_backend("scripted"), ScriptedBackend)


def test_unknown_name_lists_the_valid_ones():
    with pytest.raises(BackendUnavailable) as caught:
        make_backend("gpt")
    for name in ("claude", "codex", "simulated", "scripted"):
        assert name in str(caught.value)


def test_simulated_without_the_sim_package_is_unavailable(monkeypatch):
    monkeypatch.setitem(sys.modules, "rose.sim.model.backend", None)  # makes the import fail
    with pytest.raises(BackendUnavailable, match="simulated world"):
        make_backend("simulated")


def test_available_backends_reads_path(tmp_path, monkeypatch):
    exe = tmp_path / "claude"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert available_backends() == {"claude": str(exe), "codex": None}


def test_importing_rose_model_loads_no_backend():
    code = (
        "import sys, rose.model;"
        "print([m for m in ('rose.model.claude', 'rose.model.codex', 'rose.model.scripted',"
        " 'rose.model._proc') if m in sys.modules])"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert out.stdout.strip() == "[]"

"""A ROSE_HOME that does not exist is an error naming it (issue "Never broken, never leaking",
item 11). Locks in: a mistyped ROSE_HOME used to create a whole store (a 3 MB graph) there,
silently, on the first command; only `rose init` creates it now."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from rose.cli import app
from rose.errors import RoseError
from rose.files.layout import find_project_root
from rose.store.facade import Store

pytestmark = pytest.mark.graph


def test_a_missing_rose_home_is_named_and_left_uncreated(tmp_path: Path, monkeypatch):
    typo = tmp_path / "sotre" / ".rose"
    monkeypatch.setenv("ROSE_HOME", str(typo))
    with pytest.raises(RoseError, match="ROSE_HOME") as info:
        Store.open()
    assert str(typo) in str(info.value) and "rose init" in str(info.value)
    for args in (["status"], ["add", "A lesson."], ["doctor"]):
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 1, args
        assert str(typo) in res.output
    assert not typo.exists() and not typo.parent.exists()


def test_rose_init_creates_rose_home(tmp_path: Path, monkeypatch):
    home = tmp_path / "elsewhere" / ".rose"
    monkeypatch.setenv("ROSE_HOME", str(home))
    assert CliRunner().invoke(app, ["init"]).exit_code == 0
    assert find_project_root() == home.resolve()
    assert CliRunner().invoke(app, ["status"]).exit_code == 0

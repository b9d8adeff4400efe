"""A Stop reads its `reflect` settings from the session record while nothing changed.

Locks in: the settings are loaded once and kept in the session record with a stamp of the
config files and the ROSE_* environment; the next Stop uses the kept values without
loading the settings (which costs ~100 ms of imports a turn); editing config.yaml or
changing a ROSE_* variable loads them afresh; the stamp holds no variable's value.
"""

from __future__ import annotations

import json

import pytest

from rose import config
from rose.host import nudge
from rose.store.facade import Store


def test_kept_until_the_files_or_the_environment_change(
    store: Store, monkeypatch: pytest.MonkeyPatch
):
    roots = [(str(store.primary.root), "project")]
    config.set_override(store.primary.config, "reflect.mode", "block")
    rec: dict = {}
    assert nudge.kept_settings(roots, rec).reflect.mode == "block"

    def refuse(_roots):
        raise AssertionError("loaded the settings again")

    monkeypatch.setattr(nudge, "settings", refuse)
    assert nudge.kept_settings(roots, rec).reflect.mode == "block"  # from the record
    monkeypatch.undo()
    config.set_override(store.primary.config, "reflect.mode", "off")
    assert nudge.kept_settings(roots, rec).reflect.mode == "off"
    monkeypatch.setenv("ROSE_REFLECT_MODE", "background")
    assert nudge.kept_settings(roots, rec).reflect.mode == "background"
    assert "background" not in json.dumps(rec["reflect_settings"]["stamp"])

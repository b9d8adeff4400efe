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
from rose.hooks import nudge
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


def test_a_kept_copy_lacking_a_setting_is_loaded_afresh(store: Store):
    """After an upgrade adds a `reflect` setting, a copy kept by the older ROSE must not be
    used (it would fail every Stop on the missing name)."""
    assert set(nudge.KEPT) == set(config.Reflect.model_fields)
    roots = [(str(store.primary.root), "project")]
    rec: dict = {}
    nudge.kept_settings(roots, rec)
    del rec["reflect_settings"]["values"]["nudge_backoff_after"]
    got = nudge.kept_settings(roots, rec).reflect
    assert (
        got.nudge_backoff_after == 3 and "nudge_backoff_after" in rec["reflect_settings"]["values"]
    )


@pytest.mark.parametrize(
    "kept", [{"offset": "x"}, {"turns": -1}, {"tools": True}, "not a dict", {"last": "noon"}]
)
def test_unreadable_counts_start_afresh_and_never_fail_a_stop(store: Store, kept):
    config.set_override(store.primary.config, "reflect.mode", "block")
    roots = [(str(store.primary.root), "project")]
    rec: dict = {"reflect": kept}
    payload = {"session_id": "s", "transcript_path": "", "cwd": str(store.primary.root.parent)}
    assert nudge.on_stop(payload, roots, rec) is None  # one turn, nothing due
    assert rec["reflect"]["turns"] == 1

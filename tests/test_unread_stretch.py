"""Where the session end's reflection starts reading, from the session log alone.

Locks in: after the last reflection's end when every one was done; from the start of a
reflection whose model call failed (its stretch was never read); from the session end's own
start, resumed with no new nudge, when that one died or failed half way; from 0 with none.
"""

from __future__ import annotations

from rose.jobs._unread import unread


def _nudge(start: int, end: int, mode: str = "background") -> dict:
    return {"t": "nudge", "mode": mode, "start": start, "end": end}


def _said(error: str = "") -> dict:
    return {"t": "reflected", **({"error": error} if error else {})}


def test_after_the_last_read_stretch_when_every_reflection_was_done():
    assert unread([_nudge(0, 100), _said(), _nudge(100, 250), _said()]) == (250, False)
    assert unread([]) == (0, False)


def test_from_a_stretch_whose_reflection_failed():
    entries = [_nudge(0, 100), _said("BackendTimeout: x"), _nudge(100, 250), _said()]
    assert unread(entries) == (0, False)
    assert unread([_nudge(0, 100), _said(), _nudge(100, 250)]) == (250, False)  # pending


def test_a_session_end_that_died_or_failed_is_resumed_from_its_start():
    died = [_nudge(0, 100), _said(), _nudge(100, 300, "session-end")]
    assert unread(died) == (100, True)
    failed = [_nudge(0, 100), _said("x"), _nudge(100, 300, "session-end"), _said("y")]
    assert unread(failed) == (0, True)

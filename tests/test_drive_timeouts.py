"""The benchmark's count of deadlines passed reads every kind the log records them as.

Locks in: `rose.sim.hosts.drive.timeouts` counts a judgement that timed out (a `judge` event
with error `BackendTimeout`), a replay process that gave no answer (a `timeout` event) and
a prompt whose recall ran out of time (an `inject` event saying so), and nothing else: a
judgement that failed otherwise, or a recall degraded for another reason, is no timeout.
A seeded benchmark run repeats only when this is zero, so the table says it.
"""

from __future__ import annotations

from pathlib import Path

from rose.events import TIMEOUT, append_event
from rose.sim.hosts.drive import timeouts


def test_each_kind_of_timeout_is_counted_and_nothing_else(tmp_path: Path):
    log = tmp_path / "events.jsonl"
    assert timeouts(log) == 0  # no log yet
    append_event(log, "judge", {"call": "relevance", "error": "BackendFailed"})
    append_event(log, "judge", {"call": "relevance", "cached": False})
    append_event(log, "inject", {"degraded": "degraded: no model (down)"})
    append_event(log, "compress", {"result": "failed", "timeouts": 2})  # its replays' own
    assert timeouts(log) == 0
    append_event(log, "judge", {"call": "assess", "error": "BackendTimeout"})
    append_event(log, TIMEOUT, {"what": "replay process"})
    append_event(log, "inject", {"degraded": "out of time: 2 served unjudged"})
    assert timeouts(log) == 3

"""A transcript path from a hook payload cannot hang a hook, fill memory or lose a correction.

Locks in: `/dev/zero` and a FIFO with no writer are refused at once as not regular files
(the Stop hook logs why and exits 0 with nothing on stdout); a 1 GB sparse file is read up
to the cap only by the hook (by a job, until its deadline), and the cut is reported (`cut`,
`unread`, an event and a status-line notice); the next read goes on from where the cut
stopped, so a correction written past the cap is counted; a line longer than the cap is
passed over, not read again forever; a read whose deadline has passed stops before counting
anything and the next one counts it all; a real transcript read under a small cap, read
after read, adds up to reading it whole; a job reads past its cap in further windows, its
lines numbered on, until its deadline; a job whose read a deadline or an over-long line cut
logs it and leaves a status-line notice; `rose status` says in one line what was cut.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from rose.errors import TranscriptError
from rose.events import read_events
from rose.files import notices
from rose.store.facade import Store
from rose.transcripts import bounded as _bounded
from rose.transcripts.transcript import activity, read
from tests._hookrun import run_hook
from tests._transcripts import fixture

SID = "sess-bounded-1"


def _returns(fn, *args, **kwargs):
    """What `fn` returned or raised, failing if it has not returned within 30 s."""
    box: list = []

    def run() -> None:
        try:
            box.append(fn(*args, **kwargs))
        except Exception as exc:
            box.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(30)
    assert box, f"{fn.__name__} blocked"
    return box[0]


def _prompt(text: str) -> bytes:
    rec = {"type": "user", "sessionId": SID, "message": {"role": "user", "content": text}}
    return json.dumps(rec).encode() + b"\n"


def _filler(n: int) -> bytes:
    rec = {"type": "assistant", "sessionId": SID, "message": {"role": "assistant",
           "content": [{"type": "text", "text": "x" * n}]}}  # fmt: skip
    return json.dumps(rec).encode() + b"\n"


def _stop(project: Path, transcript: str) -> tuple[int, str, str]:
    payload = {"session_id": SID, "transcript_path": transcript, "cwd": str(project),
               "hook_event_name": "Stop", "stop_hook_active": False}  # fmt: skip
    code, _out, raw, err = run_hook("stop", payload)
    return code, raw, err


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
def test_dev_zero_is_refused_at_once():
    for fn in (activity, read):
        exc = _returns(fn, "/dev/zero")
        assert isinstance(exc, TranscriptError) and "character device" in exc.reason


def test_a_fifo_with_no_writer_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "session.jsonl"
    os.mkfifo(fifo)
    for fn in (activity, read):
        exc = _returns(fn, fifo)
        assert isinstance(exc, TranscriptError) and "FIFO" in exc.reason
    with pytest.raises(TranscriptError, match="FIFO"):
        _bounded.open_regular(fifo)


def test_a_sparse_gigabyte_is_read_up_to_the_cap(tmp_path):
    path = tmp_path / "session.jsonl"
    with path.open("wb") as f:
        f.truncate(1 << 30)
    act = _returns(activity, path)
    assert act.cut == "cap" and act.user_prompts == 0
    assert act.offset == _bounded.HOOK_BYTES  # one line longer than the cap: passed over
    assert act.unread == (1 << 30) - _bounded.HOOK_BYTES
    t = _returns(read, path, limit=1 << 20, seconds=0.1)  # read on in windows until then
    assert t.cut == "deadline" and t.unread == (1 << 30) - t.offset and not t.steps


def test_a_correction_past_the_cap_is_counted_by_the_next_read(tmp_path):
    path = tmp_path / "session.jsonl"
    path.write_bytes(_prompt("use pip") + _filler(3000) * 4 + _prompt("no, use uv"))
    first = activity(path, limit=5000)
    assert first.cut == "cap" and first.user_prompts == 1 and first.unread > 0
    prompts, offset, reads = first.user_prompts, first.offset, 1
    while True:
        act = activity(path, offset, limit=5000)
        prompts, offset, reads = prompts + act.user_prompts, act.offset, reads + 1
        if not act.cut:
            break
    assert prompts == 2 and offset == path.stat().st_size and reads > 2


def test_a_line_longer_than_the_cap_is_passed_over(tmp_path):
    path = tmp_path / "session.jsonl"
    path.write_bytes(_filler(20_000) + _prompt("no, use uv"))
    offset, prompts = 0, 0
    for _ in range(10):
        act = activity(path, offset, limit=4096)
        assert act.offset > offset or not act.cut
        offset, prompts = act.offset, prompts + act.user_prompts
        if not act.cut:
            break
    assert prompts == 1 and offset == path.stat().st_size


def test_a_passed_deadline_stops_the_read_and_the_next_one_counts_it(tmp_path):
    path = tmp_path / "session.jsonl"
    path.write_bytes(_prompt("first") + _prompt("second"))
    late = activity(path, seconds=0)
    assert late.cut == "deadline" and late.offset == 0 and late.user_prompts == 0
    assert late.unread == path.stat().st_size
    assert read(path, seconds=0).cut == "deadline"
    again = activity(path, late.offset)
    assert not again.cut and again.user_prompts == 2


@pytest.mark.parametrize("name", ["claude-code-2.1.38-tool-heavy-head", "codex-0.171-hand"])
def test_a_real_transcript_read_in_small_pieces_adds_up_to_the_whole(name):
    path = fixture(name)
    whole = activity(path)
    assert not whole.cut and whole.unread == path.stat().st_size - whole.offset
    tools = prompts = offset = 0
    for _ in range(1000):
        act = activity(path, offset, limit=2048)
        tools, prompts, offset = tools + act.tool_calls, prompts + act.user_prompts, act.offset
        if not act.cut:
            break
    assert (tools, prompts, offset) == (whole.tool_calls, whole.user_prompts, whole.offset)
    t = read(path)
    assert not t.cut and t.unread == 0 and t.steps


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
def test_the_stop_hook_logs_a_refused_path_and_exits_quietly(store: Store, project: Path):
    code, raw, _err = _stop(project, "/dev/zero")
    assert code == 0 and raw.strip() == ""
    (event,) = read_events(store.primary.events, kind="transcript-unreadable")
    assert event["session"] == SID and "character device" in event["error"]


def test_the_stop_hook_reports_a_cut_and_reads_on_next_turn(store: Store, project: Path):
    path = project / "session.jsonl"
    with path.open("wb") as f:
        f.truncate(1 << 30)
    code, raw, _err = _stop(project, str(path))
    assert code == 0 and raw.strip() == ""
    (cut,) = read_events(store.primary.events, kind="transcript-cut")
    assert cut["by"] == "cap" and cut["offset"] == 0 and cut["reached"] == _bounded.HOOK_BYTES
    assert cut["unread"] == (1 << 30) - _bounded.HOOK_BYTES and cut["path"] == str(path)
    (notice,) = notices.take([str(store.primary.root)])
    assert "transcript read cut" in notice and "MB left" in notice
    _stop(project, str(path))
    second = read_events(store.primary.events, kind="transcript-cut")[-1]
    assert second["offset"] == _bounded.HOOK_BYTES  # on from where the last read stopped


def test_a_job_reads_past_its_cap_in_windows_with_lines_counted_on(tmp_path, monkeypatch):
    path = tmp_path / "session.jsonl"
    path.write_bytes(_prompt("use pip") + _filler(3000) * 4 + _prompt("no, use uv"))
    from rose.jobs.learning import _byte_range

    whole = read(path)
    last = len(path.read_bytes()) - len(_prompt("no, use uv"))
    assert _byte_range(str(path), last, None) == (6, None)
    monkeypatch.setattr(_bounded, "JOB_BYTES", 5000)
    t = read(path)
    assert not t.cut and t.unread == 0 and t.offset == path.stat().st_size
    assert t.steps == whole.steps and t.steps[-1].text == "no, use uv"
    assert t.steps[-1].line == 6  # numbered from the file's start across windows
    assert _byte_range(str(path), last, None) == (6, None)  # a reflection's stretch, too


def test_a_job_that_reads_a_cut_transcript_logs_the_cut(store: Store, tmp_path, monkeypatch):
    from rose.jobs import learning

    path = tmp_path / "session.jsonl"
    path.write_bytes(_prompt("use pip") + _filler(3000) + _prompt("no, use uv"))
    monkeypatch.setattr(_bounded, "JOB_BYTES", 1000)  # the filler's line is passed over
    t = learning._read(store, str(path), SID)
    assert t is not None and t.cut == "cap" and t.steps[-1].text == "no, use uv"
    (cut,) = read_events(store.primary.events, kind="transcript-cut")
    assert cut["session"] == SID and cut["unread"] == t.unread > 0
    (said,) = notices.take([str(store.primary.root)])
    assert said == f"transcript read by a job cut by its cap, {t.unread} bytes unread"
    monkeypatch.setattr(_bounded, "JOB_SECONDS", 0)
    assert learning._read(store, str(path), SID).cut == "deadline"  # type: ignore[union-attr]
    assert read_events(store.primary.events, kind="transcript-cut")[-1]["by"] == "deadline"
    assert _returns(learning._read, store, "/dev/zero", SID) is None  # refused, logged


@pytest.mark.graph
def test_rose_status_says_in_one_line_what_was_cut(store: Store, project: Path):
    from typer.testing import CliRunner

    from rose.cli import app
    from rose.hooks.nudge import _activity

    assert "\ntranscript " not in CliRunner().invoke(app, ["status"]).output
    path = project / "session.jsonl"
    path.write_bytes(_prompt("use pip") + _filler(3000) + _prompt("no, use uv"))
    root = str(store.primary.root)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_bounded, "HOOK_BYTES", 1000)
        act = _activity(root, SID, str(path), 0)
    assert act is not None and act.cut == "cap"
    assert _activity(root, SID, str(project / "gone.jsonl"), 0) is None  # not there yet
    assert _activity(root, SID, str(project), 0) is None  # a folder: logged
    lines = [ln for ln in CliRunner().invoke(app, ["status"]).output.splitlines()
             if ln.startswith("transcript ")]  # fmt: skip
    assert lines == [
        f"transcript 1 read(s) cut, 1 unreadable; last cut by its cap at byte {act.offset}"
        f" of {path}"
    ]

"""`rose hook <event>`: the entry points Claude Code and Codex run, one short process each.

Import-light by design: a prompt with nothing to decide is answered from the
materialised recall view with the standard library alone. Heavy modules (the
store, the graph engine, the judge) load only when the model must decide.

A hook never breaks the host agent: under ROSE_CHILD=1 it does nothing; on a
malformed payload or any internal error it prints one line for the user, logs an
`error` event, and exits 0. An answer that cannot be written (stdout closed, or a
reader that went away) is logged, never a traceback, and nothing is recorded as served.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path

from rose.events import append_event
from rose.files import notices, scan, sessions
from rose.hosts.payload import Root, host_of, roots_for, session_id
from rose.loop.selection.pack import Pack, load_session, pack, save_session, session_path

EVENTS = ("session-start", "user-prompt-submit", "stop", "pre-compact", "session-end")
_HOST_NAMES = {
    "session-start": "SessionStart",
    "user-prompt-submit": "UserPromptSubmit",
    "stop": "Stop",
    "pre-compact": "PreCompact",
    "session-end": "SessionEnd",
}
USAGE = (
    "usage: rose hook <event>   (events: " + ", ".join(EVENTS) + ")\n"
    "Reads the host's hook payload (JSON) on stdin and answers in the host's format.\n"
    "Wired by `rose install`; run by Claude Code and Codex, not by hand."
)


# A prompt is kept in the session log (and its episode) up to this many characters.
PROMPT_CHARS = 8000


class HookInputError(Exception):
    pass


def _read_payload() -> dict:
    raw = sys.stdin.read() if not sys.stdin.isatty() else ""
    if not raw.strip():
        raise HookInputError("no hook payload on stdin (expected the host's JSON)")
    try:
        payload = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise HookInputError(f"hook payload is not valid JSON ({exc.msg} at {exc.pos})") from None
    except ValueError as exc:  # e.g. an integer longer than Python will convert
        raise HookInputError(f"hook payload is not valid JSON ({exc})") from None
    if not isinstance(payload, dict):
        raise HookInputError("hook payload must be a JSON object")
    return payload


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(USAGE)
        return 0
    event = argv[0]
    if event not in EVENTS:
        print(f"rose hook: unknown event {event!r}\n{USAGE}", file=sys.stderr)
        return 0  # never break the host, even when miswired
    if os.environ.get("ROSE_CHILD") == "1":
        return 0  # a model process ROSE spawned: its hooks must not recurse
    roots: list[Root] = []
    try:
        payload = _read_payload()
        roots = roots_for(payload.get("cwd"))
        out = _HANDLERS[event](payload, roots)
    except Exception as exc:  # the one place that catches everything: the host must not break
        _report_failure(event, exc, roots)
        return 0
    if out:
        _deliver(out)
    return 0


def _deliver(out: dict) -> bool:
    """Write the answer; whether it reached stdout (closed, or its reader gone: it did not)."""
    try:
        if sys.stdout is None:  # started with stdout closed
            return False
        sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
        sys.stdout.flush()
        return True
    except (OSError, ValueError):  # BrokenPipeError; ValueError: the stream was closed
        with contextlib.suppress(OSError, ValueError):  # the flush at exit must not fail again
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return False


def _report_failure(event: str, exc: BaseException, roots: list[Root]) -> None:
    reason = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
    if not roots:  # the payload never said where: log to the store of the working directory
        with contextlib.suppress(Exception):
            roots = roots_for(None)
    if roots:
        where = roots[0].events
    else:
        import tempfile

        where = Path(tempfile.gettempdir()) / "rose-hook-errors.jsonl"
    with contextlib.suppress(OSError):
        append_event(where, "error", {"hook": event, "error": type(exc).__name__, "detail": reason})
    _deliver({"systemMessage": f"ROSE · {event} hook skipped: {reason} (logged)"})


# -- handlers ---------------------------------------------------------------------------------


def _with_session(roots, payload, change) -> None:
    if not roots:
        return
    sid = session_id(payload)
    path = session_path(roots[0].path, sid)
    rec = load_session(path, sid)
    change(rec)
    save_session(path, rec)


def _session_start(payload: dict, roots) -> None:
    def reset(rec: dict) -> None:
        if payload.get("source") in ("clear", "compact", "startup", None):
            rec["served"] = {}  # a fresh or compacted context holds none of what we served
            rec["restored"] = {}
        rec["transcript_path"] = str(payload.get("transcript_path") or "")
        rec.pop("pull", None)  # the host (re)started its MCP servers: asked again

    _with_session(roots, payload, reset)
    if roots and payload.get("source") in ("clear", "compact"):
        sessions.append(roots[0].path, session_id(payload), "compact", source=payload["source"])


def _pre_compact(payload: dict, roots) -> None:
    """Forget what is fresh in context; the session log keeps everything that was served."""
    _with_session(roots, payload, lambda rec: rec.update(served={}, restored={}))
    if roots:
        sessions.append(roots[0].path, session_id(payload), "compact", source="pre-compact")


def _stop(payload: dict, roots) -> dict | None:
    """Count the stop; absorb each unit of work once complete (a later prompt began); then
    start a reflection when the turns since the last one had enough substance
    (`rose.hooks.nudge`). Only `reflect.mode: block` answers the host."""
    if not roots:
        return None
    ready: list[int] = []

    def count(rec: dict) -> None:
        rec["stops"] = int(rec.get("stops", 0)) + 1
        complete = int(rec.get("turn", 0)) - 1  # the latest prompt's unit is still open
        if complete > int(rec.get("absorbed", 0)):
            rec["absorbed"] = complete
            ready.append(complete)

    _with_session(roots, payload, count)
    sid = session_id(payload)
    from rose.hooks.nudge import on_stop
    from rose.jobs.queue import submit  # settings and the job runner: off the prompt path

    if ready:
        transcript = str(payload.get("transcript_path") or "")
        job = {"session": sid, "final": False, "transcript": transcript}
        submit(roots[0].store(), "absorb", job, key=f"{sid}:{ready[0]}")
    answer: list[dict] = []
    _with_session(roots, payload, lambda rec: answer.append(on_stop(payload, roots, rec) or {}))
    return answer[0] if answer and answer[0] else None


def _session_end(payload: dict, roots) -> None:
    """Hand off to a detached job at once: the host allows all SessionEnd hooks ~1.5 s.

    The key is the session and its turn count: a resumed session that ends again after more
    turns is logged again, the same end reported twice is not. With no store at all, the
    global store is made to hold the job: a session is never learnt from by nobody.
    """
    from rose.jobs.queue import submit  # only this hook submits: keep it off the prompt path

    if not roots:
        if not payload.get("transcript_path"):
            return  # nothing to learn from
        # ROSE installed for the user, and no store yet: the global one holds the job (and,
        # once a lesson is found, `rose.loop.reflection.consolidate` creates the store it belongs
        # in).
        from rose.files.layout import global_root

        roots = [Root(str(global_root()), "global")]
        roots[0].store().create()
    sid = session_id(payload)
    turns = load_session(session_path(roots[0].path, sid), sid).get("turn", 0)
    submit(roots[0].store(), "session-end", payload, key=f"{sid}:{turns}")


def _read_view(roots) -> tuple[dict | None, bool]:
    """The last complete recall view (written whole, by rename) and whether it is current.

    A writer may finish between the read and the check (its files then look newer than the
    view read before it): a view that looks stale is read again once if it was replaced
    meanwhile, rather than sending the prompt down the slow path to rebuild it."""
    path = os.path.join(roots[0].path, "recall-view.json")
    view = None
    for _ in range(2):
        before = scan.file_identity(path)
        view = _view_file(roots)
        if view is None:
            return None, False
        if _current(view, roots):
            return view, True
        if scan.file_identity(path) == before:
            break
    return view, False


def _view_file(roots) -> dict | None:
    """The last complete recall view, unchecked (None when missing or unreadable)."""
    try:
        with open(os.path.join(roots[0].path, "recall-view.json"), encoding="utf-8") as fh:
            view = json.load(fh)
    except (OSError, ValueError):
        return None
    return view if isinstance(view, dict) else None


def _current(view: dict, roots) -> bool:
    """Whether the view matches the files and settings as they are now. Folders that did not
    change since the last scan kept beside the database are not listed again (each file is
    still stat'ed): at 10,000 lessons that is ~15 ms of the check."""
    if "whole" not in view:  # built before `recall.whole_tokens`, under another gate
        return False
    name = view.get("kept_scan")
    kept = None
    if isinstance(name, str) and name and os.path.basename(name) == name:
        kept = scan.read_kept(os.path.join(roots[0].path, name))
    if view.get("stamp") != scan.stamp(scan.survey(roots, episodes=False, prev=kept), roots):
        return False
    for key, env, least in (("budget", "ROSE_RECALL_MAX_PACK_TOKENS", 0),
                            ("whole", "ROSE_RECALL_WHOLE_TOKENS", 0),
                            ("fresh_turns", "ROSE_RECALL_STAYS_FRESH_TURNS", 1)):  # fmt: skip
        value = _env_int(env)
        if value is not None and value >= least and value != view.get(key):
            return False  # an invalid value is ignored, as the config loader ignores it
    # An override of the switch itself: let the full path read it.
    return not os.environ.get("ROSE_RECALL_ENABLED")


def _env_int(name: str) -> int | None:
    """The variable's value when it is a whole number ("12", "12.0"), else None."""
    raw = os.environ.get(name, "").strip()
    try:
        return int(raw)
    except ValueError:
        pass
    try:
        number = float(raw)
    except ValueError:
        return None
    return int(number) if number.is_integer() else None


def _writer_active(root: str) -> bool:
    """Whether another live process holds the store's graph database (it is writing). A
    graph server holds it between sessions too: only one in a session counts (its
    `<db>.serving-<pid>` note, `rose.graph.server`); an idle one answers this hook."""
    for name in ("graph.kuzu", "graph.lbug"):
        try:
            with open(os.path.join(root, name + ".holder"), encoding="utf-8") as fh:
                info = json.load(fh)
            pid = int(info["pid"])
            if pid == os.getpid():
                continue
            os.kill(pid, 0)
            if info.get("serve") and not os.path.exists(
                os.path.join(root, f"{name}.serving-{pid}")
            ):
                continue
            return True
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return False


def _servable(view: dict | None) -> bool:
    """A view the fast path can answer from without the graph: empty, or all of it fits."""
    return view is not None and bool(view.get("empty") or view.get("fits"))


def _patched(result, restored: list[dict]) -> dict[str, list[str]]:
    """The patches each lesson served in full carried (a refresher shows none of them), and
    what descent restored to a lesson this session, served now or before."""
    patched = {i["id"]: list(i["patch_ids"]) for i in result.full if i.get("patch_ids")}
    for r in restored:
        if r["patch"] not in patched.setdefault(r["lesson"], []):
            patched[r["lesson"]].append(r["patch"])
    return patched


def _user_prompt_submit(payload: dict, roots) -> dict | None:
    if not roots:
        return None
    prompt = str(payload.get("prompt") or payload.get("user_prompt") or "")
    sid = session_id(payload)
    chosen_for = _choose(prompt, roots, payload.get("cwd"), sid)
    if chosen_for is None:
        return None  # recall is switched off
    view, chosen, note, selection = chosen_for
    late = selection.pop("late", None)  # questions past the deadline: answered after all
    here = str(payload.get("cwd") or "") or None  # a notice about another folder waits
    kept = notices.take([r for r, _ in roots], here)  # what a detached job did since: once
    if kept:
        note = " · ".join([*kept, note] if note else kept)
    path = session_path(roots[0].path, sid)
    rec = load_session(path, sid)
    rec["turn"] = int(rec.get("turn", 0)) + 1
    restored = sessions.restored(roots[0].path, sid)  # descent, for the rest of this session
    host = host_of(payload)
    view = _headed(view, rec, host, payload.get("cwd"))
    result = pack(view, chosen, rec, turn=rec["turn"], host=host, restored=restored)
    result.note = note

    def record() -> None:
        """What the host now has: kept only once the answer is written."""
        save_session(path, rec)
        # A unit of work begins: the session log keeps what it had in context, for its episode.
        in_context = [i["id"] for i in (*result.full, *result.refreshed, *result.fresh)]
        # one fresh through the lessons it was made from: those are what the context holds
        in_context = [j for i in in_context for j in result.held.get(i, [i])]
        in_context = list(dict.fromkeys(in_context))
        # A lesson something was restored to is in context whether or not recall chose it.
        in_context += [r["lesson"] for r in restored if r["lesson"] not in in_context]
        unit = {"turn": rec["turn"], "prompt": prompt[:PROMPT_CHARS], "served": in_context}
        patched = _patched(result, restored)
        if patched:
            unit["patched"] = patched
        # How recall chose (for precision by mode): all fit, the model chose, or it fell back.
        fell_back = any(part.startswith("degraded:") for part in note.split(" · "))
        mode = "fits" if view.get("fits") else "degraded" if fell_back else "judged"
        unit["recall"] = "" if view.get("empty") else mode
        # How recall's selection went: the rules it was given (each rule's record), the
        # lessons they turned away and those left out for the budget (a miss's evidence).
        unit.update((k, v) for k, v in selection.items() if v)
        sessions.append(roots[0].path, sid, "prompt", **unit)
        if late:
            _answer_late(roots, sid, rec["turn"], late)
        if chosen:
            append_event(roots[0].events, "inject", _inject_event(sid, result))

    if not chosen and not result.block:
        record()
        return _nothing_served(note, kept, empty=bool(view.get("empty")), turn=rec["turn"])
    out: dict = {"systemMessage": result.status}
    if result.block:
        out["hookSpecificOutput"] = {
            "hookEventName": _HOST_NAMES["user-prompt-submit"],
            "additionalContext": result.block,
        }
    if not _deliver(out):  # the host never got it: nothing is served, nothing recorded
        _log_error(roots, "AnswerNotWritten", "stdout closed: nothing recorded as served")
        return None
    try:
        record()
    except Exception as exc:  # the answer is out: a second line would break the host's JSON
        _log_error(roots, type(exc).__name__, str(exc).splitlines()[0][:200] if str(exc) else "")
    return None  # answered above


EMPTY_NOTE = "on, no lessons yet (rose add, or work and correct the agent)"


def _nothing_served(note: str, kept: list[str], *, empty: bool, turn: int) -> dict | None:
    """The status line of a prompt that got no lessons: what a job did since, if anything,
    and once a session, over an empty store, that ROSE is on and has nothing yet."""
    if empty and turn == 1:
        return {"systemMessage": "ROSE · " + " · ".join(p for p in (EMPTY_NOTE, note) if p)}
    return {"systemMessage": f"ROSE · {note}"} if kept else None


def _answer_late(roots, sid: str, turn: int, questions: list) -> None:
    """Hand the relevance questions that ran out of time to a job that asks them again, for
    the session's next prompt (`rose.loop.selection.late`)."""
    from rose.jobs.queue import submit

    payload = {"session": sid, "turn": turn, "questions": questions}
    store = roots[0].store()
    submit(store, "relevance-late", payload, key=f"{sid}:late:{turn}")


def _headed(view: dict, rec: dict, host: str, cwd: object) -> dict:
    """The view with the head the block opens with: the one that tells the agent it can pull
    more when the host runs ROSE's MCP server. Asked once a session (kept in the session
    record until the next SessionStart): a host starts its MCP servers with the session."""
    if "pull" not in rec:
        rec["pull"] = _pull(host, cwd)
    return {**view, "head": view["head_pull"]} if rec["pull"] and view.get("head_pull") else view


def _pull(host: str, cwd: object) -> bool:
    """Whether `host` runs ROSE's MCP server for this session (rose/hosts/mcp_wiring.py)."""
    from rose.hosts import mcp_wiring

    try:
        return mcp_wiring.registered(host, cwd if isinstance(cwd, str) else None)
    except Exception:  # an unreadable config: the block just does not mention the tools
        return False


def _choose(prompt: str, roots, cwd, sid: str = "") -> tuple[dict, list[dict], str, dict] | None:
    """The view, the lessons recall chose for the prompt, a note and how its selection went
    (`RecallResult.selection`; empty on the fast path: nothing was selected); None when
    recall is off."""
    view, current = _read_view(roots)
    note = ""
    last = view if _servable(view) else None  # the last complete view, maybe one write old
    if not current and last is not None and _writer_active(roots[0].path):
        current, note = True, "as of the last write (a change is in progress)"
    if view is not None and current and not view.get("enabled", True):
        return None
    if current and view is not None and _servable(view):
        return view, [] if view.get("empty") else view["lessons"], note, {}
    from rose.errors import StoreLocked

    selection: dict = {}
    try:
        view, chosen, note, selection = _recall(prompt, roots, cwd, sid)
    except StoreLocked:
        if last is None:
            raise
        view, note = last, "as of the last write (the store is busy)"
        chosen = [] if last.get("empty") else last["lessons"]
    if not view or not view.get("enabled", True):
        return None
    from rose.files.notices import take_notices  # what the slow path repaired (a rebuilt index)

    repaired = take_notices()
    return view, chosen, " · ".join([*repaired, note] if note else repaired), selection


def _recall(prompt: str, roots, cwd, sid: str = "") -> tuple[dict, list[dict], str, dict]:
    """The slow path, in this process: the store, the graph (through its server when one
    is up) and the judge."""
    from rose.loop.selection.recall import recall_for_hook  # the slow path: store, graph, judge

    return recall_for_hook(prompt, roots, cwd, sid)


def _inject_event(sid: str, result: Pack) -> dict:
    return {
        "session": sid,
        "full": [i["id"] for i in result.full],
        "refreshed": [i["id"] for i in result.refreshed],
        "fresh": len(result.fresh),
        "deferred": [i["id"] for i in result.deferred],
        "too_big": [i["id"] for i in result.too_big],
        "host": result.host,
        "tokens": result.tokens,
        "size": result.size,
        "degraded": result.note,
    }


def _log_error(roots, error: str, detail: str) -> None:
    with contextlib.suppress(OSError):
        event = {"hook": "user-prompt-submit", "error": error, "detail": detail}
        append_event(roots[0].events, "error", event)


_HANDLERS = {
    "session-start": _session_start,
    "user-prompt-submit": _user_prompt_submit,
    "stop": _stop,
    "pre-compact": _pre_compact,
    "session-end": _session_end,
}

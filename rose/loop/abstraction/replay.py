"""Replay: a candidate lesson's probe on a recorded episode, judged against the original's.

For each episode the reference is the probe of the lesson the candidate would replace, on
the same prompt (DESIGN.md, "Replay judges a candidate against the form it replaces"); the
candidate's own probe is asked by a `Prober`. The real one is `FreshProcess`: a separate
`python -m rose.loop.abstraction.replay` that reads its input as JSON on stdin, is shown the
candidate and the prompt and nothing else (never the verbose lesson, never the store), and prints
the approach as JSON. Tests may inject `in_process(judge)`.

Counterfactual attribution probes a prompt with several lessons, or none: a `SetProber`,
`FreshProcess.probe_set` in a fresh process (shown those lessons and the prompt, nothing
else), `in_process_set(judge)` in tests.

An unreadable or failed probe or judgement is a failed replay, never a pass. It is no
verdict either: `Replayed.error` names what failed (`BackendTimeout` when a process gave
no answer in time), and a stage that replays decides nothing on it (`undecided`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from rose.errors import MODEL_FAILURES, BackendFailed, BackendTimeout, RoseError
from rose.judge import models as m
from rose.judge.base import COUNTERFACTUAL_PROBE, REPLAY_JUDGE, REPLAY_PROBE, Judge
from rose.models import Node

if TYPE_CHECKING:
    from rose.store.facade import Row, Store

#: (candidate lesson, prompt) -> the approach it leads to; raises on any failure.
Prober = Callable[[m.Lesson, str], str]

#: (the lessons shown, perhaps none; prompt) -> the approach they lead to; raises on failure.
SetProber = Callable[[Sequence[m.Lesson], str], str]

#: Seconds the fresh process may take beyond the judge's own timeout (start-up, imports).
START_S = 30.0


class Case(BaseModel):
    """A recorded episode to replay: its prompt and what was accepted."""

    model_config = ConfigDict(frozen=True)

    episode: str
    prompt: str
    accepted: str


class Replayed(BaseModel):
    """One replay's verdict; `reason` says what was missing when it failed."""

    episode: str
    passed: bool
    reason: str
    prompt: str = ""
    error: str = ""  # the failure's type when the replay itself could not run, else ""


def cases(rows: Sequence[Row]) -> list[Case]:
    """The replayable episodes of a `regression_set` answer: those with a prompt and an
    accepted outcome."""
    return [
        Case(episode=r["id"], prompt=r["prompt"], accepted=r["accepted_summary"])
        for r in rows
        if r["prompt"] and r["accepted_summary"]
    ]


def lesson(node: Node) -> m.Lesson:
    """A stored lesson as the judge is shown it in full."""
    return m.Lesson(id=node.id, title=node.title, gist=node.gist, body=node.body)


def in_process(judge: Judge) -> Prober:
    """A prober asking `judge` in this process (tests: the real one is `FreshProcess`)."""

    def probe(lesson: m.Lesson, prompt: str) -> str:
        ctx = m.ReplayProbeContext(prompt=prompt, lesson=lesson)
        return str(judge.ask(REPLAY_PROBE, ctx).approach)

    return probe


def in_process_set(judge: Judge) -> SetProber:
    """A set prober asking `judge` in this process (tests: the real one is `FreshProcess`)."""

    def probe(lessons: Sequence[m.Lesson], prompt: str) -> str:
        ctx = m.CounterfactualProbeContext(prompt=prompt, lessons=list(lessons))
        return str(judge.ask(COUNTERFACTUAL_PROBE, ctx).approach)

    return probe


class FreshProcess:
    """A prober that asks each probe in a new `rose` process which sees only the candidate."""

    def __init__(
        self,
        agent: str,
        model: str = "",
        *,
        cache: Path | None = None,
        events: Path | None = None,
        timeout_s: float = 20,
    ):
        self.agent, self.model = agent, model
        self.cache, self.events = cache, events
        self.timeout_s = timeout_s

    @classmethod
    def for_store(cls, store: Store, *, timeout_s: float = 20) -> FreshProcess:
        cfg = store.config
        return cls(
            cfg.agent,
            cfg.model,
            cache=store.primary.judge_cache,
            events=store.primary.events,
            timeout_s=timeout_s,
        )

    def __call__(self, lesson: m.Lesson, prompt: str) -> str:
        return self._ask({"prompt": prompt, "lesson": lesson.model_dump()})

    def probe_set(self, lessons: Sequence[m.Lesson], prompt: str) -> str:
        """The approach `lessons` (perhaps none) lead to on `prompt`: a `SetProber`."""
        return self._ask({"prompt": prompt, "lessons": [x.model_dump() for x in lessons]})

    def _ask(self, probe: dict[str, Any]) -> str:
        request = {
            "agent": self.agent,
            "model": self.model,
            "cache": str(self.cache) if self.cache else "",
            "events": str(self.events) if self.events else "",
            "timeout_s": self.timeout_s,
            **probe,
        }
        env = {**os.environ, "ROSE_CHILD": "1"}
        argv = [sys.executable, "-m", "rose.loop.abstraction.replay"]
        try:
            done = subprocess.run(
                argv,
                input=json.dumps(request),
                capture_output=True,
                text=True,
                env=env,
                timeout=self.timeout_s + START_S,
                check=False,
            )
        except subprocess.TimeoutExpired:
            late = BackendTimeout("replay process", self.timeout_s + START_S)
            if self.events:  # logged here: no judge in this process saw the call
                from rose.events import TIMEOUT, append_event

                append_event(self.events, TIMEOUT, {"what": "replay process", "detail": str(late)})
            raise late from None
        try:
            answer = json.loads(done.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            tail = (done.stderr or done.stdout).strip()[-300:]
            raise BackendFailed(
                "replay", f"the replay process exited {done.returncode}: {tail}"
            ) from None
        if not isinstance(answer, dict) or not answer.get("approach"):
            raise BackendFailed("replay", str(answer.get("error", answer))[:300])
        return str(answer["approach"])


def replay(
    judge: Judge, prober: Prober, original: m.Lesson, candidate: m.Lesson, cases: Sequence[Case]
) -> list[Replayed]:
    """Each case replayed: the reference probe, the candidate's probe, the judge."""
    out = []
    for case in cases:
        try:
            reference = in_process(judge)(original, case.prompt)
            approach = prober(candidate, case.prompt)
            ctx = m.ReplayJudgeContext(
                prompt=case.prompt, accepted=case.accepted, approach=approach, reference=reference
            )
            verdict = judge.ask(REPLAY_JUDGE, ctx)
        except (*MODEL_FAILURES, RoseError) as exc:
            reason, error = f"replay failed: {exc}", type(exc).__name__
            out.append(Replayed(episode=case.episode, passed=False, reason=reason, error=error))
            continue
        passed = verdict.verdict == "pass"
        out.append(
            Replayed(episode=case.episode, passed=passed, reason=verdict.reason, prompt=case.prompt)
        )
    return out


def _child(request: dict[str, Any]) -> dict[str, Any]:
    """The fresh process's work: one probe (of a candidate, or of a set of lessons)."""
    from rose.judge import calls
    from rose.model.registry import make_backend

    backend = make_backend(str(request["agent"]), model=str(request.get("model") or "") or None)
    judge = calls.Judge(
        backend,
        cache_path=Path(request["cache"]) if request.get("cache") else None,
        events_path=Path(request["events"]) if request.get("events") else None,
        model_name=str(request.get("model") or ""),
        timeout_s=float(request.get("timeout_s") or 20),
    )
    prompt = str(request["prompt"])
    if "lessons" in request:
        shown = [m.Lesson.model_validate(x) for x in request["lessons"]]
        return {"approach": in_process_set(judge)(shown, prompt)}
    lesson = m.Lesson.model_validate(request["lesson"])
    return {"approach": in_process(judge)(lesson, prompt)}


def main() -> int:
    try:
        answer = _child(json.loads(sys.stdin.read()))
    except (RoseError, ValueError, KeyError, TypeError) as exc:
        print(json.dumps({"error": f"{type(exc).__name__}: {exc}"[:500]}))
        return 1
    print(json.dumps(answer))
    return 0


if __name__ == "__main__":
    sys.exit(main())


def hints(failed: Sequence[Replayed], *, have: Sequence[str] = ()) -> list[str]:
    """Preserve hints from failed replays: what the judge found missing, with the task; each
    once, none already in `have`. A replay that itself failed says nothing about the lesson."""
    out: list[str] = []
    for r in failed:
        if not r.prompt:
            continue
        hint = f"{r.reason.strip()} (task: {' '.join(r.prompt.split())[:160]})"
        if hint not in have and hint not in out:
            out.append(hint)
    return out


def _unrun(replays: Sequence[Replayed]) -> tuple[int, int]:
    """(replays that could not run, of them those that timed out)."""
    errors = [r.error for r in replays if r.error]
    return len(errors), errors.count("BackendTimeout")


def undecided(replays: Sequence[Replayed]) -> str:
    """Why the replays decide nothing, or "": some could not run and none of the rest
    failed. A stage then fails the attempt and counts it as no attempt (the lesson is tried
    again when next due), rather than reject a candidate on the machine's speed or a broken
    process; a replay that ran and failed still rejects it."""
    unrun, timeouts = _unrun(replays)
    if not unrun or any(not r.passed and not r.error for r in replays):
        return ""
    late = f", {timeouts} timed out" if timeouts else ""
    return f"{unrun} of {len(replays)} replays could not run{late}: nothing decided"


def unrun_fields(replays: Sequence[Replayed]) -> dict[str, int]:
    """An event's count of replays that could not run, and of them those that timed out."""
    unrun, timeouts = _unrun(replays)
    return {"unrun": unrun, "timeouts": timeouts}


def failed(replays: Sequence[Replayed]) -> list[Replayed]:
    """The replays that ran and failed: verdicts against the lesson (one that could not run
    is none)."""
    return [r for r in replays if not r.passed and not r.error]


def held_out(replays: Sequence[Replayed]) -> dict[str, int]:
    """Held-out replays as passed of total; one that could not run says nothing of the
    lesson and is counted apart (`unrun`), never as a failure."""
    ran = [r for r in replays if not r.error]
    out = {"passed": sum(r.passed for r in ran), "total": len(ran)}
    if len(ran) < len(replays):
        out["unrun"] = len(replays) - len(ran)
    return out

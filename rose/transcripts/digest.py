"""The digest of a transcript: what a background reflector reads of a unit of work.

One line a step, each opening with the prefix other code reads it by: ``User: `` (a
prompt or correction), ``Agent: `` (a message, or reasoning as ``Agent: (thinking) ``),
``Tool: <name> <input>`` with `` (failed: <error>)`` when it failed; a subagent's step
is its line behind ``Subagent: `` (``Subagent: Tool: Grep flaky``). Every text passes
through `rose.redaction.redact` first, so no secret a session held reaches a model or a file.

A long session does not fit a reflector's prompt, so the digest keeps to a token budget
by keeping what tells most about what happened: every prompt and correction (the task
and what the person had to say), failed calls with their errors, the lines that cite a
lesson, the final message; then the rest, most recent first. What it leaves out is one
``[… N steps left out …]`` line in its place, so the order of what is kept still reads.

Subagents' work is dropped first, so that a session that delegated much cannot crowd out
the person's prompts and corrections: their failed calls come after the session's own
failures, citations and final message, and take at most `SUBAGENT_SHARE` of the budget
there; the rest of their steps come after everything of the session's own.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rose import tokens
from rose.redaction.redact import redact
from rose.transcripts._records import cut
from rose.transcripts.transcript import Step, Transcript

PREFIX = {"prompt": "User: ", "agent": "Agent: ", "reasoning": "Agent: ", "tool": "Tool: "}
SUBAGENT = "Subagent: "
#: The share of the budget subagents' failed calls may take ahead of the session's routine
#: steps: enough for a few errors, never the room the session's own work needs.
SUBAGENT_SHARE = 0.25
THINKING = "(thinking) "
# A lesson id as the injected block shows it: `n_` and a unique prefix of its hex.
CITED = re.compile(r"(?<![\w-])n_[0-9a-f]{4,}(?![\w-])")
# The longest a line of each kind may be, in characters, before it is cut.
LINE_CHARS = {"prompt": 2000, "agent": 1200, "reasoning": 600, "tool": 400}
FINAL_CHARS = 2400  # the final message says how the work ended: it may be longer
BUDGET = 3000


@dataclass
class Digest:
    host: str
    version: str
    user_prompts: list[str]
    tool_calls: int
    failed_tool_calls: int
    cited: list[str]  # lesson ids the agent cited in its own words, first mention first
    tokens: int
    text: str
    skipped: int = 0  # transcript lines that were not records ROSE knows
    steps: int = 0  # steps in the unit, whether the text kept them or not
    left_out: int = field(default=0, repr=False)  # steps the budget left out of `text`

    def to_json(self) -> dict[str, Any]:
        return {
            "host": self.host,
            "version": self.version,
            "user_prompts": list(self.user_prompts),
            "tool_calls": self.tool_calls,
            "failed_tool_calls": self.failed_tool_calls,
            "cited": list(self.cited),
            "tokens": self.tokens,
            "digest": self.text,
            "skipped": self.skipped,
            "steps": self.steps,
        }


def _clean(text: str) -> str:
    return " ".join(redact(text).split())


def line_of(step: Step, *, final: bool = False) -> str:
    """`step` as its digest line: prefixed, redacted, on one line, cut to its kind's length."""
    limit = FINAL_CHARS if final else LINE_CHARS.get(step.kind, LINE_CHARS["agent"])
    if step.kind == "tool":
        said = " ".join(p for p in (_clean(step.name), _clean(step.text)) if p)
        if step.failed:
            error = cut(_clean(step.error), 300)
            said += f" (failed: {error})" if error else " (failed)"
        line = PREFIX["tool"] + cut(said, limit)
    else:
        body = cut(_clean(step.text), limit)
        if step.kind == "reasoning":
            body = THINKING + body
        line = PREFIX.get(step.kind, PREFIX["agent"]) + body
    return SUBAGENT + line if step.subagent else line


def cited(steps: Sequence[Step]) -> list[str]:
    """Lesson ids in the agent's own messages, reasoning and tool inputs, never in what the
    person wrote or the host injected."""
    found: dict[str, None] = {}
    for step in steps:
        if step.kind != "prompt":
            found.update(dict.fromkeys(CITED.findall(redact(step.text))))
    return list(found)


def _mark(n: int) -> str:
    return f"[… {n} step{'' if n == 1 else 's'} left out …]"


_MARK_COST = tokens.count(_mark(99999)) + 1
_SHORTEST = 30  # tokens: a prompt, failure or final message cut shorter says too little


def _keep(steps: Sequence[Step], lines: list[str], budget: int) -> list[bool]:
    """Which lines fit `budget`, the most informative first (see the module docstring).

    A prompt, failure, citation or final message too long for what is left is cut to fit
    (in `lines`) rather than left out."""
    n = len(lines)
    cost = [tokens.count(line) + 1 for line in lines]
    if sum(cost) <= budget:
        return [True] * n
    rank = _ranks(steps, lines)
    kept = [False] * n
    total = _MARK_COST  # all left out: one mark
    share = int(budget * SUBAGENT_SHARE)  # what subagents' failures may still take

    def place(i: int, cap: int) -> bool:
        nonlocal total
        left = i == 0 or kept[i - 1]
        right = i == n - 1 or kept[i + 1]
        change = -1 if left and right else 1 if not left and not right else 0
        room = min(budget - total - change * _MARK_COST, cap)
        if cost[i] > room and rank[i][0] < 2 and room >= _SHORTEST:
            lines[i] = cut(lines[i], (room - 1) * 4)  # too long to keep whole: keep its start
            cost[i] = tokens.count(lines[i]) + 1
        if cost[i] > room:
            return False
        kept[i] = True
        total += cost[i] + change * _MARK_COST
        return True

    later: list[int] = []  # subagents' steps: their failures over the share, then the rest
    for i in sorted(range(n), key=rank.__getitem__):
        if rank[i][0] == 3:
            later.append(i)
        elif not steps[i].subagent:
            place(i, budget)
        elif place(i, share):
            share -= cost[i]
        else:
            later.append(i)
    for i in later:
        place(i, budget)
    return kept


def _ranks(steps: Sequence[Step], lines: Sequence[str]) -> list[tuple[int, int, int]]:
    """Each line's place in the order lines are kept in, first first (lowest)."""
    first = next((i for i, s in enumerate(steps) if s.kind == "prompt"), -1)
    final = _final(steps)
    out = []
    for i, s in enumerate(steps):
        if s.subagent:
            out.append((1, 3, -i) if s.kind == "tool" and s.failed else (3, 0, -i))
        elif s.kind == "prompt":
            out.append((0, 0 if i == first else 1, -i))
        elif s.kind == "tool" and s.failed:
            out.append((1, 0, -i))
        elif CITED.search(lines[i]):
            out.append((1, 1, -i))
        elif i == final:
            out.append((1, 2, -i))
        else:
            out.append((2, 0, -i))
    return out


def _final(steps: Sequence[Step]) -> int:
    """The index of the session's own last message (-1 if none): how its work ended."""
    talk = [i for i, s in enumerate(steps) if s.kind == "agent" and not s.subagent]
    return talk[-1] if talk else -1


def _render(lines: list[str], kept: list[bool]) -> str:
    out: list[str] = []
    run = 0
    for line, keep in zip(lines, kept, strict=True):
        if keep:
            if run:
                out.append(_mark(run))
                run = 0
            out.append(line)
        else:
            run += 1
    if run:
        out.append(_mark(run))
    return "\n".join(out)


def build(
    unit: Transcript | Sequence[Step],
    *,
    host: str = "",
    version: str = "",
    budget_tokens: int = BUDGET,
) -> Digest:
    """The digest of a transcript, or of one unit of its steps (`transcript.units`) with the
    host and version given, in about `budget_tokens` tokens."""
    skipped = 0
    if isinstance(unit, Transcript):
        host, version, skipped = host or unit.host, version or unit.version, unit.skipped
        steps: Sequence[Step] = unit.steps
    else:
        steps = unit
    final = _final(steps)
    lines = [line_of(s, final=i == final) for i, s in enumerate(steps)]
    kept = _keep(steps, lines, budget_tokens)
    text = _render(lines, kept)
    return Digest(
        host=host,
        version=version,
        user_prompts=[
            ln[len(PREFIX["prompt"]) :]
            for s, ln in zip(steps, lines, strict=True)
            if s.kind == "prompt"
        ],
        tool_calls=sum(s.kind == "tool" for s in steps),
        failed_tool_calls=sum(s.kind == "tool" and s.failed for s in steps),
        cited=cited(steps),
        tokens=tokens.count(text),
        text=text,
        skipped=skipped,
        steps=len(steps),
        left_out=kept.count(False),
    )

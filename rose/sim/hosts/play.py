"""The simulated world's side of a real host's conversation: the agent, or the judge.

A host (the Claude Code or Codex CLI) sends the loopback server (`rose.sim.hosts.loopback`) the
whole conversation on every request. `Player.reply` reads it as a model reads words, and
plays one of two parts:

- **The judge**, when something the user said is one of ROSE's prompts (its
  template's opening words, `call_of`): the question is answered by
  `rose.sim.model.backend.SimulatedBackend`, from the prompt alone, exactly as the simulated
  backend answers it inside the test suite (so the world's rules live there, not here).
  The answer goes back as structured output where the host asked for it.
- **The agent**, when the user's words are one of the world's tasks (`task_of`): the
  attempt is `rose.sim.agent.Agent.solve` on every user and context message the host sent
  (ROSE's injected block included, however the host wraps it), never on the agent's own
  words or tool results. The attempt's lines become what a working agent sends: its
  reasoning as text, each tool line as one shell command (a failed check exits 1, so the
  host records a failed call), all in one turn; once their results are back, the
  attempt's report (done, or the symptoms of what went wrong) ends the turn.

Anything else gets one plain sentence, so the host's own side questions never hang.
Everything is a pure function of the conversation, so a host that resends it gets the
same reply.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from rose.sim.agent import Agent, Turn
from rose.sim.hosts.transcript import FAILED
from rose.sim.markers import strip
from rose.sim.model.backend import SimulatedBackend
from rose.sim.world import Task, World

#: What the player says when the conversation is neither a task nor a question of ROSE's.
IDLE = "(the simulated world has nothing to say to this)"
#: The tools a host offers for running a shell command, and how each takes the command.
SHELLS = ("Bash", "exec_command", "shell_command", "shell")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Message:
    role: str  # "user", "context" (a system or developer message), "assistant", "tool"
    text: str


@dataclass(frozen=True)
class Conversation:
    """What a host sent, whatever its wire: the messages, the tools, the answer schema."""

    messages: tuple[Message, ...]
    tools: tuple[str, ...] = ()  # the names of the tools offered
    schema: dict[str, Any] | None = None  # the schema a structured answer must fit


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Reply:
    role: str  # what was played: "judge", "agent" or "idle"
    text: str = ""
    calls: tuple[ToolCall, ...] = ()
    answer: dict[str, Any] | None = None  # a judgement, when the host asked for a structure
    call: str = ""  # the judge's call
    task: str = ""  # the agent's task
    ok: bool | None = None  # the agent's attempt held (its final report only)
    missing: tuple[str, ...] = ()  # what it lacked (the world's truth, which the user knows)

    def summary(self) -> dict[str, Any]:
        """What the server's log keeps of the reply."""
        out: dict[str, Any] = {"role": self.role}
        for key in ("call", "task"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        if self.ok is not None:
            out["ok"] = self.ok
        if self.missing:
            out["missing"] = list(self.missing)
        if self.text:
            out["text"] = self.text
        if self.calls:
            out["calls"] = [{"name": c.name, "arguments": c.arguments} for c in self.calls]
        if self.answer is not None:
            out["answer"] = self.answer
        return out


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


@lru_cache(maxsize=1)
def _heads() -> dict[str, re.Pattern[str]]:
    """Each call's template up to its first Jinja tag (the words every prompt of it opens
    with), as a pattern that allows any whitespace between the words."""
    from rose.judge.calls import CALLS
    from rose.prompt_files import template_text

    heads = {}
    for name in CALLS:
        source = template_text(name)
        cut = min((i for i in (source.find("{{"), source.find("{%")) if i >= 0), default=-1)
        words = (source[:cut] if cut >= 0 else source).split()
        if words:
            heads[name] = re.compile(r"\s+".join(map(re.escape, words)))
    return heads


def call_of(prompt: str, schema: dict[str, Any] | None = None) -> tuple[str, str] | None:
    """(the call, the prompt from its opening words on) when `prompt` is one of ROSE's
    questions: the call whose template's opening words it holds (the longest such opening,
    since two calls may share a first sentence) and whose answer has the properties of
    `schema`, when one is given. A host may put its own reminders before the prompt: they
    are left out of what the judge reads."""
    from rose.judge.calls import schema_of

    found = []
    for name, head in _heads().items():
        at = head.search(prompt)
        if at is None:
            continue
        if schema is not None and set(schema.get("properties") or {}) != set(
            schema_of(name).get("properties") or {}
        ):
            continue
        found.append((len(head.pattern), name, at.start()))
    if not found:
        return None
    _, name, start = max(found)
    return name, prompt[start:]


def task_of(world: World, text: str) -> Task | None:
    """The task `text` is about: the one whose marker it carries, else the one whose words
    (as a person types them, without the marker) it holds, when no other task's do."""
    marked = world.task_in(text)
    if marked is not None:
        return marked
    plain = _norm(text)
    hits = [t for t in world.tasks if _norm(strip(t.prompt)) in plain]
    if not hits:
        return None
    longest = max(len(strip(t.prompt)) for t in hits)
    best = [t for t in hits if len(strip(t.prompt)) == longest]
    words = {_norm(strip(t.prompt)) for t in best}
    same = [t for t in world.tasks if _norm(strip(t.prompt)) in words]
    return best[0] if len(same) == 1 else None


class Player:
    """The world playing both parts for a host: its agent (`Agent`) and its model
    (`SimulatedBackend`), with the same seed and knobs they take in the suite."""

    def __init__(
        self, world: World, *, seed: int = 0, noise: float = 0.0, decay: float = 0.05
    ) -> None:
        self.world = world
        self.agent = Agent(world, seed=seed, decay=decay)
        self.judge = SimulatedBackend(world, seed=seed, noise=noise)

    def reply(self, convo: Conversation) -> Reply:
        users = [m for m in convo.messages if m.role == "user"]
        if not users:
            return Reply("idle", IDLE)
        # Codex puts its own user messages (AGENTS.md, the environment) before the prompt
        asked = next((a for m in users if (a := call_of(m.text, convo.schema))), None)
        if asked is not None:
            return self._judge(convo, *asked)
        task = next((t for m in users if (t := task_of(self.world, m.text)) is not None), None)
        if task is None:
            return Reply("idle", IDLE)
        return self._work(convo, task)

    def _judge(self, convo: Conversation, call: str, prompt: str) -> Reply:
        if convo.messages[-1].role == "tool":  # the answer was taken: end the turn
            return Reply("judge", "Answered.", call=call)
        schema = convo.schema or {}
        data = self.judge.complete(call, prompt, schema, timeout_s=60).data
        if convo.schema is not None:
            return Reply("judge", answer=data, call=call)
        return Reply("judge", "```json\n" + json.dumps(data, indent=1) + "\n```", call=call)

    def _work(self, convo: Conversation, task: Task) -> Reply:
        seen = [Turn(m.text) for m in convo.messages if m.role in ("user", "context")]
        outcome = self.agent.solve(task, seen)
        last_prompt = max(i for i, m in enumerate(convo.messages) if m.role == "user")
        acted = any(m.role in ("assistant", "tool") for m in convo.messages[last_prompt + 1 :])
        shell = next((s for s in SHELLS if s in convo.tools), None)
        # a tool line (cited or not) is a command; the rest is what the agent says
        reasoning = [_said(t) for _, t in outcome.lines if not t.startswith("Tool: ")]
        commands = [_command(t) for _, t in outcome.lines if t.startswith("Tool: ")]
        if acted or shell is None or not commands:  # the report that ends the turn
            # said now, unless said with the commands; with no shell, the tool lines too
            said = (
                []
                if acted
                else [_said(t) for _, t in outcome.lines]
                if shell is None
                else reasoning
            )
            text = "\n".join([*said, outcome.text])
            return Reply("agent", text, task=task.id, ok=outcome.ok, missing=outcome.missing)
        key = json.dumps([m.text for m in convo.messages], ensure_ascii=False)
        calls = tuple(
            ToolCall(_id(key, i), shell, _arguments(shell, command))
            for i, command in enumerate(commands)
        )
        text = "\n".join(reasoning) or f"Working on {task.summary}."
        return Reply("agent", text, calls, task=task.id)


def _said(line: str) -> str:
    return line.removeprefix("Agent: ")


def _command(line: str) -> str:
    """A tool line as a shell command: it echoes what it does; a failed check exits 1."""
    text = line.removeprefix("Tool: ")
    did, failed, error = text.partition(FAILED)
    if failed and error.endswith(")"):
        return f"echo {shlex.quote(did)}; echo {shlex.quote(error[:-1])} >&2; exit 1"
    return f"echo {shlex.quote(text)}"


def _arguments(shell: str, command: str) -> dict[str, Any]:
    if shell == "Bash":
        return {"command": command, "description": "Run the check"}
    if shell == "exec_command":
        return {"cmd": command}
    if shell == "shell_command":
        return {"command": command}
    return {"command": ["bash", "-lc", command]}


def _id(key: str, n: int) -> str:
    return hashlib.sha256(f"{key}\x1f{n}".encode()).hexdigest()[:24]

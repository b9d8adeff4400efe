"""Driving ROSE's hooks from inside one process, as Claude Code drives them from outside.

For `rose demo` and the quality benchmark: a store of its own in a folder of its own,
lessons seeded into it through the Store, and each session run through the real hook
entry point (`rose.hooks.main.main`: the host's JSON payload on stdin, its answer read back
from stdout), so the prompt hook's every path (the recall view, the model-driven walk, the
session record, the session log) runs as it does under a host. The one difference: the
Stop and SessionEnd hooks hand their work to jobs, and here no runner is started for them
(`rose.jobs.queue.held`): the jobs run at once in this process (`rose.jobs.queue.run_here`),
so a turn's absorption and reflection are done before the next prompt and a session's
episodes are on disk when it ends. `tests/test_demo_hooks.py` runs the same loop through `rose hook`
processes and the real detached job.

While a `HookHost` is open it owns the process's ROSE environment: `ROSE_HOME` is its
store, its global store is `.rose-global` beside it (where lessons the scope judgement calls
global land, created on first use), and settings in the environment are set aside,
so the figures are those of the store's own settings. It never reads how the work went:
what it reports (model calls, lessons, episodes, each stage's figures) is what the hooks
and the store recorded. With `pull`, the folder registers ROSE's MCP server as a project
whose person approved it (so the injected block says the tools are there) and `tools`
gives the agent the server's tools for a session, called in-process
(`rose.hooks.pull_client`).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from rose import config
from rose.disk.atomic import write_json, write_text
from rose.errors import RoseError
from rose.events import TIMEOUT, read_events
from rose.files import sessions
from rose.files.layout import StoreDir
from rose.hooks import main as hooks
from rose.jobs import queue as jobs
from rose.loop.abstraction.compress import held_out_summary
from rose.loop.abstraction.merge import merge_summary
from rose.loop.reflection.counterfactual import agreement
from rose.models import Node
from rose.store.facade import Store

#: The stages of the loop and whether each is built. The issue that builds a stage flips
#: its line and fills its figures in `HookHost.metrics`; tests/test_demo_stages.py fails
#: while a stage's module exists under rose/loop/ and this still says it is not built.
STAGES: dict[str, bool] = {
    "recall": True,
    "episodes": True,
    "reflection": True,
    "attribution": True,
    "consolidation": True,
    "compression": True,
    "merges": True,
    "descent": True,
    "routing": True,
}
#: What each stage does, as the demo names it.
DOES: dict[str, str] = {
    "recall": "recall (the prompt hook chooses and injects lessons)",
    "episodes": "episode recording (Stop and SessionEnd absorb the session log)",
    "reflection": "reflection (minting lessons from sessions)",
    "attribution": "attribution (which served lessons were used: precision)",
    "consolidation": "consolidation (reconciling new lessons: conflicts)",
    "compression": "compression (shorter forms checked by replay)",
    "merges": "merges (shared parents of lessons used together)",
    "descent": "descent (restoring dropped detail: rescues)",
    "routing": "routing (selection rules)",
}
#: The module of each stage under rose/loop/ (episodes are recorded by the store).
MODULES: dict[str, str] = {
    "recall": "recall",
    "reflection": "reflect",
    "attribution": "attribute",
    "consolidation": "consolidate",
    "compression": "compress",
    "merges": "merge",
    "descent": "descend",
    "routing": "route",
}
#: The figures a stage owns: None until it is built.
FIGURES: dict[str, tuple[str, ...]] = {
    "reflection": ("minted",),
    "attribution": ("precision", "counterfactual_agreement"),
    "consolidation": ("conflicts",),
    "compression": ("compressions_accepted", "compressions_rejected", "held_out_pass_rate"),
    "merges": ("merges",),
    "descent": ("rescues",),
    "routing": ("rules", "routing_rules"),
}
#: The stages that call the model after a session rather than on the prompt's path.
BACKGROUND = ("reflection", "attribution", "compression", "merges")


def not_built() -> list[str]:
    return [s for s, built in STAGES.items() if not built]


def framed(lesson: Mapping[str, Any]) -> str:
    """One lesson row (id, level, scope, title, gist, body, patches, conflict) as the prompt
    hook injects it, head and tail included: how an arm that is not ROSE frames what it
    serves, so that its tokens compare with ROSE's."""
    from rose.store import view as recall_view

    full, _ = recall_view.fragments(dict(lesson), str(lesson["id"]))
    return "\n\n".join([recall_view.render("inject/head"), full, recall_view.render("inject/tail")])


@contextlib.contextmanager
def isolated(root: Path) -> Iterator[None]:
    """This process's ROSE environment pointed at the store `root` alone, then restored."""
    # The engine choice stays: one process cannot load both engines.
    names = [n for n in map(config.env_name, config.fields()) if n != "ROSE_GRAPH_ENGINE"]
    names.append("ROSE_CHILD")
    saved = {n: os.environ.get(n) for n in [*names, "ROSE_HOME", "ROSE_GLOBAL_HOME"]}
    try:
        for n in names:
            os.environ.pop(n, None)
        os.environ["ROSE_HOME"] = str(root)
        os.environ["ROSE_GLOBAL_HOME"] = str(global_dir(root))
        yield
    finally:
        for n, v in saved.items():
            if v is None:
                os.environ.pop(n, None)
            else:
                os.environ[n] = v


def global_dir(root: Path) -> Path:
    """The global store of the store at `root` while it is `isolated`."""
    return root.parent / ".rose-global"


def timeouts(events: Path) -> int:
    """The deadlines that passed, as the store's event log records them: judgements that
    timed out (`judge` events), replay processes that gave no answer (`timeout` events), and
    prompts whose recall ran out of time (`inject` events). Zero means no outcome of the run
    depended on how fast the machine was."""
    return sum(
        e.get("kind") == TIMEOUT
        or (e.get("kind") == "judge" and e.get("error") == "BackendTimeout")
        or (e.get("kind") == "inject" and "out of time" in str(e.get("degraded") or ""))
        for e in read_events(events)
    )


class Tally:
    """The model calls an event log records as they are appended: each `take` counts the
    judgements since the last one that reached the model (not answered from the cache) and
    their simulated tokens; `error` events are kept in `errors`."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.errors: list[str] = []
        self._offset = 0

    def take(self) -> tuple[int, int]:
        try:
            with open(self.path, "rb") as fh:
                fh.seek(self._offset)
                data = fh.read()
        except FileNotFoundError:
            return 0, 0
        whole = data[: data.rfind(b"\n") + 1]  # a line still being written waits
        self._offset += len(whole)
        calls = spent = 0
        for line in whole.splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if event.get("kind") == "error":
                self.errors.append(str(event.get("detail") or event.get("error") or "error"))
            if event.get("kind") != "judge" or event.get("cached") or event.get("error"):
                continue
            calls += 1
            sim = event.get("simulated") or {}
            spent += int(sim.get("input_tokens", 0)) + int(sim.get("output_tokens", 0))
        return calls, spent


class HookHost:
    """A store in `folder/.rose`, seeded with `lessons` (title, gist, body, and optionally
    family and id), answering the agent through its hooks.

    `model` is the backend's model setting (for the simulated backend, which world it is);
    `settings` are more `key: value` settings for the store's config.yaml; `pull` registers
    ROSE's MCP server in the folder and offers its tools (`tools`). Use it as a context
    manager: the environment is the store's only while it is open.
    """

    def __init__(
        self,
        folder: Path,
        *,
        agent: str = "simulated",
        model: str = "",
        lessons: Sequence[Mapping[str, str]] = (),
        settings: Mapping[str, str] | None = None,
        pull: bool = False,
    ):
        self.folder = Path(folder)
        self.root = self.folder / ".rose"
        self.tally = Tally(self.root / "events.jsonl")
        self.pull = pull
        self._env = isolated(self.root)
        self._open = False
        self._seed(agent, model, lessons, settings or {})
        if pull:  # a project .mcp.json server, approved as the person would in Claude Code
            server = {"type": "stdio", "command": "rose", "args": ["mcp"]}
            write_json(self.folder / ".mcp.json", {"mcpServers": {"rose": server}})
            approved = {"enabledMcpjsonServers": ["rose"]}
            write_json(self.folder / ".claude" / "settings.json", approved)

    def __enter__(self) -> HookHost:
        self._env.__enter__()
        self._held = jobs.held()
        self._held.__enter__()
        self._open = True
        return self

    def __exit__(self, *exc: object) -> None:
        self._open = False
        self._held.__exit__(None, None, None)
        self._env.__exit__(None, None, None)

    def _seed(
        self,
        agent: str,
        model: str,
        lessons: Sequence[Mapping[str, str]],
        settings: Mapping[str, str],
    ) -> None:
        with isolated(self.root):
            store = Store.init(self.folder)
            for key, value in {"agent": agent, "model": model, **settings}.items():
                config.set_override(store.primary.config, key, value)
            store = Store.open(self.folder)
            nodes = [
                Node(
                    **({"id": lesson["id"]} if lesson.get("id") else {}),
                    title=lesson["title"],
                    gist=lesson["gist"],
                    family=lesson.get("family") or "general",
                    body=lesson["body"],
                    origin="manual",
                )
                for lesson in lessons
            ]
            if nodes:  # one write: one lock and one sync, not one a lesson
                store.write(nodes)
            store.view()
        self.tally.take()  # what seeding logged is not the sessions' doing

    # -- one session ------------------------------------------------------------------------

    def _payload(self, session: str, host_event: str, **extra: Any) -> dict[str, Any]:
        """The payload Claude Code sends with `host_event` (its name for the hook)."""
        return {
            "session_id": session,
            "transcript_path": "",
            "cwd": str(self.folder),
            "permission_mode": "default",
            "hook_event_name": host_event,
            **extra,
        }

    def hook(self, event: str, payload: Mapping[str, Any]) -> dict | None:
        """Run `rose hook <event>` in this process: the payload on stdin, the answer read back."""
        if not self._open:
            raise RoseError("a HookHost runs hooks only inside `with`: the store's environment")
        out = io.StringIO()
        stdin = sys.stdin
        sys.stdin = io.StringIO(json.dumps(payload))
        try:
            with contextlib.redirect_stdout(out):
                hooks.main([event])
        finally:
            sys.stdin = stdin
        text = out.getvalue().strip()
        return json.loads(text) if text else None

    def prompt(self, session: str, text: str, *, first: bool = True) -> dict[str, Any]:
        """A prompt (with `first`, a new session's): what the prompt hook injected, the
        model calls it made, and how recall chose (`recall`: "fits", "judged" when the walk
        selected, "degraded", or "" for an empty store)."""
        if first:
            self.hook("session-start", self._payload(session, "SessionStart", source="startup"))
        payload = self._payload(session, "UserPromptSubmit", prompt=text)
        answer = self.hook("user-prompt-submit", payload)
        block = ((answer or {}).get("hookSpecificOutput") or {}).get("additionalContext", "")
        calls, spent = self.tally.take()
        units = [r for r in sessions.read(self.root, session) if r.get("t") == "prompt"]
        mode = str(units[-1].get("recall") or "") if units else ""
        return {"block": block, "calls": calls, "model_tokens": spent, "recall": mode}

    def _transcript(self, session: str, transcript: str) -> str:
        """Write the session as the host recorded it so far (Claude Code's JSONL) where the
        host keeps its transcripts; its path, for the payloads ("" for none)."""
        if not transcript:
            return ""
        where = self.folder / "transcripts" / f"{sessions.safe_id(session)}.jsonl"
        write_text(where, transcript)
        return str(where)

    def stop(self, session: str, transcript: str = "") -> dict[str, Any]:
        """The agent stops after a turn: the Stop hook, then the jobs it queued (absorbing
        the units before this turn, a reflection when one is due), here at once."""
        return self._stop(session, self._transcript(session, transcript))

    def _stop(self, session: str, path: str) -> dict[str, Any]:
        stop = self._payload(session, "Stop", stop_hook_active=False)
        self.hook("stop", {**stop, "transcript_path": path})
        jobs.run_here(StoreDir(self.root, "project"))
        calls, spent = self.tally.take()
        return {"calls": calls, "model_tokens": spent}

    def end(self, session: str, transcript: str = "") -> dict[str, Any]:
        """The agent stops and the session ends: Stop, then SessionEnd, each hook's jobs run
        here at once (the session's end, and the compression it queues after a success).

        `transcript` is the whole session as the host recorded it (Claude Code's JSONL),
        named in both payloads, so the learning jobs read it as they read a real one.
        """
        path = self._transcript(session, transcript)
        stopped = self._stop(session, path)
        payload = self._payload(session, "SessionEnd", reason="prompt_input_exit")
        self.hook("session-end", {**payload, "transcript_path": path})
        jobs.run_here(StoreDir(self.root, "project"))
        calls, spent = self.tally.take()
        return {"calls": calls + stopped["calls"], "model_tokens": spent + stopped["model_tokens"]}

    def tools(self, session: str) -> Any:
        """The MCP server's tools for `session`, in-process (`PullClient`); None without `pull`."""
        from rose.hooks.pull_client import PullClient

        return PullClient(self.folder, session, self.tally.take) if self.pull else None

    # -- what the store holds ---------------------------------------------------------------

    def store(self) -> Store:
        """The store the hooks write, with its global store when one was made."""
        glob = global_dir(self.root)
        return Store(self.root, glob if glob.is_dir() else None)

    def metrics(self) -> dict[str, Any]:
        """The harness's own figures: lessons, apexes, levels, episodes, and each stage's
        figures (None while the stage is not built)."""
        store = self.store()
        with store.graph() as g:
            levels = g.q("level_counts")
            (apexes,) = g.q("apex_totals")
            (episodes,) = g.q("episode_count")
            lessons = g.q("lessons_all")
            served = g.q("precision")
            conflicts = g.q("conflicts")
            (rescued,) = g.q("rescue_total")
        active = [r for r in levels if r["status"] in ("active", "disputed")]
        n_served = sum(r["served"] for r in served)
        out: dict[str, Any] = {
            "lessons": sum(r["n"] for r in active),
            "superseded": sum(r["n"] for r in levels if r["status"] == "superseded"),
            "apexes": int(apexes["apexes"]),
            "max_level": max((r["level"] for r in active), default=None),
            "episodes": int(episodes["n"]),
            "store": str(self.root),
            "hook_errors": len(self.tally.errors),
            # the hooks' jobs run here, and one that raises is recorded failed, not raised
            "jobs_failed": sum(
                r.get("state") == "failed" for r in jobs.jobs(StoreDir(self.root, "project"))
            ),
            "not_built": not_built(),
            "minted": sum(1 for r in lessons if r["origin"] == "reflection"),
            "precision": round(sum(r["used"] for r in served) / n_served, 4) if n_served else None,
            # where the walk chose (the store outgrew the budget): what selection rules act on
            "selection_precision": _share(served, "judged"),
            "conflicts": len(conflicts),
            "rescues": int(rescued["n"]),
            "strategy": store.config.recall.strategy,  # how descent restored detail
        }
        if STAGES["compression"]:
            done = held_out_summary(store)
            out["compressions_accepted"] = done["accepted"]
            out["compressions_rejected"] = done["rejected"]
            out["held_out_pass_rate"] = done["held_out_pass_rate"]
        out["timeouts"] = timeouts(self.root / "events.jsonl")
        checked = agreement(store)
        out["counterfactual_agreement"] = checked["agreement"]
        out["counterfactual_checked"] = checked["checked"]
        if STAGES["merges"]:
            out["merges"] = merge_summary(store)["accepted"]
        if STAGES["routing"]:  # rules in the store, and rules per lesson (the growth ratio)
            n_rules = len(store.rules()[0])
            out["rules"] = n_rules
            out["routing_rules"] = round(n_rules / len(lessons), 4) if lessons else 0.0
        if not any(STAGES[s] for s in BACKGROUND):
            out["background_calls_per_session"] = None
        for stage, names in FIGURES.items():
            if not STAGES[stage]:
                out.update(dict.fromkeys(names))
        return out


def _share(rows: list[dict[str, Any]], mode: str) -> float | None:
    """Used over served on the prompts whose recall ran in `mode`; None when none did."""
    n = sum(r["served"] for r in rows if r["recall"] == mode)
    return round(sum(r["used"] for r in rows if r["recall"] == mode) / n, 4) if n else None

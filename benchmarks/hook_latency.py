"""How long the prompt hook takes, process start to output, when nothing needs deciding.

    python benchmarks/hook_latency.py [--json] [--sizes 0,100,1000] [--runs N] [--warmup N]

Runs the command the host runs (`<venv>/bin/rose hook user-prompt-submit`, or
`python -m rose hook user-prompt-submit` when no `rose` script sits beside the
interpreter) as a subprocess, with the host's payload on stdin, and times each
run from spawn to exit. For each size a seeded synthetic store (see `_synth.py`)
is written to a temp folder with a budget every lesson fits, so the hook answers
from the recall view; size 0 is measured with no store at all and with an empty
initialised one. Each store is timed with a new session id per run (every run
injects) and with one session id (lessons already in context), each with no
writer, a busy writer on another store (CPU contention), and a writer opening
this store's graph in a loop (which the fast path must not notice); then with a
writer adding lessons to this store, run as ROSE runs its jobs (a session of its own,
at the jobs' priority: `rose.processes.detach.background`), and the same writer at the
user's own priority (a `rose add` loop in another terminal): the first against a p95
within 5 x the idle median (on two cores a tighter bound measures the CPU, not ROSE),
both against no prompt without memory. A size's
configurations run interleaved, one run each per round in a rotating order, the
writers stopped (SIGSTOP) outside their own runs, so a machine whose load drifts
weighs on all of them alike. The interpreter's own start (`python -c pass`,
`python -S -c pass`) is the baseline. Children cache bytecode under the temp
folder (PYTHONPYCACHEPREFIX), as an installed package has it, even where
PYTHONDONTWRITEBYTECODE is set.

`--json` prints `{"<size>": {"<config>": {"median_ms", "p95_ms", "runs"}}}`,
with the baseline under the key "baseline". A missed target is reported,
never an error.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _synth import generate  # noqa: E402

TARGET_MEDIAN_MS = 50.0
TARGET_P95_MS = 100.0
WRITER_P95_RATIO = 5.0  # with a writer on the same store: p95 within this many idle medians
WARMUP = 3
FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "hooks"
#: Every lesson fits, and a served lesson stays "in context" for the whole same-session series.
CONFIG_YAML = (
    "recall:\n  max_pack_tokens: 100000000\n  whole_tokens: 100000000\n"
    "  stays_fresh_turns: 100000\n"
)

# A busy writer on another store: CPU and disk contention, no shared files.
_WRITER_ELSEWHERE = """
import signal, sys
from pathlib import Path
from rose.store.facade import Store
stop = []
signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
store = Store.init(Path(sys.argv[1]))
store.view()
print("ready", flush=True)
i = 0
while not stop:
    i += 1
    store.add(f"Background lesson {i}: retry the upload after the token refreshes.",
              family="background")
    print(".", flush=True)
"""

# A writer on this store that holds its graph database for short spans and changes no file.
_WRITER_HERE = """
import signal, sys, time
from pathlib import Path
from rose.store.facade import Store
stop = []
signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
store = Store.open(Path(sys.argv[1]))
with store.graph():
    pass
print("ready", flush=True)
while not stop:
    with store.graph():
        time.sleep(0.05)
    print(".", flush=True)
    time.sleep(0.005)
"""

# A writer adding lessons to this store: the recall view goes stale while each write runs.
# Started in a session of its own; "job" runs it as ROSE runs its jobs, "user" as a person's
# own command in another terminal.
_WRITER_ADDING = """
import signal, sys
from pathlib import Path
if sys.argv[2] == "job":
    from rose.processes.detach import background
    background()
from rose.store.facade import Store
stop = []
signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
store = Store.open(Path(sys.argv[1]))
store.view()
print("ready", flush=True)
i = 0
while not stop:
    i += 1
    store.add(f"Lesson {i} written while the hook runs: pin the worker image digest.",
              family="written-meanwhile")
    print(".", flush=True)
"""

_WRITERS = {
    "elsewhere": _WRITER_ELSEWHERE,
    "here": _WRITER_HERE,
    "adding": _WRITER_ADDING,
    "adding-user": _WRITER_ADDING,
}

# Runs the hook in-process and says whether it loaded the slow path (store, graph, judge).
_PROBE = """
import sys
sys.argv = ["rose", "hook", "user-prompt-submit"]
from rose._entry import main
try:
    main()
except SystemExit:
    pass
slow = ("rose.loop.selection.recall", "rose.store.facade", "kuzu", "ladybug")
print("SLOW=" + ",".join(m for m in slow if m in sys.modules), file=sys.stderr)
"""


def _say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


@dataclass
class Series:
    """One configuration's timings, in ms, and what went wrong in its runs (if anything)."""

    times: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)  # the child's user + system time
    wrong: list[str] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def max(self) -> float:
        return max(self.times)

    @property
    def p95(self) -> float:  # nearest rank
        ordered = sorted(self.times)
        return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


@dataclass
class Bench:
    cmd: list[str]
    env: dict[str, str]
    runs: int
    tmp: Path
    warmup: int = WARMUP  # untimed, unchecked runs before the timed ones
    python: str = sys.executable  # the interpreter the hook runs on: the baseline's
    results: dict[str, dict[str, Series]] = field(default_factory=dict)
    load: list[float] = field(default_factory=list)  # 1-minute load average, start and end
    notes: dict[str, list[str]] = field(default_factory=dict)
    writer: Writer | None = None  # the busy writer on another store; paused unless needed

    def note(self, size: str, text: str) -> None:
        self.notes.setdefault(size, []).append(text)
        _say(f"[{size}] {text}")

    def elsewhere(self) -> Writer:
        if self.writer is None:
            _say("starting the writer elsewhere")
            log = Path(tempfile.mkstemp(prefix="writer-elsewhere-", suffix=".log", dir=self.tmp)[1])
            self.writer = Writer("elsewhere", self.tmp / "elsewhere", self.env, log)
            self.writer.pause()
        return self.writer


# -- the command and its environment ------------------------------------------------------------


def hook_command(rose: str | None = None) -> tuple[list[str], str]:
    """What the host runs: the `rose` script given (a user's install, say a wheel's), else
    the venv's `rose` script if there is one, else `python -m rose`."""
    if rose:
        return [rose, "hook", "user-prompt-submit"], f"{rose} (the `rose` script given)"
    script = Path(sys.executable).parent / "rose"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script), "hook", "user-prompt-submit"], f"{script} (the `rose` script)"
    cmd = [sys.executable, "-m", "rose", "hook", "user-prompt-submit"]
    return cmd, f"{sys.executable} -m rose (no `rose` script beside the interpreter)"


def interpreter(script: str) -> str:
    """The Python a `rose` script runs on (its `#!` line), for the baseline beside it; this
    interpreter when the script names none."""
    try:
        with open(script, "rb") as fh:
            first = fh.readline(512).decode("utf-8", "replace").strip()
    except OSError:
        return sys.executable
    path = first[2:].split()[0] if first.startswith("#!") and first[2:].split() else ""
    return path if path and os.path.basename(path).startswith("python") else sys.executable


def isolate(tmp: Path) -> dict[str, str]:
    """Point this process and its children away from the user's stores and settings."""
    for key in list(os.environ):
        if key.startswith("ROSE_") and key != "ROSE_GRAPH_ENGINE":
            del os.environ[key]  # ROSE_CHILD=1 would make every hook a no-op
    os.environ["ROSE_GLOBAL_HOME"] = str(tmp / "no-global-store")
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
    return env


def _payload(project: Path, session: str) -> bytes:
    try:
        data = json.loads((FIXTURE / "user-prompt-submit.json").read_text(encoding="utf-8"))
    except OSError:  # outside a checkout: the same shape, written out
        data = {"permission_mode": "default", "hook_event_name": "UserPromptSubmit",
                "prompt": "Add retries to the HTTP client"}  # fmt: skip
    data.update(
        session_id=session,
        transcript_path=str(project / "transcripts" / f"{session}.jsonl"),
        cwd=str(project),
    )
    return json.dumps(data).encode()


# -- stores ---------------------------------------------------------------------------------------


def build_store(project: Path, size: int) -> dict:
    """An initialised store of `size` synthetic lessons whose recall view says everything fits."""
    from rose.store.facade import Store

    root = project / ".rose"
    if size:
        generate(root, size)
    else:
        Store.init(project)
    (root / "config.yaml").write_text(CONFIG_YAML, encoding="utf-8")
    return Store.open(project).view()


def fast_path(project: Path, env: dict[str, str]) -> str:
    """'' when the hook answers without the store, the graph or the judge; else what it loaded."""
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE],
        input=_payload(project, f"probe-{uuid.uuid4().hex[:12]}"),
        capture_output=True,
        env=env,
        cwd=project,
        timeout=120,
    )
    line = next((ln for ln in proc.stderr.decode().splitlines() if ln.startswith("SLOW=")), None)
    return "probe failed" if line is None else line[len("SLOW=") :]


class Writer:
    """A background writer process; `pause()` stops it dead (SIGSTOP) until `resume()`."""

    def __init__(self, kind: str, target: Path, env: dict[str, str], log: Path):
        self.kind, self.log = kind, log
        argv = [sys.executable, "-c", _WRITERS[kind], str(target)]
        if kind.startswith("adding"):
            argv.append("user" if kind == "adding-user" else "job")
        target.mkdir(parents=True, exist_ok=True)
        with log.open("wb") as out:
            self.proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=target,
                start_new_session=kind.startswith("adding"),
            )
        try:
            deadline = time.monotonic() + 120
            while not self._text().startswith("ready") or self.count() < 1:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the {kind} writer did not start: {self._text()[-500:]}")
                time.sleep(0.02)
        except BaseException:
            self.stop()
            raise

    def _text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def count(self) -> int:
        """Lessons added (elsewhere, adding) or graph opens held (here) so far."""
        return self._text().count(".\n")

    def pause(self) -> None:
        self.proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        self.proc.send_signal(signal.SIGCONT)

    def stop(self) -> None:
        if self.proc.poll() is not None:
            return
        self.resume()
        self.proc.terminate()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


# -- timing ---------------------------------------------------------------------------------------


def run_once(
    cmd: list[str], env: dict[str, str], cwd: Path, data: bytes
) -> tuple[float, float, subprocess.CompletedProcess]:
    """Spawn-to-exit wall time and the child's own CPU time, in ms, of one run."""
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)  # writers count only once reaped
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, input=data, capture_output=True, env=env, cwd=cwd, timeout=120)
    ms = (time.perf_counter() - t0) * 1000.0
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (ru1.ru_utime - ru0.ru_utime + ru1.ru_stime - ru0.ru_stime) * 1000.0
    return ms, cpu, proc


def expect(kind: str) -> Callable[[bytes], str]:
    """A check of the hook's answer: '' when it is what this configuration should produce."""

    def check(stdout: bytes) -> str:
        text = stdout.decode("utf-8", errors="replace").strip()
        if kind == "nothing" and not text:
            return ""
        try:
            out = json.loads(text)
        except ValueError:
            return f"not JSON: {text[:80]!r}"
        injected = "hookSpecificOutput" in out
        if kind == "nothing":  # an empty store's first prompt says ROSE is on, and no more
            return f"unexpected injection {text[:80]!r}" if injected else ""
        if kind == "inject" and not injected:
            return f"nothing injected: {out.get('systemMessage', '')[:80]!r}"
        # Lessons the host's size bound deferred arrive on later prompts of the same session.
        if kind == "in-context" and "in context" not in out.get("systemMessage", ""):
            return f"not 'already in context': {str(out)[:80]!r}"
        message = out.get("systemMessage", "")
        if kind == "memory" and (not message.startswith("ROSE ·") or "skipped" in message):
            return f"no memory: {message[:80]!r}"  # a writer must never cost a prompt its memory
        return ""

    return check


@dataclass
class Config:
    """One configuration: where the hook runs, what it should answer, which writer is busy."""

    name: str
    cwd: Path
    check: Callable[[bytes], str]
    session: str  # "" for a new session id every run
    writer: Writer | None
    series: Series = field(default_factory=Series)

    def payload(self) -> bytes:
        return _payload(self.cwd, self.session or f"bench-{uuid.uuid4().hex}")


def interleave(b: Bench, configs: list[Config]) -> None:
    """Run every configuration once per round, rotating the order, so that a machine whose
    load drifts during the benchmark weighs on every configuration alike."""
    running: Writer | None = None
    for r in range(b.warmup + b.runs):
        for k in range(len(configs)):
            cfg = configs[(r + k) % len(configs)]
            if cfg.writer is not running:
                if running is not None:
                    running.pause()
                if cfg.writer is not None:
                    cfg.writer.resume()
                running = cfg.writer
            ms, cpu, proc = run_once(b.cmd, b.env, cfg.cwd, cfg.payload())
            if r >= b.warmup:
                cfg.series.times.append(ms)
                cfg.series.cpu.append(cpu)
                problem = f"exit {proc.returncode}" if proc.returncode else cfg.check(proc.stdout)
                if problem:
                    cfg.series.wrong.append(problem)
        if r == b.warmup - 1 or (r + 1) % 10 == 0:
            _say(f"  round {r + 1}/{b.warmup + b.runs} ({b.warmup} warm-up)")
    if running is not None:
        running.pause()


def setup(b: Bench, size: int) -> list[tuple[str, Path, bool]]:
    """The projects to time for one size: (configuration prefix, project dir, has a store)."""
    label = str(size)
    base = Path(tempfile.mkdtemp(prefix=f"size-{size}-", dir=b.tmp))
    cases: list[tuple[str, Path, bool]] = []
    if size == 0:
        from rose.files.layout import find_project_root

        bare = base / "no-store"
        bare.mkdir()
        cases.append(("no-store", bare, False))
        above = find_project_root(bare)
        if above is not None:
            b.note(label, f"warning: 'no store' finds a store above the temp dir: {above}")
    project = base / "project"
    project.mkdir()
    _say(f"[{label}] building the store in {project}")
    t0 = time.perf_counter()
    view = build_store(project, size)
    raw = (project / ".rose" / "recall-view.json").stat().st_size
    b.note(
        label,
        f"{size:,} lessons, {view.get('apexes', len(view.get('lessons', [])))} apexes "
        f"({raw / 1024:.0f} KiB, {view.get('total_tokens', 0):,} tokens, "
        f"fits: {view.get('fits')}, empty: {view.get('empty')}), "
        f"built in {time.perf_counter() - t0:.1f} s",
    )
    if not (view.get("fits") or view.get("empty")):
        b.note(label, "warning: the view says the store does not fit; the runs decide with a model")
    cases.append(("empty-store" if size == 0 else "", project, True))
    return cases


#: The writers adding lessons to the store under test, and what the notes call them.
ADDING = {
    "adding": "a job adding lessons here",
    "adding-user": "the user adding lessons here at their own priority",
}

#: (configuration, expected answer, one session id for the whole series)
SERIES = (("new-session", "inject", False), ("same-session", "in-context", True))


def bench_store(b: Bench, size: int) -> None:
    """Every configuration for one store size: no writer, a writer elsewhere, a writer here."""
    label = str(size)
    cases = setup(b, size)
    project = cases[-1][1]
    slow = fast_path(project, b.env)
    b.note(label, f"fast path: {'yes' if not slow else 'NO, loaded ' + slow}")
    elsewhere = b.elsewhere()
    _say(f"[{label}] starting the writer here")
    log = Path(tempfile.mkstemp(prefix="writer-here-", suffix=".log", dir=b.tmp)[1])
    here = Writer("here", project, b.env, log)
    here.pause()
    counts = (elsewhere.count(), here.count())
    configs: list[Config] = []
    try:
        for w, active in (("", None), ("elsewhere", elsewhere), ("here", here)):
            for prefix, cwd, has_store in cases:
                if w == "here" and not has_store:
                    continue
                for name, kind, same in SERIES if size else ((prefix, "nothing", False),):
                    session = f"bench-same-{uuid.uuid4().hex[:12]}" if same else ""
                    suffix = f"+writer-{w}" if w else ""
                    configs.append(Config(name + suffix, cwd, expect(kind), session, active))
        _say(f"[{label}] {len(configs)} configurations, interleaved")
        interleave(b, configs)
    finally:
        added, held = elsewhere.count() - counts[0], here.count() - counts[1]
        here.stop()  # a paused writer may hold the database: it goes before the next one
    written: dict[str, int] = {}
    for kind in ADDING if size else ():  # a writer adding lessons to this store, a phase each
        _say(f"[{label}] starting the writer {kind} here")
        log = Path(tempfile.mkstemp(prefix=f"writer-{kind}-", suffix=".log", dir=b.tmp)[1])
        adding = Writer(kind, project, b.env, log)
        adding.pause()
        start = adding.count()
        more = [
            Config(f"{name}+writer-{kind}", project, expect("memory"), session, adding)
            for name, _, same in SERIES
            for session in [f"bench-same-{uuid.uuid4().hex[:12]}" if same else ""]
        ]
        try:
            interleave(b, more)
        finally:
            written[kind] = adding.count() - start
            adding.stop()
        configs += more
    for cfg in configs:
        b.results.setdefault(label, {})[cfg.name] = s = cfg.series
        bad = f", {len(s.wrong)} WRONG ({s.wrong[0]})" if s.wrong else ""
        _say(f"[{label}] {cfg.name}: median {s.median:.1f} ms, p95 {s.p95:.1f} ms{bad}")
    b.note(label, f"writer elsewhere: {added} lessons added while its configurations ran")
    b.note(label, f"writer here: {held} graph opens held 50 ms while its configurations ran")
    for kind, who in ADDING.items():
        if kind not in written:
            continue
        b.note(label, f"{who}: {written[kind]} lessons added while its configurations ran")
        results = b.results[label]
        for name, _, _ in SERIES:
            idle, busy = results[name], results[f"{name}+writer-{kind}"]
            ratio = busy.p95 / idle.median
            if kind == "adding":
                ok = ratio <= WRITER_P95_RATIO and not busy.wrong
                bound = f"target <= {WRITER_P95_RATIO:g} x"
            else:  # what the user waits on is not lowered: only memory is promised
                ok = not busy.wrong
                bound = "no bound: the user's own work shares the CPU as it chose"
            b.note(
                label,
                f"{name} with {who}: p95 {busy.p95:.1f} ms = {ratio:.2f} x the idle median "
                f"({bound}), max {busy.max:.1f} ms, "
                f"{len(busy.wrong)} prompts without memory: {'pass' if ok else 'MISS'}",
            )
    slow = fast_path(project, b.env)
    b.note(label, f"fast path after the writers: {'yes' if not slow else 'NO, loaded ' + slow}")


def bench_baseline(b: Bench) -> None:
    """The interpreter's own start, with and without `site`, interleaved like the hook runs."""
    cmds = {
        "python -c pass": [b.python, "-c", "pass"],
        "python -S -c pass": [b.python, "-S", "-c", "pass"],
    }
    out = b.results.setdefault("baseline", {})
    for name in cmds:
        out[name] = Series()
    for r in range(b.warmup + b.runs):
        for name, cmd in cmds.items():
            ms, cpu, _ = run_once(cmd, b.env, b.tmp, b"")
            if r >= b.warmup:
                out[name].times.append(ms)
                out[name].cpu.append(cpu)
    for name, s in out.items():
        _say(f"[baseline] {name}: median {s.median:.1f} ms, p95 {s.p95:.1f} ms")


# -- report ---------------------------------------------------------------------------------------


def render(b: Bench, cmd_label: str) -> str:
    lines = [
        f"hook command: {cmd_label} hook user-prompt-submit",
        f"python {platform.python_version()} on {platform.system()} {platform.machine()}, "
        f"{os.cpu_count()} CPUs; {b.runs} runs per configuration after {b.warmup} warm-up runs",
        f"target where nothing needs deciding: median <= {TARGET_MEDIAN_MS:g} ms, "
        f"p95 <= {TARGET_P95_MS:g} ms; cpu ms: the hook process's own user + system time",
        "load average (1 min) at start {:.2f}, at end {:.2f}".format(*b.load),
        "",
        f"  {'size':<9}{'configuration':<32}{'median ms':>10}{'p95 ms':>9}{'max ms':>9}"
        f"{'cpu ms':>8}{'runs':>6}  verdict",
    ]
    for size, configs in b.results.items():
        for name, s in configs.items():
            if size == "baseline":
                verdict = "(interpreter start)"
            else:
                ok = s.median <= TARGET_MEDIAN_MS and s.p95 <= TARGET_P95_MS
                verdict = "pass" if ok else "MISS"
                if s.wrong:
                    verdict += f"  {len(s.wrong)} wrong answers, e.g. {s.wrong[0]}"
            cpu = statistics.median(s.cpu)
            lines.append(
                f"  {size:<9}{name:<32}{s.median:>10.1f}{s.p95:>9.1f}{s.max:>9.1f}{cpu:>8.1f}"
                f"{len(s.times):>6}  {verdict}"
            )
    for size, notes in b.notes.items():
        lines.append("")
        lines.append(f"size {size}:")
        lines.extend(f"  {n}" for n in notes)
    return "\n".join(lines)


def as_json(b: Bench) -> dict:
    return {
        size: {
            name: {
                "median_ms": round(s.median, 3),
                "p95_ms": round(s.p95, 3),
                "max_ms": round(s.max, 3),
                "runs": len(s.times),
                "wrong": len(s.wrong),
            }
            for name, s in configs.items()
        }
        for size, configs in b.results.items()
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print only the figures, as JSON")
    ap.add_argument("--sizes", default="0,100,1000", help="lesson counts, comma-separated")
    ap.add_argument("--runs", type=int, default=30, help="timed runs per configuration")
    ap.add_argument(
        "--warmup", type=int, default=WARMUP, help="untimed runs per configuration before them"
    )
    ap.add_argument(
        "--rose",
        help="the `rose` script to time (a user's install, e.g. a wheel in a venv of its own; "
        "default: the one beside this interpreter)",
    )
    args = ap.parse_args(argv)
    sizes = [int(x.replace("_", "")) for x in args.sizes.split(",") if x.strip()]
    if args.rose and not os.access(args.rose, os.X_OK):
        ap.error(f"--rose {args.rose}: not an executable file")
    cmd, cmd_label = hook_command(args.rose)
    tmp = Path(tempfile.mkdtemp(prefix="rose-hook-latency-")).resolve()
    b = Bench(cmd, isolate(tmp), max(1, args.runs), tmp, max(0, args.warmup))
    b.python = interpreter(cmd[0]) if args.rose else sys.executable
    try:
        b.load.append(os.getloadavg()[0])
        _say(f"hook command: {' '.join(cmd)}")
        bench_baseline(b)
        for size in sizes:
            t0 = time.monotonic()
            bench_store(b, size)
            _say(f"[{size}] done in {time.monotonic() - t0:.1f} s")
        b.load.append(os.getloadavg()[0])
    finally:
        if b.writer is not None:
            b.writer.stop()
        from rose.graph import server

        server.stop_under(tmp)  # the graph servers its stores' opens started
        shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        print(json.dumps(as_json(b), indent=1))
    else:
        print(render(b, cmd_label))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The standing table of quality figures, published in the READMEs, and whether it is current.

A table of figures goes stale silently: the code that decides them changes and the README
still shows the old run. So the table is written between two marker lines with a stamp: a
fingerprint of every file that decides the figures (`DECIDING`) plus one per entry, and
`check` compares it with the tree as it is now and names the entries that changed. Only the
content of those files counts, never their times or the rest of the repository, so a README
edit or a new test leaves the table current and any edit to the loop, the judge, the world
or the prompts makes it stale.
"""

from __future__ import annotations

import hashlib
import math
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rose.disk.atomic import write_text
from rose.errors import RoseError

#: What decides the figures, relative to the repository root: the stages and the judge, the
#: simulated world (the hooks' driver among it), the prompts, the jobs (the stage sequence
#: after a session, capture), the transcripts the reflector reads, the prompt hook, the store
#: and its files, the benchmark and this module (which decides what the table shows).
DECIDING = (
    "rose/loop",
    "rose/judge",
    "rose/sim",
    "prompts",
    "rose/jobs",
    "rose/transcripts",
    "rose/hooks/main.py",  # the prompt hook: what is injected
    "rose/store",  # how a lesson is rendered, counted and chosen within the budget
    "rose/files",
    "rose/queries",
    "rose/model",
    "rose/config.py",
    "rose/config_schema.py",  # the defaults: the budget, thresholds, caps
    "rose/tokens.py",
    "benchmarks/quality.py",
    "benchmarks/_selection.py",
    "benchmarks/_targets.py",
    "benchmarks/_table.py",
)
FILES = ("README.md", "benchmarks/README.md")
ROOT = Path(__file__).resolve().parents[1]
BEGIN = "<!-- quality-table:begin -->"
END = "<!-- quality-table:end -->"
STAMP = "<!-- quality-table:"  # the stamp line: `<!-- quality-table: key=value ... -->`
DASH = "—"  # a figure that is None
CAUSES = {  # failures_by_cause keys, in the order of the stream's stages, and their headers
    "never_taught": "untaught",
    "not_stored": "unstored",
    "not_recalled_relevance": "relevance",
    "not_recalled_rule": "rule",
    "not_recalled_budget": "budget",
    "not_recalled_title_gist": "gist",
    "compressed_away": "compressed",
    "not_applied": "unapplied",
}
COLUMNS = (
    "tok/prompt: tokens injected per prompt; prec. %: of the lessons the block held, the "
    "share the first attempt acted on; sel. prec. %: the same where recall chose among "
    "lessons; recall %: of the facts needed, the share whose true variant was in the block; "
    "bridge % (n): success on the n tasks needing a topic their prompt never names."
)
LEGEND = (
    "untaught: no earlier session taught the fact; unstored: taught, no servable lesson "
    "holds it; relevance: a lesson held it, the judgement passed it over; rule: a selection "
    "rule turned the judgement away; budget: chosen, left out over the token budget; gist: "
    "passed over, its title and gist naming none of the task's subjects; compressed: served "
    "in a form that dropped it; unapplied: in the block, not acted on."
)


class TableError(RoseError):
    """A README cannot take the table (no markers, or broken ones), or the result does not
    belong to the tree it would be published from."""

    def __init__(self, path: Path | str, reason: str):
        self.path = Path(path)
        self.reason = reason
        super().__init__(f"{path}: {reason}")


@dataclass(frozen=True)
class Stamp:
    """What a published table was made from, as written in its stamp line."""

    fingerprint: str
    commit: str
    seeds: str
    sessions: str
    parts: dict[str, str]

    def line(self) -> str:
        parts = ",".join(f"{path}:{fp}" for path, fp in self.parts.items())
        return (
            f"{STAMP} fingerprint={self.fingerprint} commit={self.commit} seeds={self.seeds} "
            f"sessions={self.sessions} parts={parts} -->"
        )

    @classmethod
    def parse(cls, line: str) -> Stamp | None:
        body = line.strip().removeprefix(STAMP).removesuffix("-->")
        fields = dict(_pair(word, "=") for word in body.split())
        if not fields.get("fingerprint"):
            return None
        parts = dict(_pair(p, ":") for p in fields.get("parts", "").split(",") if p)
        return cls(
            fields["fingerprint"],
            fields.get("commit", "unknown"),
            fields.get("seeds", ""),
            fields.get("sessions", ""),
            parts,
        )


def _pair(text: str, sep: str) -> tuple[str, str]:
    key, _, value = text.partition(sep)
    return key, value


# ---------------------------------------------------------------- fingerprint


def fingerprint(root: Path) -> str:
    """16 hex digits of sha256 over every deciding file's relative path and bytes."""
    return _digest(root, [f for entry in DECIDING for f in _files(root, entry)])


def parts(root: Path) -> dict[str, str]:
    """The same digest per `DECIDING` entry, so a stale table can say what changed."""
    return {entry: _digest(root, _files(root, entry)) for entry in DECIDING}


def _files(root: Path, entry: str) -> list[str]:
    base = root / entry
    if base.is_file():
        return [entry]
    found = (p for p in base.rglob("*") if p.is_file()) if base.is_dir() else iter(())
    return [
        p.relative_to(root).as_posix()
        for p in found
        if "__pycache__" not in p.relative_to(root).parts and p.suffix != ".pyc"
    ]


def _digest(root: Path, rels: Iterable[str]) -> str:
    h = hashlib.sha256()
    for rel in sorted(set(rels)):
        data = (root / rel).read_bytes()
        # Lengths frame each record: no two different trees feed the hash the same bytes.
        h.update(f"{len(rel.encode())}:{rel}\0{len(data)}:".encode())
        h.update(data)
    return h.hexdigest()[:16]


# ---------------------------------------------------------------- the Markdown


def markdown(result: Mapping[str, Any]) -> str:
    """The standing table: how to reproduce it and from what, the figures of each arm, why
    each arm's tasks failed, the targets. The failures are a second table with the same rows:
    in one, fifteen columns run past a terminal's width."""
    arms = result.get("arms") or {}
    lines = [*_header(result), "", *_figures(arms), "", _wrap(COLUMNS), ""]
    if _causes(arms):
        lines += ["Failed first attempts in the window, by cause:", "", *_failures(arms)]
        lines += ["", _wrap(LEGEND), ""]
    lines += ["Targets:", ""]
    lines += [_target(t) for t in result.get("targets") or []] or [f"- {DASH}"]
    return "\n".join(lines) + "\n"


def _header(result: Mapping[str, Any]) -> list[str]:
    params = result.get("params") or {}
    window = result.get("window") or {}
    seeds = ", ".join(str(s) for s in window.get("seeds") or params.get("seeds") or [])
    first, last = window.get("from_session"), window.get("to_session")
    commit = params.get("commit")
    dirty = " + uncommitted changes" if params.get("uncommitted_changes") else ""
    fp = params.get("fingerprint")
    return [
        f"- command: `{command(params)}`",
        f"- commit: `{commit[:10] if commit else DASH}`{dirty} · fingerprint: `{fp or DASH}`",
        f"- window: sessions {_v(first)}–{_v(last)} of seeds {seeds or DASH} · "
        + _attempts(result),
        f"- wall time: {_wall(result.get('wall_s'))}",
    ]


def _attempts(result: Mapping[str, Any]) -> str:
    """The measured attempts behind each arm's rates: one count when every arm has it."""
    window = result.get("window") or {}
    first, last = window.get("from_session"), window.get("to_session")
    seeds = window.get("seeds") or []
    expected = (last - first + 1) * len(seeds) if first and last and seeds else None
    counts = {name: a.get("attempts", expected) for name, a in (result.get("arms") or {}).items()}
    values = set(counts.values()) or {expected}
    if len(values) == 1:
        n = values.pop()
        return f"{n:,} measured attempts per arm" if n is not None else f"measured attempts {DASH}"
    return "measured attempts: " + ", ".join(f"{k} {_v(n)}" for k, n in counts.items())


def command(params: Mapping[str, Any]) -> str:
    """The command line that reruns the benchmark with these parameters."""
    words = ["python benchmarks/quality.py"]
    words.append(f"--seeds {_seeds(params.get('seeds') or []) or DASH}")
    words.append(f"--sessions {_v(params.get('sessions'))}")
    if params.get("noise"):
        words.append(f"--noise {params['noise']:g}")
    if params.get("size") not in (None, "default"):
        words.append(f"--size {params['size']}")
    for knob in ("recurrence", "discovery", "distraction"):  # the world's realism, each
        if params.get(knob) is not None:
            words.append(f"--{knob} {params[knob]:g}")
    if params.get("arms"):
        words.append(f"--arms {','.join(params['arms'])}")
    return " ".join(words)


def _figures(arms: Mapping[str, Mapping[str, Any]]) -> list[str]:
    head = ["arm", "success (95% CI)", "tok/prompt", "prec. %", "sel. prec. %", "recall %"]
    head += ["bridge % (n)"]
    rows = []
    for name, a in arms.items():
        row = [name, interval(a.get("success_rate"), a.get("success_ci"))]
        row += [_num(a.get("tokens_per_prompt"))]
        row += [_int_pct(a.get(k)) for k in ("precision", "selection_precision", "recall")]
        row += [f"{_int_pct(a.get('bridge_success_rate'))} ({_v(a.get('bridge_attempts'))})"]
        rows.append(row)
    return _grid(head, rows)


def _failures(arms: Mapping[str, Mapping[str, Any]]) -> list[str]:
    causes = _causes(arms)
    head = ["arm", *(CAUSES.get(c, c.removeprefix("not_recalled_")) for c in causes)]
    rows = []
    for name, a in arms.items():
        failures = a.get("failures_by_cause") or {}
        rows.append([name, *(_v(failures.get(c)) for c in causes)])
    return _grid(head, rows)


def _causes(arms: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The known causes in stage order, then any other an arm reports, as first seen."""
    seen = [c for a in arms.values() for c in (a.get("failures_by_cause") or {})]
    return [c for c in CAUSES if c in seen] + list(
        dict.fromkeys(c for c in seen if c not in CAUSES)
    )


def _grid(head: list[str], rows: list[list[str]]) -> list[str]:
    """A Markdown table padded to its columns, so it reads in a terminal as on GitHub; the
    first column left-aligned, the figures right-aligned."""
    cells = [[c.replace("|", "\\|") for c in r] for r in [head, *rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(head))]

    def fmt(row: list[str]) -> str:
        padded = [row[0].ljust(widths[0])] + [
            c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)
        ]
        return "| " + " | ".join(padded) + " |"

    rule = "|" + "|".join(["-" * (widths[0] + 2)] + ["-" * (w + 1) + ":" for w in widths[1:]]) + "|"
    return [fmt(cells[0]), rule, *(fmt(r) for r in cells[1:])]


def _target(t: Mapping[str, Any]) -> str:
    ci = t.get("ci")
    bounds = f"{_num(ci[0])}–{_num(ci[1])}" if ci and ci != [None, None] else DASH
    measure = f" · measure: {t['measure']}" if t.get("measure") else ""
    return (
        f"- {t.get('target') or DASH}: {t.get('verdict') or DASH} · {_num(t.get('figure'))} "
        f"({bounds}), bound {_num(t.get('bound'))}{measure}"
    )


def interval(rate: float | None, ci: Sequence[float | None] | None) -> str:
    """A rate and its 95% interval in percent: `41.0 % (34–48)`; — for what is unknown."""
    lo, hi = ci if ci else (None, None)
    bounds = f"{_int_pct(lo)}–{_int_pct(hi)}" if lo is not None or hi is not None else DASH
    if rate is None or math.isnan(rate):
        return f"{DASH} ({bounds})"
    return f"{rate * 100:.1f} % ({bounds})"


def _wrap(text: str) -> str:
    """Prose in lines a terminal shows whole; Markdown joins them back into one paragraph."""
    return textwrap.fill(text, width=96, break_on_hyphens=False)


def _int_pct(x: float | None) -> str:
    """A rate in whole percent: the table's secondary rates, and the bounds of intervals."""
    return DASH if x is None or math.isnan(x) else f"{x * 100:.0f}"


def _num(x: float | None) -> str:
    if x is None or math.isnan(x):
        return DASH
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.3g}"


def _v(x: object) -> str:
    return DASH if x is None else str(x)


def _seeds(seeds: Sequence[object]) -> str:
    return ",".join(str(s) for s in seeds)


def _wall(seconds: float | None) -> str:
    if seconds is None or math.isnan(seconds):
        return DASH
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    spelled = f"{hours} h {minutes} min" if hours else f"{minutes} min {secs} s"
    return f"{seconds:,.1f} s ({spelled})" if minutes or hours else f"{seconds:,.1f} s"


# ---------------------------------------------------------------- publishing


def write(result: Mapping[str, Any], root: Path, files: Sequence[str] = FILES) -> Stamp:
    """Replace the block between the markers in each of `files` with the table and its stamp.

    Every file is read and checked before any is written, so a README without the markers
    leaves both as they were. A result that carries its own `params.fingerprint` (taken when
    the run started) must match the tree now, or the table would be stamped current for code
    it was not made from.
    """
    now = fingerprint(root)
    made = (result.get("params") or {}).get("fingerprint")
    if made and made != now:
        raise TableError(
            root,
            f"the result was made from fingerprint {made} but the deciding files are now {now}: "
            "rerun the benchmark on this tree before publishing its table",
        )
    params = {**(result.get("params") or {}), "fingerprint": now}
    stamp = Stamp(
        now,
        params.get("commit") or "unknown",
        _seeds(params.get("seeds") or []),
        _v(params.get("sessions")),
        parts(root),
    )
    block = f"{stamp.line()}\n\n{markdown({**result, 'params': params})}\n"
    updated = [(root / f, _replace(root / f, block)) for f in files]
    for path, text in updated:
        write_text(path, text)
    return stamp


def _replace(path: Path, block: str) -> str:
    text = _read(path)
    lines = text.splitlines(keepends=True)
    begin, end = _block(path, lines)
    return "".join(lines[: begin + 1]) + block + "".join(lines[end:])


def _read(path: Path) -> str:
    try:
        with open(path, encoding="utf-8", newline="") as fh:  # keep its line endings
            return fh.read()
    except FileNotFoundError:
        raise TableError(path, "no such file: the quality table is published there") from None


def _block(path: Path, lines: list[str]) -> tuple[int, int]:
    """The indices of the begin and end marker lines; an error naming `path` unless there
    is exactly one of each, in order."""
    begins = [i for i, line in enumerate(lines) if line.strip() == BEGIN]
    ends = [i for i, line in enumerate(lines) if line.strip() == END]
    if not begins and not ends:
        raise TableError(
            path,
            f"no quality table markers: add the two lines {BEGIN} and {END} where the table "
            "should go, then write it with `python benchmarks/quality.py --write-table`",
        )
    if len(begins) != 1 or len(ends) != 1 or ends[0] < begins[0]:
        raise TableError(
            path,
            f"broken quality table markers ({len(begins)} {BEGIN}, {len(ends)} {END}): "
            "keep exactly one of each, the begin line first",
        )
    return begins[0], ends[0]


# ---------------------------------------------------------------- checking


def check(root: Path, files: Sequence[str] = FILES) -> tuple[bool, str]:
    """Whether the published table is current: every file has a stamped block, the stamps
    agree, and their fingerprint is the deciding files' now. The message says which, and
    when stale, which `DECIDING` entries changed."""
    stamps: dict[str, Stamp] = {}
    problems = []
    for f in files:
        try:
            lines = _read(root / f).splitlines()
            begin, end = _block(root / f, lines)
        except TableError as e:
            problems.append(f"{f}: {e.reason}")
            continue
        found = [Stamp.parse(s) for s in lines[begin + 1 : end] if s.strip().startswith(STAMP)]
        if not found or found[0] is None:
            problems.append(
                f"{f}: the quality table has no stamp: write it with "
                "`python benchmarks/quality.py --write-table`"
            )
        else:
            stamps[f] = found[0]
    if problems:
        return False, "; ".join(problems)
    if len({(s.fingerprint, s.commit, s.seeds, s.sessions) for s in stamps.values()}) > 1:
        shown = ", ".join(f"{f} {s.fingerprint} at {s.commit[:10]}" for f, s in stamps.items())
        return False, f"the published tables differ ({shown}): write them from one run"
    stamp = next(iter(stamps.values()))
    now = fingerprint(root)
    made = f"fingerprint {stamp.fingerprint}, commit {stamp.commit[:10]}"
    if stamp.fingerprint == now:
        return True, f"the published table is current ({made})"
    changed = _changed(stamp.parts, parts(root)) or "the deciding files"
    return False, (
        f"stale: {changed} changed since the table was made at {stamp.commit[:10]} "
        f"(fingerprint {stamp.fingerprint}, now {now}); rerun `python benchmarks/quality.py "
        f"--seeds {stamp.seeds} --sessions {stamp.sessions} --write-table`"
    )


def _changed(then: Mapping[str, str], now: Mapping[str, str]) -> str:
    names = [e for e in now if then.get(e) != now[e]]
    names += [f"{e} (no longer deciding)" for e in then if e not in now]
    return ", ".join(names)

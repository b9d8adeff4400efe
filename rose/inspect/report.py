"""`rose report`: a defect report made of numbers and the user's own words. It sends nothing.

It holds versions, the platform, the graph engine, which backends are configured
and on PATH (names only), settings that differ from the defaults, counts, and
per-stage counts and timings from the event log. Never lesson text, titles,
prompts, transcripts or paths: error details are scrubbed of anything path-like,
quoted or lesson-titled and capped in length, and the home folder, the project
and the stores are replaced by `~`, `<project>` and `<store>` wherever they appear.
"""

from __future__ import annotations

import os
import platform
import re
import shlex
import statistics
import sys
import tempfile
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from rose.errors import RoseError
from rose.text import shorten

#: Where ROSE's own issues are filed, as `<owner>/<repo>`. The package names no repository,
#: so without it `rose report` prints no `gh issue create` line rather than a placeholder.
ISSUES_REPO_ENV = "ROSE_ISSUES_REPO"
DETAIL_CHARS = 120
RECENT_ERRORS = 10

_QUOTED = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"|`[^`\n]*`")
_PATHLIKE = re.compile(r"\S*[/\\]\S*")
_MARKERS = ("<global-store>", "<store>", "<project>", "~")


@dataclass
class Report:
    text: str
    title: str
    path: Path | None  # None when there was nowhere to save it

    def file_command(self) -> str | None:
        """The command that files this report, for the user to run (or not) themselves; None
        when no repository is known to file it in (ROSE_ISSUES_REPO unset)."""
        body = shown(self.path) if self.path else "report.md"
        repo = os.environ.get(ISSUES_REPO_ENV, "").strip()
        if not repo:
            return None
        return (
            f"gh issue create --repo {shlex.quote(repo)} --title {shlex.quote(self.title)} "
            f"--body-file {shlex.quote(body)}"
        )


class _Scrubber:
    """Replaces this machine's paths by markers, and reduces free text to a safe gist.

    `lessons` are the store's titles and texts: a title, or any run of three or more
    words a lesson also contains, is cut from an error's detail.
    """

    def __init__(self, places: list[tuple[Path, str]], lessons: list[str] | None):
        pairs: dict[str, str] = {}
        for path, marker in places:
            for form in {str(path), str(path.resolve())}:
                if len(form) > 1:
                    pairs.setdefault(form, marker)
        self.pairs = sorted(pairs.items(), key=lambda kv: -len(kv[0]))
        self.withhold = lessons is None  # the store could not be read: details may hold lessons
        texts = {" ".join(t.split()) for t in lessons or () if len(t.strip()) >= 4}
        self.titles = sorted(texts, key=len, reverse=True)
        self.trigrams = {g for t in texts for g in _trigrams(t)}

    def places(self, text: str) -> str:
        for raw, marker in self.pairs:
            text = text.replace(raw, marker)
        return text

    def _lessons(self, text: str) -> str:
        for title in self.titles:
            text = text.replace(title, "<lesson>")
        words = list(_WORD.finditer(text))
        cut: list[tuple[int, int]] = []
        for i in range(len(words) - 2):
            if _key(w.group(0) for w in words[i : i + 3]) in self.trigrams:
                start, end = words[i].start(), words[i + 2].end()
                if cut and start <= cut[-1][1]:
                    start = cut[-1][0]
                    cut.pop()
                cut.append((start, end))
        for start, end in reversed(cut):
            text = text[:start] + "<lesson>" + text[end:]
        return text

    def detail(self, text: Any) -> str:
        """An error's free text without paths, quoted content or lesson text, capped."""
        if self.withhold and text:
            return "(withheld: the lessons to scrub it of could not be read)"
        out = self._lessons(self.places(" ".join(str(text or "").split())))
        out = _QUOTED.sub("'…'", out)
        out = _PATHLIKE.sub(_path_marker, out)
        out = out.replace("|", "/")
        return shorten(out, DETAIL_CHARS)


_WORD = re.compile(r"\w+")


def _key(words: Any) -> str:
    return " ".join(w.lower() for w in words)


def _trigrams(text: str) -> set[str]:
    words = _WORD.findall(text)
    return {_key(words[i : i + 3]) for i in range(len(words) - 2)}


def _path_marker(m: re.Match) -> str:
    token = m.group(0)
    for marker in _MARKERS:
        if token.startswith(marker + "/") or token.startswith(marker + "\\"):
            return marker + "/…"
    return "<path>"


def shown(path: Path) -> str:
    """`path` relative to the working directory (where the user will run the command)."""
    try:
        return os.path.relpath(path.resolve(), Path.cwd().resolve())
    except ValueError:  # another drive
        return str(path)


# -- gathering --------------------------------------------------------------------------------


def _environment(store: Any) -> dict[str, Any]:
    import rose
    from rose import config as cfgmod

    try:
        config = store.config if store is not None else cfgmod.load([])
    except RoseError:
        config = cfgmod.Config()
    engine = store.engine if store is not None else config.graph.engine
    try:
        from rose.graph.engine import version

        engine_version = version(engine)
    except RoseError as exc:
        engine_version = f"unavailable ({type(exc).__name__})"
    try:
        from rose.model.registry import available_backends

        on_path = sorted(name for name, where in available_backends().items() if where)
    except ImportError:
        on_path = []
    return {
        "rose": rose.__version__,
        "python": f"{platform.python_version()} ({platform.python_implementation()})",
        "platform": f"{platform.system()} {platform.release()} {platform.machine()}".strip(),
        "engine": f"{engine} {engine_version}",
        "backend": config.agent,
        "on_path": on_path,
        "settings": _non_default(config),
    }


def _non_default(config: Any) -> list[tuple[str, Any, bool]]:
    """(key, value, set in the environment) for every setting that is not its default."""
    from rose import config as cfgmod

    out = []
    for key, (default, _help) in cfgmod.keys().items():
        value = cfgmod.get(config, key)
        if value != default:
            out.append((key, value, cfgmod.env_name(key) in os.environ))
    return out


def _lesson_texts(store: Any) -> list[str]:
    """Every lesson's title, gist and body: what error details are scrubbed of, never shown."""
    with store.graph() as g:
        ids = [r["id"] for r in g.q("lessons_all")]
        rows = [r["lesson"] for r in g.q("lesson_get", ids=ids)] if ids else []
    return [str(r.get(k) or "") for r in rows for k in ("title", "gist", "body")]


def _counts(store: Any) -> dict[str, Any]:
    """Numbers only, from `rose status`."""
    from rose.inspect.status import status

    s = status(store)
    return {
        "lessons": s["lessons"],
        "episodes": s["episodes"],
        "successful episodes": s["successful_episodes"],
        "families": len(s["families"]),
        "levels": "  ".join(f"L{k}: {v}" for k, v in sorted(s["levels"].items())) or "none",
        "statuses": "  ".join(f"{k}: {v}" for k, v in sorted(s["statuses"].items())) or "none",
        "apexes": len(s["apexes"]),
        "conflicts": s["conflicts"],
        "file problems": len(s["health"]["problems"]),
    }


def _recent(path: Path, days: int, now: datetime) -> list[dict]:
    """The events of the last `days` days; lines without a readable time are left out."""
    from rose.events import read_events

    out = []
    for e in read_events(path):
        try:
            t = datetime.fromisoformat(str(e.get("time", "")))
        except ValueError:
            continue
        if (t if t.tzinfo else t.replace(tzinfo=timezone.utc)) >= now - timedelta(days=days):
            out.append(e)
    return out


def _median(values: list[float]) -> str:
    return f"{statistics.median(values):g}" if values else "-"


def _judge_rows(events: list[dict]) -> list[list[str]]:
    """Per semantic call: calls, cached, failed, median latency, median uncached latency."""
    calls: dict[str, list[dict]] = {}
    for e in events:
        if e.get("kind") == "judge":
            calls.setdefault(_word(e.get("call")), []).append(e)
    rows = []
    for call, es in sorted(calls.items()):
        ms = [float(e.get("latency_ms", 0)) for e in es]
        asked = [m for m, e in zip(ms, es, strict=True) if not e.get("cached")]
        cached = sum(bool(e.get("cached")) for e in es)
        failed = sum(bool(e.get("error")) for e in es)
        rows.append([call, str(len(es)), str(cached), str(failed), _median(ms), _median(asked)])
    return rows


def _number(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def _usage_lines(events: list[dict]) -> list[str]:
    """Model-call cost and tokens as the backends reported them; simulated figures apart.

    A judge event's top-level figures are real (see `rose.judge.calls.usage_fields`); a
    simulated backend's invented ones sit under ``simulated`` and are never added in.
    """
    asked = [e for e in events if e.get("kind") == "judge" and not e.get("cached")]
    sims = [e["simulated"] for e in asked if isinstance(e.get("simulated"), dict)]
    real = [e for e in asked if not e.get("simulated")]
    lines = []
    if real:
        cost = sum(_number(e.get("cost_usd")) for e in real)
        t_in = sum(_number(e.get("input_tokens")) for e in real)
        t_out = sum(_number(e.get("output_tokens")) for e in real)
        lines.append(
            f"reported by the backends: ${cost:.4f}, {t_in:.0f} tokens in, {t_out:.0f} out, "
            f"over {len(real)} uncached call(s)"
        )
    if sims:
        cost = sum(_number(s.get("cost_usd")) for s in sims)
        t_in = sum(_number(s.get("input_tokens")) for s in sims)
        t_out = sum(_number(s.get("output_tokens")) for s in sims)
        ms = [_number(s.get("latency_ms")) for s in sims]
        lines.append(
            f"simulated, not measured and in no other figure here: ${cost:.4f}, about "
            f"{t_in:.0f} tokens in, {t_out:.0f} out (estimated), median {_median(ms)} ms "
            f"(projected), over {len(sims)} uncached call(s)"
        )
    return lines


def _stage_lines(events: list[dict]) -> list[str]:
    """Counts and timings for the stages that log numbers of their own."""
    lines = []
    inject = [e for e in events if e.get("kind") == "inject"]
    if inject:
        toks = [float(e.get("tokens", 0)) for e in inject]
        degraded = sum(1 for e in inject if e.get("degraded"))
        full = sum(len(e.get("full") or []) for e in inject)
        refreshed = sum(len(e.get("refreshed") or []) for e in inject)
        lines.append(
            f"inject: {len(inject)} prompt(s), median {_median(toks)} tokens; lessons in full "
            f"{full}, refreshed {refreshed}; degraded {degraded}"
        )
    reindex = [float(e.get("seconds", 0)) for e in events if e.get("kind") == "reindex"]
    if reindex:
        lines.append(f"reindex: {len(reindex)} run(s), median {_median(reindex)} s")
    ends = [e for e in events if e.get("kind") == "session-end"]
    if ends:
        turns = [float(e.get("turns", 0)) for e in ends]
        lines.append(f"session-end: {len(ends)} session(s), median {_median(turns)} turns")
    return lines


def _error_rows(events: list[dict], scrub: _Scrubber) -> list[list[str]]:
    errs = []
    for e in events:
        if e.get("kind") == "error":
            where = f"hook {_word(e.get('hook'))}"
        elif e.get("kind") == "judge" and e.get("error"):
            where = f"judge {_word(e.get('call'))}"
        else:
            continue
        when = _word(e.get("time"), extra=":+")
        errs.append([when, where, _word(e.get("error")), scrub.detail(e.get("detail", ""))])
    return errs[-RECENT_ERRORS:]


def _word(value: Any, *, extra: str = "") -> str:
    """A name-like field (hook, call, error class, time) reduced to name characters."""
    return re.sub(rf"[^A-Za-z0-9_.{extra}-]", "", str(value or ""))[:60] or "?"


# -- rendering --------------------------------------------------------------------------------


def _table(head: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return out + ["| " + " | ".join(cell or " " for cell in r) + " |" for r in rows]


def render(facts: dict[str, Any], about: str, expected: str) -> str:
    env = facts["env"]
    lines = ["# ROSE defect report", "", "## What happened", "", about.strip() or "(not given)"]
    lines += ["", "## What was expected", "", expected.strip() or "(not given)", ""]
    lines += ["## Environment", ""]
    lines += [
        f"- rose {env['rose']}",
        f"- Python {env['python']} on {env['platform']}",
        f"- graph engine: {env['engine']}",
        f"- configured backend: {env['backend']}",
        f"- backends on PATH: {', '.join(env['on_path']) or 'none'}",
    ]
    settings = [f"`{k}` = `{v}`" + (" (environment)" if e else "") for k, v, e in env["settings"]]
    lines.append("- settings that differ from the defaults: " + ("; ".join(settings) or "none"))
    lines += ["", "## Store", ""]
    if facts.get("store_error"):
        lines.append(f"- unavailable: {facts['store_error']}")
    for key, value in facts.get("counts", {}).items():
        lines.append(f"- {key}: {value}")
    days = facts["days"]
    events = facts.get("events", [])
    lines += ["", f"## Events, last {days} day{'s' if days != 1 else ''}", ""]
    if not events:
        lines.append("none recorded")
    else:
        kinds: dict[str, int] = {}
        for e in events:
            kinds[_word(e.get("kind"))] = kinds.get(_word(e.get("kind")), 0) + 1
        lines += _table(["kind", "count"], [[k, str(n)] for k, n in sorted(kinds.items())])
        judge = _judge_rows(events)
        if judge:
            lines += ["", "Model calls (latency in ms, measured around each call):", ""]
            head = ["call", "calls", "cached", "failed", "median", "median uncached"]
            lines += _table(head, judge)
            usage = _usage_lines(events)
            if usage:
                lines += [""] + [f"- {u}" for u in usage]
        stages = _stage_lines(events)
        if stages:
            lines += [""] + [f"- {s}" for s in stages]
    errors = facts.get("errors", [])
    lines += ["", f"## Recent errors (newest {RECENT_ERRORS}, details scrubbed)", ""]
    lines += _table(["time", "where", "error", "detail"], errors) if errors else ["none"]
    lines += ["", "Generated by `rose report`: no lesson text, titles, prompts or paths.", ""]
    return "\n".join(lines)


# -- the whole report ---------------------------------------------------------------------------


def _places(store: Any) -> list[tuple[Path, str]]:
    places: list[tuple[Path, str]] = []
    if store is not None:
        if store.project is not None:
            places += [(store.project.root, "<store>"), (store.project.root.parent, "<project>")]
        if store.global_ is not None:
            places.append((store.global_.root, "<global-store>"))
    places += [(Path.cwd(), "<project>"), (Path.home(), "~")]
    places.append((Path(tempfile.gettempdir()), "<tmp>"))
    places.append((Path(sys.prefix), "<python>"))
    return places


def report(
    about: str, expected: str = "", *, days: int = 7, store: Any = None, now: datetime | None = None
) -> Report:
    """Build the report, save it under `.rose/reports/` (redacted), and return it."""
    from rose.disk.atomic import write_text
    from rose.redaction.redact import redact

    if days < 1:
        raise RoseError(f"--days must be at least 1, not {days}")
    now = now or datetime.now(timezone.utc)
    store_error = ""
    if store is None:
        from rose.store.facade import Store

        try:
            store = Store.open()
        except RoseError as exc:
            store_error = type(exc).__name__
    facts: dict[str, Any] = {"env": _environment(store), "days": days, "store_error": store_error}
    lessons: list[str] | None = []
    if store is not None:
        facts["events"] = _recent(store.primary.events, days, now)
        try:
            facts["counts"] = _counts(store)
            if any(e.get("detail") for e in facts["events"]):
                lessons = _lesson_texts(store)
        except RoseError as exc:
            facts["store_error"] = f"counts unavailable ({type(exc).__name__})"
            lessons = None
    scrub = _Scrubber(_places(store), lessons)
    facts["errors"] = _error_rows(facts.get("events", []), scrub)
    text = redact(scrub.places(render(facts, about, expected)))
    first = redact(scrub.places(" ".join(about.split())))
    title = "rose: " + shorten(first, 70)
    stamp = now.strftime("%Y%m%dT%H%M%SZ")
    folder = store.primary.root / "reports" if store is not None else None
    if folder is None:
        return Report(text, title, None)
    path = folder / f"{stamp}.md"
    n = 2
    while path.exists():
        path = folder / f"{stamp}-{n}.md"
        n += 1
    write_text(path, text)
    return Report(text, title, path)

"""`rose report` carries numbers and the user's words, never the store's content or the
machine's paths: no lesson title or body, no prompt, no tmp or home path (not even inside a
logged error's detail), backends by name only, secrets redacted; it is saved under
.rose/reports/, counts only the last N days, works without a store, and ends with the
command that would file it. Its cost totals are what backends reported; a simulated
backend's projection is shown apart, labelled, and added to no total."""

from __future__ import annotations

import json
import os
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rose.cli import app
from rose.inspect.report import DETAIL_CHARS, _Scrubber, report
from rose.store.facade import Store

pytestmark = pytest.mark.graph

TITLE = "Quokka deploys need the zebra flag"
BODY = "Always pass --zebra-mode=striped when deploying quokka services to staging."
PROMPT = "why does the marmoset pipeline keep failing"


def _events(store: Store, *records: dict) -> None:
    with store.primary.events.open("a", encoding="utf-8") as fh:
        for rec in records:
            fh.write(json.dumps(rec) + "\n")


def _ago(**kw) -> str:
    return (datetime.now(timezone.utc) - timedelta(**kw)).isoformat(timespec="milliseconds")


@pytest.fixture
def seeded(store: Store, tmp_path: Path) -> Store:
    store.add(BODY, title=TITLE, family="deploy")
    from rose import config

    config.set_override(store.primary.config, "recall.max_pack_tokens", "4000")
    lesson_file = next(store.primary.nodes.rglob("*.md"))
    _events(
        store,
        {"time": _ago(hours=3), "kind": "judge", "call": "relevance", "cached": False,
         "latency_ms": 800.0},
        {"time": _ago(hours=2), "kind": "judge", "call": "relevance", "cached": True,
         "latency_ms": 2.0},
        {"time": _ago(hours=1), "kind": "judge", "call": "assess", "cached": False,
         "latency_ms": 1200.0, "error": "BackendTimeout"},
        {"time": _ago(minutes=30), "kind": "inject", "session": "s1", "full": ["n_1"],
         "refreshed": [], "fresh": 0, "tokens": 140, "degraded": f"no model for {PROMPT}"},
        {"time": _ago(minutes=20), "kind": "error", "hook": "user-prompt-submit",
         "error": "LessonFileError",
         "detail": f"{lesson_file}: bad front matter near {TITLE!r} in {BODY}"},
        {"time": _ago(minutes=10), "kind": "error", "hook": "stop", "error": "OSError",
         "detail": f"[Errno 13] denied: {tmp_path}/home/.claude/settings.json and "
         f"{Path.home()}/work/x " + "y" * 400},
        {"time": _ago(days=30), "kind": "inject", "tokens": 999, "full": []},
    )  # fmt: skip
    return store


def _run(*args: str):
    return CliRunner().invoke(app, ["report", *args])


def _assert_private(text: str, tmp_path: Path) -> None:
    for secret in (TITLE, BODY, PROMPT, "zebra", "marmoset", "quokka", "Quokka"):
        assert secret not in text, secret
    for path in {str(tmp_path), str(tmp_path.resolve()), str(Path.home())}:
        assert path not in text, path


def test_report_holds_numbers_and_never_lessons_or_paths(
    seeded: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("ROSE_ISSUES_REPO", "example/rose")
    res = _run("--about", "Recall went quiet after an edit", "--expected", "the lesson served")
    assert res.exit_code == 0, res.output
    saved = list((seeded.primary.root / "reports").glob("*.md"))
    assert len(saved) == 1
    text = saved[0].read_text(encoding="utf-8")
    assert text in res.output
    _assert_private(res.output, tmp_path)
    for must in (
        "Recall went quiet after an edit",
        "the lesson served",
        "- rose 0.1.0",
        "- Python ",
        f"graph engine: {seeded.engine} ",
        "configured backend: claude",
        "`recall.max_pack_tokens` = `4000`",
        "- lessons: 1",
        "- families: 1",
        "- levels: L0: 1",
        "| relevance | 2 | 1 | 0 |",
        "| assess | 1 | 0 | 1 |",
        "inject: 1 prompt(s), median 140 tokens",
        "| hook user-prompt-submit | LessonFileError | <store>/… bad front matter near '…' in",
        "| judge assess | BackendTimeout |",
    ):
        assert must in text, must
    assert "999" not in text  # the 30-day-old event is outside the default 7 days
    err_line = next(line for line in text.splitlines() if "| OSError |" in line)
    detail = err_line.rsplit("|", 2)[-2].strip()
    assert len(detail) <= DETAIL_CHARS and detail.endswith("…")
    assert "~/…" in detail or "<tmp>/…" in detail or "<path>" in detail
    assert f"--body-file .rose/reports/{saved[0].name}" in res.output
    assert "gh issue create --repo example/rose" in res.output.splitlines()[-1]
    assert "Nothing was sent" in res.output


def test_days_widen_the_window(seeded: Store):
    text = report("x", days=60, store=seeded).text
    assert "| inject | 2 |" in text
    assert "Events, last 60 days" in text
    assert "| inject | 1 |" in report("x", store=seeded).text


def test_cost_totals_leave_simulated_figures_out(store: Store):
    sim = {"input_tokens": 4000, "output_tokens": 300, "cost_usd": 0.5, "latency_ms": 4200.0}
    _events(
        store,
        {"time": _ago(hours=3), "kind": "judge", "call": "relevance", "cached": False,
         "latency_ms": 900.0, "backend_latency_ms": 850.0, "input_tokens": 2112,
         "output_tokens": 34, "cost_usd": 0.0123},
        {"time": _ago(hours=2), "kind": "judge", "call": "scope", "cached": False,
         "latency_ms": 0.4, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0,
         "simulated": sim},
        {"time": _ago(hours=1), "kind": "judge", "call": "scope", "cached": False,
         "latency_ms": 0.3, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0,
         "simulated": {**sim, "latency_ms": 4400.0}},
    )  # fmt: skip
    text = report("costs", store=store).text
    assert "- reported by the backends: $0.0123, 2112 tokens in, 34 out, over 1 uncached" in text
    assert (
        "- simulated, not measured and in no other figure here: $1.0000, about 8000 tokens in, "
        "600 out (estimated), median 4300 ms (projected), over 2 uncached call(s)"
    ) in text
    assert "| scope | 2 | 0 | 0 | 0.35 | 0.35 |" in text  # measured, not the projected 4300


def test_backends_are_named_not_located(store: Store, tmp_path: Path, monkeypatch):
    bin_dir = tmp_path / "fakebin"
    bin_dir.mkdir()
    fake = bin_dir / "codex"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("ROSE_AGENT", "codex")
    text = report("backend check", store=Store.open()).text
    assert "backends on PATH: codex" in text or "backends on PATH: claude, codex" in text
    assert "`agent` = `codex` (environment)" in text
    assert str(bin_dir) not in text


def test_user_words_are_redacted_and_machine_paths_replaced(store: Store, tmp_path: Path):
    key = "sk-ant-" + "a1B2c3D4e5" * 4
    res = _run("--about", f"crash with {key} in {tmp_path}/project/src")
    assert res.exit_code == 0, res.output
    assert key not in res.output
    assert "[REDACTED:" in res.output
    _assert_private(res.output, tmp_path)
    assert "<project>/src" in res.output


def test_without_a_store_it_prints_and_saves_nothing(project: Path, tmp_path: Path):
    res = _run("--about", "rose init fails")
    assert res.exit_code == 0, res.output
    assert "StoreNotFound" in res.output
    assert "not saved" in res.output
    assert not (project / ".rose").exists()
    _assert_private(res.output, tmp_path)


def test_days_must_be_positive(store: Store):
    res = _run("--about", "x", "--days", "0")
    assert res.exit_code != 0
    assert "Traceback" not in res.output


def test_scrubber_detail():
    places = [(Path("/srv/proj/.rose"), "<store>"), (Path("/home/u"), "~")]
    s = _Scrubber(places, ["Secret Plan", "Always retry the flaky billing endpoint twice."])
    assert s.detail("bad /srv/proj/.rose/nodes/a.md here") == "bad <store>/… here"
    assert s.detail("open /etc/passwd or C:\\Users\\u\\x.txt") == "open <path> or <path>"
    assert s.detail("near 'Use port 5433' in Secret Plan") == "near '…' in <lesson>"
    assert s.detail("a | b") == "a / b"
    assert len(s.detail("z" * 500)) == DETAIL_CHARS
    assert s.detail("failed: retry the FLAKY billing endpoint now") == "failed: <lesson> now"
    assert s.detail("the billing team") == "the billing team"  # two shared words are not a lesson
    assert _Scrubber(places, None).detail("anything").startswith("(withheld")

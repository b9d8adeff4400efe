"""The published quality table cannot go stale unseen (`benchmarks/_table.py`).

Locks in: the fingerprint moves with every edit to a file that decides the figures and with
nothing else (not a README, not another module, not bytecode); a table written between the
markers checks current until such an edit, and then `check` names the entries that changed;
a README without the markers is refused by name, before any file is written; the Markdown
shows every arm and a dash for what was not measured. Runs on a small fake tree in tmp_path,
never the repository's own files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests._bench import module

_table = module("_table")

README = "# Project\n\nIntro.\n\n{begin}\nold table\n{end}\n\nAfter the table.\n"
TREE = {
    "rose/loop/selection/recall.py": "def recall(): ...\n",
    "rose/loop/selection/_walk.py": "WALK = 1\n",
    "rose/judge/calls.py": "class Judge: ...\n",
    "rose/sim/world.py": "WORLD = 'seeded'\n",
    "prompts/relevance.j2": "Choose among {{ lessons }}\n",
    "rose/jobs/learning.py": "STAGES = ('reflect',)\n",
    "rose/jobs/queue.py": "JOBS = ()\n",
    "rose/sim/hosts/drive.py": "DRIVE = 1\n",
    "benchmarks/quality.py": "print('quality')\n",
    "benchmarks/_table.py": "TABLE = 1\n",
    "rose/cli/main.py": "CLI = 1\n",  # not deciding
    "tests/test_x.py": "def test(): ...\n",  # not deciding
}


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    for rel, text in TREE.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    for rel in _table.FILES:
        (root / rel).write_text(README.format(begin=_table.BEGIN, end=_table.END))
    return root


def _arm(success: float | None, **over: Any) -> dict[str, Any]:
    causes = ("never_taught", "not_stored", "not_recalled_relevance", "not_applied")
    return {
        "success_rate": success,
        "success_ci": [0.34, 0.48],
        "tokens_per_prompt": 368.4,
        "precision": 0.45,
        "selection_precision": 0.5,
        "recall": 0.6,
        "bridge_success_rate": 0.3,
        "bridge_attempts": 42,
        "model_calls_per_prompt": 1.0,
        "failures_by_cause": dict.fromkeys(causes, 2),
        **over,
    }


def _result() -> dict[str, Any]:
    return {
        "params": {
            "seeds": [1, 2],
            "sessions": 100,
            "noise": 0.0,
            "size": "default",
            "arms": ["none", "ceiling", "topk-learned", "rose", "rose-noise10"],
            "commit": "0123456789abcdef0123456789abcdef01234567",
            "uncommitted_changes": False,
        },
        "window": {"from_session": 51, "to_session": 100, "seeds": [1, 2]},
        "arms": {
            "none": _arm(0.12, precision=None, bridge_success_rate=None, bridge_attempts=0),
            "ceiling": _arm(0.61),
            "topk-learned": _arm(0.41),
            "rose": _arm(0.58),
            "rose-noise10": _arm(None, success_ci=None, failures_by_cause=None),
        },
        "targets": [
            {
                "target": "success ≥ 95% of the ceiling",
                "measure": "rose / ceiling",
                "figure": 0.93,
                "ci": [0.85, 1.01],
                "bound": 0.95,
                "verdict": "missed",
            },
            {
                "target": "held-out pass rate ≥ 90%",
                "measure": "compression",
                "figure": None,
                "ci": None,
                "bound": 0.9,
                "verdict": "not measured (compression is not built)",
            },
        ],
        "wall_s": 1234.5,
    }


def test_fingerprint_follows_deciding_files_only(tree: Path) -> None:
    before = _table.fingerprint(tree)
    assert len(before) == 16 and int(before, 16) >= 0
    (tree / "rose/cli/main.py").write_text("CLI = 2\n")
    (tree / "tests/test_x.py").unlink()
    (tree / "README.md").write_text("rewritten\n")
    (tree / "rose/loop/__pycache__").mkdir()
    (tree / "rose/loop/__pycache__/recall.cpython-310.pyc").write_bytes(b"\0bytecode")
    (tree / "rose/loop/__pycache__/lastfailed").write_text("[]")
    (tree / "rose/sim/stray.pyc").write_bytes(b"\0bytecode")
    assert _table.fingerprint(tree) == before

    (tree / "rose/sim/world.py").write_text("WORLD = 'SEEDED'\n")  # same size, new bytes
    edited = _table.fingerprint(tree)
    assert edited != before
    (tree / "prompts/new.j2").write_text("")  # a new deciding file, even empty, counts
    added = _table.fingerprint(tree)
    assert added != edited
    (tree / "prompts/new.j2").rename(tree / "prompts/renamed.j2")  # so does its name
    assert _table.fingerprint(tree) != added


def test_written_table_checks_current_and_keeps_the_rest(tree: Path) -> None:
    stamp = _table.write(_result(), tree)
    ok, message = _table.check(tree)
    assert ok, message
    assert stamp.fingerprint == _table.fingerprint(tree)
    assert f"the published table is current (fingerprint {stamp.fingerprint}" in message
    texts = [(tree / f).read_text() for f in _table.FILES]
    assert texts[0] == texts[1]
    assert texts[0].startswith("# Project\n\nIntro.\n\n" + _table.BEGIN + "\n")
    assert texts[0].endswith(_table.END + "\n\nAfter the table.\n")
    assert "old table" not in texts[0]
    assert stamp.line() in texts[0].splitlines()
    assert f"fingerprint: `{stamp.fingerprint}`" in texts[0]
    _table.write(_result(), tree)  # again: the block is replaced, not added to
    assert (tree / "README.md").read_text() == texts[0]


def test_stamp_line_round_trips(tree: Path) -> None:
    stamp = _table.write(_result(), tree)
    line = stamp.line()
    assert line.startswith("<!-- quality-table: fingerprint=") and line.endswith(" -->")
    assert " commit=0123456789abcdef0123456789abcdef01234567 seeds=1,2 sessions=100 " in line
    assert _table.Stamp.parse(line) == stamp
    assert set(stamp.parts) == set(_table.DECIDING)


def test_edit_to_deciding_files_makes_check_stale_naming_them(tree: Path) -> None:
    _table.write(_result(), tree)
    (tree / "rose/loop/selection/_walk.py").write_text("WALK = 2\n")
    (tree / "prompts/relevance.j2").write_text("Choose well among {{ lessons }}\n")
    (tree / "rose/cli/main.py").write_text("CLI = 3\n")
    ok, message = _table.check(tree)
    assert not ok
    assert message.startswith("stale: rose/loop, prompts changed since the table was made at ")
    assert "0123456789 " in message
    assert "rose/judge" not in message and "rose/cli" not in message
    assert "--seeds 1,2 --sessions 100" in message


def test_missing_markers_name_the_file_and_write_nothing(tree: Path) -> None:
    (tree / "benchmarks/README.md").write_text("# Benchmarks\n\nNo table here.\n")
    before = (tree / "README.md").read_text()
    with pytest.raises(_table.TableError) as caught:
        _table.write(_result(), tree)
    message = str(caught.value)
    assert message.startswith(str(tree / "benchmarks/README.md"))
    assert _table.BEGIN in message and _table.END in message and "add the two lines" in message
    assert (tree / "README.md").read_text() == before  # checked before any was written
    ok, why = _table.check(tree)
    assert not ok and "benchmarks/README.md" in why and "no quality table markers" in why


@pytest.mark.parametrize(
    "body",
    [
        "{begin}\n{begin}\n{end}\n",  # two begins
        "{end}\ntable\n{begin}\n",  # out of order
        "{begin}\nno end\n",
    ],
)
def test_broken_markers_are_refused(tree: Path, body: str) -> None:
    (tree / "README.md").write_text(body.format(begin=_table.BEGIN, end=_table.END))
    with pytest.raises(_table.TableError, match="broken quality table markers"):
        _table.write(_result(), tree)


def test_tables_from_different_runs_are_not_current(tree: Path) -> None:
    _table.write(_result(), tree)
    other = _result()
    other["params"]["seeds"] = [3]
    _table.write(other, tree, files=("README.md",))
    ok, message = _table.check(tree)
    assert not ok and message.startswith("the published tables differ")


def test_block_without_stamp_is_not_current(tree: Path) -> None:
    ok, message = _table.check(tree)
    assert not ok
    assert message == (
        "README.md: the quality table has no stamp: write it with "
        "`python benchmarks/quality.py --write-table`; "
        "benchmarks/README.md: the quality table has no stamp: write it with "
        "`python benchmarks/quality.py --write-table`"
    )


def test_result_from_other_code_is_refused(tree: Path) -> None:
    result = _result()
    result["params"]["fingerprint"] = _table.fingerprint(tree)
    (tree / "rose/sim/hosts/drive.py").write_text("DRIVE = 2\n")  # edited during the run
    with pytest.raises(_table.TableError, match="rerun the benchmark on this tree"):
        _table.write(result, tree)


def test_markdown_has_every_arm_and_dashes_for_none() -> None:
    text = _table.markdown(_result())
    lines = text.splitlines()
    assert lines[0] == (
        "- command: `python benchmarks/quality.py --seeds 1,2 --sessions 100 "
        "--arms none,ceiling,topk-learned,rose,rose-noise10`"
    )
    assert lines[1] == "- commit: `0123456789` · fingerprint: `—`"
    assert lines[2] == "- window: sessions 51–100 of seeds 1, 2 · 100 measured attempts per arm"
    assert lines[3] == "- wall time: 1,234.5 s (20 min 34 s)"
    for name in _result()["arms"]:  # a row in the figures and in the failures, in order
        assert sum(line.startswith(f"| {name} ") for line in lines) == 2
    rows = [line for line in lines if line.startswith("| ")]
    assert [r.split("|")[1].strip() for r in rows[1:6]] == list(_result()["arms"])
    cells = {r.split("|")[1].strip(): [c.strip() for c in r.split("|")[2:-1]] for r in rows[1:6]}
    assert cells["topk-learned"] == ["41.0 % (34–48)", "368", "45", "50", "60", "30 (42)"]
    assert cells["none"][2] == "—" and cells["none"][5] == "— (0)"
    assert cells["rose-noise10"][0] == "— (—)"
    failures = [r for r in rows if r.startswith("| rose-noise10 ")][1]
    assert [c.strip() for c in failures.split("|")[2:-1]] == ["—"] * 4
    assert "- success ≥ 95% of the ceiling: missed · 0.93 (0.85–1.01), bound 0.95" in text
    assert "- held-out pass rate ≥ 90%: not measured (compression is not built) · — (—)" in text


def test_markdown_states_what_reproduces_it() -> None:
    result = _result()
    result["params"].update(noise=0.1, size="large", uncommitted_changes=True, commit=None)
    result["arms"]["rose"]["attempts"] = 99
    text = _table.markdown(result)
    assert "--sessions 100 --noise 0.1 --size large --arms " in text
    assert "- commit: `—` + uncommitted changes" in text
    assert "measured attempts: none 100, ceiling 100, topk-learned 100, rose 99," in text
    result["params"].update(recurrence=1.0, discovery=0.25, distraction=0.0)
    text = _table.markdown(result)
    assert "--recurrence 1 --discovery 0.25 --distraction 0 --arms " in text  # the world too


@pytest.mark.parametrize(
    ("rate", "ci", "shown"),
    [
        (0.41, [0.34, 0.48], "41.0 % (34–48)"),
        (1.0, [0.9312, 1.0], "100.0 % (93–100)"),
        (0.0, [0.0, 0.046], "0.0 % (0–5)"),
        (0.5, None, "50.0 % (—)"),
        (None, [0.1, 0.2], "— (10–20)"),
        (None, None, "— (—)"),
    ],
)
def test_interval_formatting(rate: float | None, ci: list[float] | None, shown: str) -> None:
    assert _table.interval(rate, ci) == shown

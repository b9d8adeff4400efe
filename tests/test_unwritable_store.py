"""A read-only store or a full disk never ends a command in a traceback. Locks in: `rose add`,
`status`, `query` and `doctor` used to die with an OSError (EROFS/ENOSPC), because even
read commands wrote the graph's file-scan cache; now reads go on (one line says what was
not cached), a write ends in one line naming the file, and hooks exit 0.

As root a 0555 folder stops nobody, so the disk's refusals come from the atomic writer's
fault hook (`ROSE_WRITE_FAULT`) and from `/dev/full`; `test_graph_damage` covers a real
read-only folder as an unprivileged user."""

from __future__ import annotations

import errno
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rose.cli import app
from rose.disk import atomic
from rose.disk.atomic import FAULT_ENV, append_line, write_text
from rose.errors import RoseError, WriteFailed
from rose.store.facade import Store
from tests._hookrun import payload, run_hook

pytestmark = pytest.mark.graph

READS = (
    ["status"],
    ["query", "MATCH (n:Lesson) RETURN count(n) AS lessons"],
    ["doctor"],
    ["tree"],
    ["recall", "-p", "retry the network call"],
)


@pytest.fixture
def lessons(store: Store) -> Store:
    store.add("Retry flaky network calls with backoff.")
    store.add("Pin the lockfile before upgrading a dependency.")
    return store


def _files(store: Store) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(store.primary.nodes.rglob("*.md"))}


def _run(args: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    monkeypatch.setattr(atomic, "_told", False)  # one line a process: each run is one
    res = CliRunner().invoke(app, args)
    assert res.exception is None or isinstance(res.exception, SystemExit), (args, res.output)
    assert "Traceback" not in res.output
    return res.exit_code, res.output


def test_dev_full_is_a_write_failed_naming_it():
    with pytest.raises(WriteFailed) as info:
        append_line(Path("/dev/full"), "an event")
    assert info.value.errno == errno.ENOSPC
    assert isinstance(info.value, RoseError) and isinstance(info.value, OSError)
    assert str(info.value).startswith("/dev/full: could not be written (no space left)")


@pytest.mark.parametrize("fault", ["EROFS", "ENOSPC", "EACCES"])
def test_the_fault_hook_fails_every_write_and_leaves_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fault: str
):
    target = tmp_path / "kept.txt"
    target.write_text("before\n")
    monkeypatch.setenv(FAULT_ENV, fault)
    with pytest.raises(WriteFailed, match=f"^{target}: could not be written") as info:
        write_text(target, "after\n")
    assert info.value.errno == getattr(errno, fault)
    with pytest.raises(WriteFailed):
        append_line(target, "after")
    assert target.read_text() == "before\n"


@pytest.mark.parametrize("fault", ["EROFS", "ENOSPC"])
@pytest.mark.parametrize("args", READS, ids=lambda a: a[0])
def test_read_commands_answer_and_say_at_most_one_line(
    lessons: Store, monkeypatch: pytest.MonkeyPatch, fault: str, args: list[str]
):
    lessons.primary.recall_view.unlink()  # a cache to rebuild: the read must try to write
    before = _files(lessons)
    monkeypatch.setenv(FAULT_ENV, fault)
    code, output = _run(args, monkeypatch)
    assert code == 0, output
    said = [line for line in output.splitlines() if line.startswith("rose: ")]
    assert len(said) <= 1, said
    if args[0] == "query":
        assert "2" in [line.strip() for line in output.splitlines()]
    if args[0] == "tree":
        assert "Retry flaky network calls with backoff" in output
    assert _files(lessons) == before


def test_a_read_only_store_is_read_from_its_files_and_says_so(
    lessons: Store, monkeypatch: pytest.MonkeyPatch
):
    first = next(lessons.primary.nodes.rglob("*.md"))
    text = first.read_text()
    first.write_text(text.replace("\ntitle: ", "\ntitle: Edited by hand, ", 1))
    monkeypatch.setenv(FAULT_ENV, "EROFS")
    titles = "MATCH (n:Lesson) RETURN n.title AS title ORDER BY title"
    code, output = _run(["query", "--json", titles], monkeypatch)
    assert code == 0, output
    said = [line for line in output.splitlines() if line.startswith("rose: ")]
    assert len(said) == 1 and "read-only file system" in said[0], said
    rows = json.loads(output.split("\nrose: ")[0])
    assert rows[0]["title"].startswith("Edited by hand, ")  # the files, read into memory
    assert first.read_text() != text and lessons.query(titles)  # and nothing else was lost


@pytest.mark.parametrize("fault", ["EROFS", "ENOSPC"])
def test_add_fails_in_one_line_naming_the_path_and_loses_nothing(
    lessons: Store, monkeypatch: pytest.MonkeyPatch, fault: str
):
    before = _files(lessons)
    monkeypatch.setenv(FAULT_ENV, fault)
    code, output = _run(["add", "--no-reconcile", "A lesson the disk refuses."], monkeypatch)
    assert code == 1, output
    (line,) = output.strip().splitlines()
    assert line.startswith(f"rose: {lessons.primary.root}")
    assert "cannot be written" in line or "could not be written" in line
    monkeypatch.delenv(FAULT_ENV)
    assert _files(lessons) == before
    assert len(Store.open().read("lessons_all")) == 2


@pytest.mark.parametrize("fault", ["EROFS", "ENOSPC"])
def test_hooks_exit_0_on_a_disk_that_refuses_writes(lessons: Store, project: Path, fault: str):
    for event in ("user-prompt-submit", "stop"):
        rc, out, raw, err = run_hook(event, payload(event, project), env={FAULT_ENV: fault})
        assert rc == 0, err
        assert "Traceback" not in raw + err

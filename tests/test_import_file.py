"""`rose import FILE` teaches a file of notes as lessons the model splits it into.

Locks in: `--dry-run` prints every lesson in full and stores nothing; a real import stores
each lesson, consolidated as `rose add` consolidates one, with the file's provenance
(`repository` inside the current repository, `outside` beyond it, `--from` overriding); a
file too big for one call is cut at its headings and paragraphs into parts that each fit,
one `split` call a part, later pieces of a section opening with its heading; a model that
fails names the file and the part, and nothing of the file is stored; a store that stops
part way says which lessons it stored before it stopped.
"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from rose import config, tokens
from rose.cli import app
from rose.errors import BackendFailed, RoseError
from rose.jobs.importing import import_file
from rose.judge.calls import Judge
from rose.loop.reflection.split import SplitFailed, chunks
from rose.model.registry import simulated_model
from rose.model.scripted import ScriptedBackend
from rose.store.facade import Store

pytestmark = pytest.mark.graph

NOTES = """# Working here

## Test database

Integration tests need Postgres on port 5433, not 5432: docker-compose.test.yml maps it
there. If they hang at "connecting", run `make test-db` first.

## Migrations

Run migrations with `make migrate`, never `alembic upgrade` directly: the make target sets
`DB_SCHEMA=app`, without which alembic writes to `public`.
"""

PORT = {
    "title": "Test database port",
    "gist": "Integration tests use Postgres on port 5433.",
    "family": "testing",
    "body": "Integration tests need Postgres on port 5433, not 5432: docker-compose.test.yml "
    'maps it there. If they hang at "connecting", run `make test-db` first.',
}
MIGRATE = {
    "title": "Running migrations",
    "gist": "Migrations run through make, never alembic directly.",
    "family": "migrations",
    "body": "Run migrations with `make migrate`, never `alembic upgrade` directly: the make "
    "target sets `DB_SCHEMA=app`, without which alembic writes to `public`.",
}


def _judge(backend: ScriptedBackend) -> Judge:
    return Judge(backend, cache_path=None, events_path=None)


def _scripted(*splits: dict | BaseException) -> ScriptedBackend:
    backend = ScriptedBackend()
    for answer in splits:
        backend.push("split", answer)
    return backend


def _simulated(store: Store) -> None:
    config.set_override(store.primary.config, "agent", "simulated")
    config.set_override(store.primary.config, "model", simulated_model(seed=2, size="small"))


def _cli(*args: str):
    return CliRunner().invoke(app, list(args), prog_name="rose")


def test_dry_run_prints_each_lesson_in_full_and_stores_nothing(store, project):
    _simulated(store)
    (project / "CLAUDE.md").write_text(NOTES)
    res = _cli("import", "CLAUDE.md", "--dry-run")
    assert res.exit_code == 0, res.output
    head, *rest = res.stdout.split("\n--- lesson ")
    assert head.startswith("CLAUDE.md: 2 lessons (1 call; from repository); a dry run")
    assert [r.split("\n")[0] for r in rest] == [
        "1 of 2 · test-database · Test database",
        "2 of 2 · migrations · Migrations",
    ]
    for paragraph in NOTES.split("\n\n")[2::2]:  # each point, verbatim and whole
        assert paragraph.strip() in res.stdout
    assert store.read("lessons_all") == []


def test_each_lesson_is_stored_consolidated_with_the_files_provenance(store, project):
    store.add("Deploys use Argo Rollouts.", family="deploy")  # something to relate them to
    backend = _scripted({"lessons": [PORT, MIGRATE]})
    for _ in range(2):
        backend.push("related", {"matches": [], "descend": []})
    (project / "AGENTS.md").write_text(NOTES)
    done = import_file(project / "AGENTS.md", judge=_judge(backend), scope="project")
    assert [r.call for r in backend.requests] == ["split", "related", "related"]
    assert backend.requests[0].prompt.count("port 5433") == 1  # the file reached the model
    assert (done.provenance, done.parts) == ("repository", 1)
    kept = {n.title: n for n in (Store.open().get(i) for d in done.done for i in d.ids)}
    assert set(kept) == {PORT["title"], MIGRATE["title"]}
    port = kept[PORT["title"]]
    assert (port.body, port.gist, port.family) == (PORT["body"], PORT["gist"], "testing")
    assert {n.provenance for n in kept.values()} == {"repository"}
    assert "title" not in port.provisional and "gist" not in port.provisional  # the model's


def test_a_file_beyond_the_repository_is_outside_unless_said(store, tmp_path):
    elsewhere = tmp_path / "elsewhere" / "NOTES.md"
    elsewhere.parent.mkdir()
    elsewhere.write_text(NOTES)  # beyond tmp_path/project, where the project store is
    done = import_file(elsewhere, judge=_judge(_scripted({"lessons": [PORT]})), reconcile=False)
    (node,) = [Store.open().get(i) for i in done.done[0].ids]
    assert (done.provenance, node.provenance, node.scope) == ("outside", "outside", "project")
    done = import_file(
        elsewhere, provenance="user", judge=_judge(_scripted({"lessons": [MIGRATE]})),
        reconcile=False,
    )  # fmt: skip
    assert Store.open().get(done.done[0].ids[0]).provenance == "user"


def test_a_large_file_is_cut_into_parts_that_each_fit(store, project):
    sections = [
        f"## Section {k}\n\n" + "\n\n".join(f"Point {k}.{p}: " + "word " * 60 for p in range(6))
        for k in range(4)
    ]
    text = "# Big notes\n\n" + "\n\n".join(sections)
    budget = 300
    parts = chunks(text, budget)
    assert len(parts) > 4 and all(tokens.count(p) <= budget for p in parts)
    assert any(p.startswith("## Section 2 (continued)\n\n") for p in parts)
    said = [line for p in parts for line in p.splitlines() if line.startswith("Point ")]
    assert said == [line for line in text.splitlines() if line.startswith("Point ")]
    (project / "BIG.md").write_text(text)
    backend = _scripted(*({"lessons": []} for _ in parts))
    done = import_file(project / "BIG.md", judge=_judge(backend), dry_run=True, budget=budget)
    assert done.parts == len(parts) == len(backend.requests)
    assert f"part 2 of {len(parts)}" in backend.requests[1].prompt


def test_a_model_failure_names_the_file_and_stores_nothing(store, project):
    (project / "CLAUDE.md").write_text(NOTES)
    backend = _scripted({"lessons": [PORT]}, BackendFailed("scripted", "the model is busy"))
    with pytest.raises(SplitFailed) as caught:
        import_file(project / "CLAUDE.md", judge=_judge(backend), budget=60)
    message = str(caught.value)
    assert "could not import CLAUDE.md" in message and "part 2 of" in message
    assert "the model is busy" in message and "nothing was stored" in message
    assert store.read("lessons_all") == []
    res = _cli("import", "CLAUDE.md")  # the default agent, claude, is not installed here
    assert res.exit_code == 1
    assert (
        res.stderr.startswith("rose: could not import CLAUDE.md") and "Traceback" not in res.output
    )
    assert store.read("lessons_all") == []


def test_a_store_stopped_part_way_says_what_it_stored(store, project):
    (project / "CLAUDE.md").write_text(NOTES)
    blank = {**MIGRATE, "body": "   "}  # the model wrote a lesson with no text
    backend = _scripted({"lessons": [PORT, blank]})
    with pytest.raises(RoseError) as caught:
        import_file(project / "CLAUDE.md", judge=_judge(backend), reconcile=False)
    message = str(caught.value)
    (kept,) = [r["id"] for r in store.read("lessons_all")]
    assert "stopped at lesson 2 of 2 (Running migrations)" in message
    assert f"Stored before it: added {kept}" in message


def test_a_missing_file_is_one_line(store):
    res = _cli("import", "NOPE.md")
    assert res.exit_code == 1 and "cannot import NOPE.md: there is no such file" in res.stderr

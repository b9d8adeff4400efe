"""Where lessons land when ROSE is installed for the user only (no store yet).

Locks in: the first project lesson in a repository with no store creates `.rose/` at the
repository's root (not the subfolder the agent works in) and says so, in a line and in the
status line's notices; the first global lesson creates `~/.rose` and says so; a project
lesson outside any repository lands in the global store, said so; the scope judgement is
asked (and told the repository's name) and obeyed; an existing store is used as it is.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rose.files.notices import take_notices
from rose.loop.reflection.consolidate import consolidate
from rose.model.scripted import ScriptedBackend
from rose.store.facade import Store
from tests._reconcile import judge, lesson

pytestmark = pytest.mark.graph


@pytest.fixture
def repo(project: Path) -> Path:
    """A git repository (as a folder with `.git`), worked in from a subfolder."""
    (project / ".git").mkdir()
    sub = project / "src" / "pkg"
    sub.mkdir(parents=True)
    return sub


def _bare(*scopes: str):
    from rose.judge.calls import Judge

    backend = ScriptedBackend({"scope": [{"scope": s, "reason": "r"} for s in scopes]})
    return Judge(backend, cache_path=None, events_path=None), backend


def test_first_project_lesson_creates_the_store_at_the_repository_root(
    repo: Path, project: Path, capsys: pytest.CaptureFixture[str]
):
    take_notices()
    j, backend = _bare("project")
    done = consolidate(
        None, j, lesson("n_new00001", "Run make lint first."), source="reflector", start=repo
    )
    assert done.store.project is not None
    assert done.store.project.root == (project / ".rose").resolve()
    assert not (repo / ".rose").exists()
    assert (project / ".rose" / "nodes").is_dir()
    assert Store.open(repo).get("n_new00001").scope == "project"
    assert f"created a project store at {project / '.rose'}" in capsys.readouterr().err
    assert take_notices() == ["new store: .rose/"]
    assert "The repository: project" in backend.requests[0].prompt


def test_first_global_lesson_creates_the_global_store(repo: Path, tmp_path: Path, capsys):
    j, _b = _bare("global")
    done = consolidate(
        None, j, lesson("n_new00001", "git rebase -i needs an editor."), source="user", start=repo
    )
    glob = tmp_path / "home" / ".rose"
    assert done.store.global_ is not None and done.store.global_.root == glob
    assert [p.stem for p in (glob / "nodes").rglob("*.md")] == ["n_new00001"]
    assert not (repo.parents[1] / ".rose").exists()
    assert f"created the global store {glob}" in capsys.readouterr().err


def test_a_project_lesson_outside_any_repository_goes_global_and_says_so(project: Path, capsys):
    j, _b = _bare("project")
    done = consolidate(None, j, lesson("n_new00001", "A lesson."), source="user", start=project)
    assert done.lesson is not None and done.lesson.scope == "global"
    assert not (project / ".rose").exists()
    assert "not in a git repository" in capsys.readouterr().err


def test_an_existing_store_is_used_and_nothing_is_created(store: Store, tmp_path: Path, capsys):
    j, backend = judge(store, scope=[{"scope": "project", "reason": "its layout"}])
    consolidate(store, j, lesson("n_new00001", "Our CI runs on main only."), source="user")
    assert store.get("n_new00001").scope == "project"
    assert not (tmp_path / "home" / ".rose").exists()
    assert capsys.readouterr().err == ""
    (scope_prompt,) = [r.prompt for r in backend.requests if r.call == "scope"]
    assert "Our CI runs on main only." in scope_prompt

"""A scan takes a settled folder's names from the last scan, and still sees every change.

Locks in: `rose.files.scan.survey` lists a folder again unless its mtime, ctime and inode are
as the kept listing says and it had settled (`RACY_NS`) before that listing was made; every
lesson file is stat'ed whatever the listing says. So an in-place edit, an added or removed
lesson or episode, a removed folder, a file added with the folder's mtime set back, and an
addition in the same clock tick as the listing are each found, and what changed since the
kept scan is reported. Through the store: after an open that keeps a settled listing, the
next open still sees an edit, a new episode file and a removed lesson file, reading only it.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from rose.files import scan
from tests._calls import counted


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder counts as settled as soon as it is listed (not `RACY_NS` later): a test
    cannot wait two seconds for each folder it writes to."""
    monkeypatch.setattr(scan, "RACY_NS", 0)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "store"
    for fam, name in (("net", "a"), ("net", "b"), ("deps", "c")):
        (r / "nodes" / fam).mkdir(parents=True, exist_ok=True)
        (r / "nodes" / fam / f"{name}.md").write_text(f"lesson {name}\n")
    (r / "episodes").mkdir()
    (r / "episodes" / "e1.json").write_text("{}")
    time.sleep(0.01)  # past the clock tick of the last change
    return r


def _roots(root: Path) -> list[tuple[str, str]]:
    return [(str(root), "project")]


def _kept(root: Path) -> dict:
    first = scan.survey(_roots(root))
    assert first.keep  # listed afresh, and settled: worth keeping
    return scan.record(first, "fp")


def _listings(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the folders listed (scandir or listdir through a descriptor)."""
    seen: list[int] = []
    real_scandir, real_listdir = os.scandir, os.listdir

    def scandir(fd):
        seen.append(fd)
        return real_scandir(fd)

    def listdir(fd):
        seen.append(fd)
        return real_listdir(fd)

    monkeypatch.setattr(scan.os, "scandir", scandir)
    monkeypatch.setattr(scan.os, "listdir", listdir)
    return seen


def test_a_settled_unchanged_store_is_not_listed_again(root: Path, settled, monkeypatch):
    prev = _kept(root)
    listed = _listings(monkeypatch)
    again = scan.survey(_roots(root), prev=prev)
    assert listed == []
    assert again.changed == [] and again.removed == [] and not again.keep
    assert again.states() == scan.survey(_roots(root)).states()
    assert again.base == "fp"


def test_an_edit_in_place_is_seen_though_the_folder_is_not_listed(root: Path, settled, monkeypatch):
    prev = _kept(root)
    path = root / "nodes" / "net" / "a.md"
    path.write_text("lesson a, edited\n")  # in place: the folder stays as it was
    listed = _listings(monkeypatch)
    again = scan.survey(_roots(root), prev=prev)
    assert listed == []
    assert [st.path for st in again.changed] == [str(path)]


def test_added_and_removed_files_and_folders_are_seen(root: Path, settled):
    prev = _kept(root)
    (root / "nodes" / "net" / "b.md").unlink()
    (root / "nodes" / "net" / "d.md").write_text("lesson d\n")
    (root / "episodes" / "e2.json").write_text("{}")
    (root / "nodes" / "deps" / "c.md").unlink()
    (root / "nodes" / "deps").rmdir()
    (root / "nodes" / "new").mkdir()
    (root / "nodes" / "new" / "e.md").write_text("lesson e\n")
    again = scan.survey(_roots(root), prev=prev)
    assert sorted(Path(st.path).name for st in again.changed) == ["d.md", "e.md", "e2.json"]
    assert sorted(Path(p).name for p in again.removed) == ["b.md", "c.md"]
    assert again.states() == scan.survey(_roots(root)).states()


def test_an_addition_with_the_folder_mtime_set_back_is_seen(root: Path, settled):
    """mtime can be set back by hand (or a tool); ctime cannot: the listing is not trusted."""
    prev = _kept(root)
    folder = root / "episodes"
    before = folder.stat()
    (folder / "e2.json").write_text("{}")
    os.utime(folder, ns=(before.st_atime_ns, before.st_mtime_ns))
    again = scan.survey(_roots(root), prev=prev)
    assert str(folder / "e2.json") in again.states()
    assert [Path(st.path).name for st in again.changed] == ["e2.json"]


def test_a_folder_changed_in_the_tick_of_its_listing_is_listed_again(root: Path):
    """A change the clock's granularity hides (the folder's mtime and ctime as the listing
    saw them) is found because the listing was made too soon after the folder changed."""
    folder = root / "episodes"
    (folder / "e2.json").write_text("{}")  # the folder has just changed
    prev = scan.record(scan.survey(_roots(root)), "fp")
    (folder / "e3.json").write_text("{}")
    # As if e3 had landed in the same tick as e2: the folder's identity is what was kept.
    st = folder.stat()
    kind, scope, _, listed, names, dirs, stats = prev["folders"][str(folder)]
    ident = (st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
    prev["folders"][str(folder)] = (kind, scope, ident, listed, names, dirs, stats)
    again = scan.survey(_roots(root), prev=prev)
    assert str(folder / "e3.json") in again.states()


def test_a_lesson_removed_between_listing_and_stat_is_left_out(root: Path, settled, monkeypatch):
    prev = _kept(root)
    gone = root / "nodes" / "net" / "a.md"
    real = os.stat

    def stat(name, *args, **kwargs):
        if name == "a.md":
            gone.unlink(missing_ok=True)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(scan.os, "stat", stat)
    again = scan.survey(_roots(root), prev=prev)
    assert str(gone) not in again.states() and str(gone) in again.removed


def test_stamps_are_the_same_from_a_kept_listing(root: Path, settled):
    prev = _kept(root)
    fresh = scan.survey(_roots(root))
    kept = scan.survey(_roots(root), prev=prev)
    assert scan.stamp(kept, _roots(root)) == scan.stamp(fresh, _roots(root))
    assert scan.evidence_stamp(kept) == scan.evidence_stamp(fresh)
    # and the hook's scan of lessons alone gives the view's stamp
    lessons = scan.survey(_roots(root), episodes=False)
    assert scan.stamp(lessons, _roots(root)) == scan.stamp(fresh, _roots(root))
    (root / "nodes" / "net" / "a.md").write_text("lesson a, edited at more length\n")
    assert scan.stamp(scan.survey(_roots(root), prev=prev), _roots(root)) != scan.stamp(
        fresh, _roots(root)
    )


@pytest.mark.graph
def test_the_store_sees_each_change_after_a_settled_listing(store, settled, monkeypatch):
    from rose.disk.atomic import write_json
    from rose.files.nodefile import dump_episode
    from rose.graph import synced
    from rose.models import Episode

    a = store.add("Retry flaky network calls with backoff.", family="net")
    b = store.add("Pin the graph engine's version.", family="deps")
    time.sleep(0.01)
    with store.graph():
        pass
    kept = synced.read_listing(store.graph_path)
    assert kept is not None and len(kept["folders"]) == 4  # nodes, its two families, episodes
    listed = _listings(monkeypatch)
    with store.graph():
        pass
    assert listed == []  # settled: every folder's names come from the kept listing

    def titles() -> dict[str, str]:
        return {r["id"]: r["title"] for r in store.read("lessons_all")}

    # an in-place edit (the folder is not touched)
    path = Path(store.read("lesson_get", ids=[a.id])[0]["lesson"]["path"])
    path.write_text(path.read_text(encoding="utf-8").replace("title:", "title: Edited", 1))
    assert titles()[a.id].startswith("Edited") and store.last_sync.read == 1
    # a new episode file, written by another process
    ep = Episode(prompt="p", outcome="success", used=[b.id])
    write_json(store.primary.episode_path(ep.id), dump_episode(ep))
    assert store.read("episode_get", ids=[ep.id]) and store.last_sync.read == 1
    # a lesson file removed by hand
    Path(store.read("lesson_get", ids=[b.id])[0]["lesson"]["path"]).unlink()
    assert b.id not in titles() and store.last_sync.removed == 1


@pytest.mark.graph
def test_a_write_syncs_from_its_own_files_and_the_next_open_needs_no_database(
    store, monkeypatch: pytest.MonkeyPatch
):
    """A write stats the files it wrote rather than scanning the store again; what it kept
    is what a scan finds, so the next open opens no database."""
    from rose.store import facade

    a = store.add("Retry flaky network calls with backoff.", family="net")
    store.add("Pin the graph engine's version.", family="deps")
    surveys = counted(monkeypatch, scan, "survey")
    node = store.get(a.id)
    node.body += " Give up after five tries."
    surveys.clear()
    store.save(node)
    assert len(surveys) == 1  # the open's scan; none after the write
    assert store.last_sync.read == 1
    opens: list = []
    monkeypatch.setattr(facade, "open_graph", lambda *a, **k: opens.append(a) or 1 / 0)
    with store.graph():
        pass
    assert opens == []
    monkeypatch.undo()
    assert "five tries" in store.get(a.id).body


@pytest.mark.graph
def test_a_file_changed_by_another_process_during_a_write_is_seen_next(
    store, monkeypatch: pytest.MonkeyPatch
):
    from rose.files import journal

    a = store.add("Retry flaky network calls with backoff.", family="net")
    b = store.add("Pin the graph engine's version.", family="net")
    other = Path(store.read("lesson_get", ids=[b.id])[0]["lesson"]["path"])
    real = journal.apply

    def apply_and_meanwhile(root, files, remove):
        real(root, files, remove)
        text = other.read_text(encoding="utf-8")  # a hand edit lands as the write finishes
        other.write_text(text.replace("title:", "title: Meanwhile", 1), encoding="utf-8")

    monkeypatch.setattr(journal, "apply", apply_and_meanwhile)
    node = store.get(a.id)
    node.body += " Give up after five tries."
    store.save(node)
    monkeypatch.undo()
    assert store.get(b.id).title.startswith("Meanwhile")
    assert "five tries" in store.get(a.id).body


@pytest.mark.graph
def test_a_write_to_a_new_folder_scans_again(store):
    store.add("Retry flaky network calls with backoff.", family="net")
    fresh = store.add("Keep the cache warm.", family="cache")  # a folder the scan never saw
    assert store.get(fresh.id).family == "cache"
    with store.graph():
        pass
    assert store.last_sync.read == 0

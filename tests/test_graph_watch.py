"""The graph server's watch of a store's folders (rose.graph._watch): an open stats only
the folders that changed since its kept scan, and never misses a change: an in-place edit,
a new folder and the files written into it before its watch, a folder moved, a symbolic
link, a lost event queue, another server's token, a network file system."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from rose.files import scan
from rose.graph import _watch, server, synced
from rose.graph._watch import Watch
from rose.store.facade import Store
from tests._kept import own_folder, wait


@pytest.fixture
def watch():
    w = Watch.open()
    if w is None:
        pytest.skip("no inotify here")
    yield w
    w.close()


def _tree(root: Path) -> tuple[str, str]:
    """A store-shaped folder: nodes/a/x.md, nodes/b/y.md, episodes/e1.json."""
    for rel in ("nodes/a/x.md", "nodes/b/y.md", "episodes/e1.json"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("text\n")
    return str(root / "nodes"), str(root / "episodes")


def _asked(w: Watch, tops: list[str], since) -> tuple[list, set, set]:
    told = w.changes(tops, since)
    return told["token"], set(told["fresh"]), set(told["dirty"])


def test_a_top_is_fresh_until_a_token_taken_after_its_watch(watch, tmp_path):
    nodes, episodes = _tree(tmp_path)
    missing = str(tmp_path / "other" / "nodes")
    token, fresh, _ = _asked(watch, [nodes, episodes, missing], None)
    assert fresh == {nodes, episodes, missing}
    token, fresh, dirty = _asked(watch, [nodes, episodes, missing], token)
    assert fresh == {missing} and dirty == set()  # a missing top is never vouched for
    Path(missing).mkdir(parents=True)
    token, fresh, _ = _asked(watch, [nodes, episodes, missing], token)
    assert fresh == {missing}  # watched from now: the token before says nothing of it
    _, fresh, _ = _asked(watch, [nodes, episodes, missing], token)
    assert fresh == set()


def test_an_edit_in_place_marks_its_folder_alone(watch, tmp_path):
    nodes, episodes = _tree(tmp_path)
    token, _, _ = _asked(watch, [nodes, episodes], None)
    with open(tmp_path / "nodes/b/y.md", "r+") as fh:  # no rename: the folder's mtime stays
        fh.write("TEXT")
    token, fresh, dirty = _asked(watch, [nodes, episodes], token)
    assert fresh == set() and dirty == {nodes + "/b"}
    os.utime(tmp_path / "nodes/a/x.md", ns=(1, 1))  # a stamp alone changes the fingerprint
    token, _, dirty = _asked(watch, [nodes, episodes], token)
    assert dirty == {nodes + "/a"}
    (tmp_path / "episodes/e2.json").write_text("{}")
    _, _, dirty = _asked(watch, [nodes, episodes], token)
    assert dirty == {episodes}


def test_a_new_folder_is_changed_in_full_and_watched_from_then(watch, tmp_path):
    nodes, episodes = _tree(tmp_path)
    token, _, _ = _asked(watch, [nodes, episodes], None)
    (tmp_path / "nodes/c/d").mkdir(parents=True)  # written before any watch could be added
    (tmp_path / "nodes/c/d/z.md").write_text("new\n")
    token, _, dirty = _asked(watch, [nodes, episodes], token)
    assert {nodes, nodes + "/c"} <= dirty and nodes + "/c/d" in dirty
    (tmp_path / "nodes/c/d/z.md").write_text("edited\n")
    _, _, dirty = _asked(watch, [nodes, episodes], token)
    assert dirty == {nodes + "/c/d"}


def test_a_folder_moved_makes_its_top_fresh(watch, tmp_path):
    nodes, episodes = _tree(tmp_path)
    token, _, _ = _asked(watch, [nodes, episodes], None)
    (tmp_path / "nodes/a").rename(tmp_path / "moved-away")
    token, fresh, _ = _asked(watch, [nodes, episodes], token)
    assert fresh == {nodes}
    (tmp_path / "moved-away/x.md").write_text("changed where the old watch went\n")
    (tmp_path / "nodes/b/y.md").write_text("changed\n")
    _, fresh, dirty = _asked(watch, [nodes, episodes], token)
    assert fresh == set() and dirty == {nodes + "/b"}  # not a path under nodes/a


def test_a_top_removed_and_made_again_is_fresh(watch, tmp_path):
    nodes, episodes = _tree(tmp_path)
    token, _, _ = _asked(watch, [nodes, episodes], None)
    shutil.rmtree(nodes)
    _tree(tmp_path)
    _, fresh, _ = _asked(watch, [nodes, episodes], token)
    assert nodes in fresh


def test_a_symbolic_link_under_a_top_refuses_it(watch, tmp_path):
    nodes, episodes = _tree(tmp_path)
    outside = tmp_path / "elsewhere.md"
    outside.write_text("x\n")
    token, _, _ = _asked(watch, [nodes, episodes], None)
    (tmp_path / "nodes/a/link.md").symlink_to(outside)  # its target changes out of sight
    for _ in range(2):
        token, fresh, _ = _asked(watch, [nodes, episodes], token)
        assert fresh == {nodes}
    assert "symbolic link" in watch.refused[nodes]


def test_a_lost_event_queue_or_another_watch_voids_every_token(watch, tmp_path):
    nodes, episodes = _tree(tmp_path)
    token, _, _ = _asked(watch, [nodes, episodes], None)
    token, fresh, _ = _asked(watch, [nodes, episodes], token)
    assert fresh == set()
    watch.seq += 1
    watch._event(-1, _watch.IN_Q_OVERFLOW, "", set())
    _, fresh, _ = _asked(watch, [nodes, episodes], token)
    assert fresh == {nodes, episodes}
    _, fresh, _ = _asked(watch, [nodes, episodes], ["another-server", token[1]])
    assert fresh == {nodes, episodes}


def test_a_network_file_system_is_not_watched(tmp_path):
    info = tmp_path / "mountinfo"
    info.write_text(
        "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
        f"40 22 0:50 / {tmp_path}/sh\\040are rw - nfs4 srv:/x rw\n"
    )
    assert _watch.mount_type(str(tmp_path / "sh are" / "nodes"), str(info)) == "nfs4"
    assert _watch.mount_type(str(tmp_path / "share"), str(info)) == "ext4"
    assert _watch.mount_type("/", str(tmp_path / "no-such-file")) is None


def test_a_survey_takes_a_clean_folder_as_kept_and_scans_the_rest(tmp_path, monkeypatch):
    nodes, _ = _tree(tmp_path)
    first = scan.survey([(str(tmp_path), "project")], token=["n", 1])
    path = tmp_path / "files"
    path.write_bytes(scan.kept_bytes(first, "print"))
    prev = scan.read_kept(str(path))
    assert prev is not None and prev["watch"] == ["n", 1]
    (tmp_path / "nodes/a/x.md").write_text("edited, same folder\n")
    (tmp_path / "nodes/b/y.md").write_text("edited, a folder said to be clean\n")
    stats = []
    real = os.stat
    monkeypatch.setattr(
        scan.os, "stat", lambda p, **k: stats.append(p) or real(p, **k), raising=True
    )
    again = scan.survey(
        [(str(tmp_path), "project")], prev=prev, clean=lambda f: f != nodes + "/a", token=["n", 2]
    )
    assert [st.path for st in again.changed] == [nodes + "/a/x.md"]
    assert "y.md" not in stats and "x.md" in stats
    assert again.keep and again.token == ["n", 2]
    assert again.patched("p", [nodes + "/b/y.md"], []).token == ["n", 2]


def test_a_kept_scan_with_a_malformed_token_is_not_taken(tmp_path):
    _tree(tmp_path)
    s = scan.survey([(str(tmp_path), "project")])
    s.token = ["n", "not a number"]
    path = tmp_path / "files"
    path.write_bytes(scan.kept_bytes(s, "print"))
    assert scan.read_kept(str(path)) is None


@pytest.mark.graph
def test_a_served_store_stats_only_what_changed_and_misses_no_edit(store: Store, monkeypatch):
    with own_folder(monkeypatch, "rw-", server.stop_all):
        if Watch.open() is None:
            pytest.skip("no inotify here")
        ids = [store.add(f"Step {i}: run the seeder {i} times.", family=f"f{i % 3}").id
               for i in range(6)]  # fmt: skip
        store.read("level_counts")
        assert wait(lambda: server.serving(store.graph_path, store.engine), 20)
        stats: list[str] = []
        real = os.stat

        def counting(p, **k):
            if "dir_fd" in k:
                stats.append(p)
            return real(p, **k)

        monkeypatch.setattr(scan.os, "stat", counting)
        with Store.open(store.primary.root.parent).graph():  # the first scan after the watch
            pass
        assert (synced.read_listing(store.graph_path) or {}).get("watch")
        stats.clear()
        with Store.open(store.primary.root.parent).graph():
            pass
        assert stats == []
        edited = next(store.primary.root.glob(f"nodes/*/{ids[4]}.md"))
        text = edited.read_text()
        with open(edited, "r+") as fh:  # in place, the same size: only the watch can tell
            fh.write(text.replace("seeder 4 times", "SEEDER 4 TIMES"))
        again = Store.open(store.primary.root.parent)
        assert "SEEDER 4 TIMES" in again.get(ids[4]).body
        assert sorted(stats) == sorted(p.name for p in edited.parent.glob("*.md"))


def test_a_top_that_is_a_link_or_another_path_of_a_watched_one_is_refused(watch, tmp_path):
    nodes, episodes = _tree(tmp_path)
    (tmp_path / "alias").symlink_to(tmp_path)
    linked = tmp_path / "other"
    linked.mkdir()
    (linked / "nodes").symlink_to(nodes)
    alias = str(tmp_path / "alias" / "nodes")
    token, _, _ = _asked(watch, [nodes, alias, str(linked / "nodes")], None)
    for _ in range(2):
        (tmp_path / "nodes/a/x.md").write_text("changed\n")
        token, fresh, dirty = _asked(watch, [nodes, alias, str(linked / "nodes")], token)
        assert fresh == {alias, str(linked / "nodes")} and dirty == {nodes + "/a"}


def test_a_folder_made_and_removed_before_the_read_loses_no_later_change(watch, tmp_path):
    nodes, episodes = _tree(tmp_path)
    token, _, _ = _asked(watch, [nodes, episodes], None)
    (tmp_path / "nodes/scratch").mkdir()  # an editor's or git's scratch folder, gone at once
    (tmp_path / "nodes/scratch").rmdir()
    (tmp_path / "nodes/b/y.md").write_text("edited after it\n")
    _, fresh, dirty = _asked(watch, [nodes, episodes], token)
    assert nodes + "/b" in dirty or nodes in fresh


def test_another_folder_put_at_a_tops_path_makes_it_fresh(watch, tmp_path):
    root = tmp_path / "home"
    nodes, episodes = _tree(root)
    token, _, _ = _asked(watch, [nodes, episodes], None)
    shutil.copytree(root, tmp_path / "restored")
    (tmp_path / "restored/nodes/a/x.md").write_text("the restored text\n")
    root.rename(tmp_path / "old")  # no event reaches the watches below: they went with it
    (tmp_path / "restored").rename(root)
    _, fresh, _ = _asked(watch, [nodes, episodes], token)
    assert fresh == {nodes, episodes}


def test_a_relative_top_is_never_vouched_for(watch, tmp_path, monkeypatch):
    _tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    token, fresh, _ = _asked(watch, ["nodes"], None)
    _, fresh, _ = _asked(watch, ["nodes"], token)
    assert fresh == {"nodes"}  # it names the asker's folder, not the server's


def test_an_unreadable_folder_refuses_its_top(watch, tmp_path, monkeypatch):
    nodes, episodes = _tree(tmp_path)
    real = os.scandir

    def scandir(path):
        if str(path).endswith("/nodes/a"):
            raise PermissionError(13, "Permission denied")
        return real(path)

    monkeypatch.setattr(_watch.os, "scandir", scandir)
    _, fresh, _ = _asked(watch, [nodes, episodes], None)
    assert "Permission denied" in watch.refused[nodes] and fresh == {nodes, episodes}

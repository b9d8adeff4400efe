"""What the last holder of a store's graph left, so an open with nothing changed needs no
database (`rose.graph.synced` keeps the record beside the database).

`unchanged` tells, from the record, a scan of the files and the database's identity,
whether the graph and the recall view are as the files want them; `remember` writes the
record while the database is still held, after its last write; `view_key` is what the
recall view is a function of, which the record keeps beside it; `after_write` is the scan
a write's sync starts from.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from rose.files import journal
from rose.graph.sync import SyncReport

if TYPE_CHECKING:
    from rose.store.facade import Store


def unchanged(store: Store) -> tuple[SyncReport | None, bool]:
    """(the sync report, whether the recall view is current) when the files match what
    the database was last synced to and the database is as its last holder left it;
    (None, False) when the database must be opened to tell. When the database is as
    left but the files moved on, the report holds the scan (and `held_by` the database's
    identity), for the sync to start from."""
    from rose.graph import synced
    from rose.graph.sync import fingerprint, scan, schema_version

    path = store.graph_path
    rec = synced.read(path)
    if rec is None or rec.get("schema") != schema_version():
        return None, False
    if synced.identity(path) != rec.get("db") or (store.primary.root / journal.NAME).exists():
        return None, False
    errors = [tuple(e) for e in rec.get("errors", [])]
    survey = scan(store.dirs, synced.read_listing(path), path)
    print_ = fingerprint(survey, [p for p, _ in errors])
    report = SyncReport(errors=errors, survey=survey, fingerprint=print_)
    if print_ != rec.get("files"):  # something changed: the sync need not scan again
        report.held_by = rec.get("db")
        return report, False
    if survey.keep:  # folders listed afresh: the next scan may take their names from here
        synced.write_listing(path, print_, survey)
    view = rec.get("view") or {}
    view_ok = view.get("key") == view_key(store, print_) and view.get(
        "file"
    ) == synced.file_identity(store.primary.recall_view)
    return report, view_ok


def view_key(store: Store, print_: str) -> list:
    """What the recall view is a function of: the files (by their fingerprint), the config
    files' mtimes (the view's stamp has them) and the recall settings."""
    from rose.graph import synced
    from rose.store import view as recall_view

    rc = store.config.recall
    configs = [synced.file_identity(os.path.join(r, "config.yaml")) for r, _ in store.roots]
    return [recall_view.FORMAT, print_, configs, rc.max_pack_tokens, rc.whole_tokens,
            rc.enabled, rc.stays_fresh_turns]  # fmt: skip


def remember(store: Store) -> None:
    """Record what the graph now holds, for the next open. Called while the database is
    still held, after the last write to it."""
    from rose.graph import synced
    from rose.graph.sync import schema_version

    if store.unwritable:  # a read-only or in-memory graph: nothing to record, say so
        from rose.store.unwritable import say_read

        say_read(store)
        return
    report = store.last_sync
    if not report.fingerprint:
        return
    rec: dict[str, Any] = {
        "schema": schema_version(),
        "files": report.fingerprint,
        "errors": [list(e) for e in report.errors],
        "db": synced.identity(store.graph_path),
    }
    checked = store.view_checked
    if checked and checked[1] == report.fingerprint:
        rec["view"] = {"key": checked[0], "file": synced.file_identity(store.primary.recall_view)}
    synced.write(store.graph_path, rec)


def after_write(store: Store, files: list[tuple[str, str]], remove: list[str]) -> SyncReport | None:
    """The scan the graph was synced from with this write's files in it (`Survey.patched`),
    for the sync after the write: the write costs a stat of its own files, not a scan of
    the store. None (the sync scans) when a file lies outside the folders it lists."""
    from rose.graph import synced
    from rose.graph.sync import fingerprint

    report = store.last_sync
    if not report.fingerprint:
        return None
    survey = report.survey.patched(report.fingerprint, [p for p, _ in files], remove)
    if survey is None:
        return None
    print_ = fingerprint(survey, [p for p, _ in report.errors])
    held = synced.identity(store.graph_path)  # the database is held here: nobody wrote it
    return SyncReport(errors=report.errors, survey=survey, fingerprint=print_, held_by=held)

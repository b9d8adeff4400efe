"""Reading a store the disk will not let ROSE write (read-only, or full).

Every read still answers: the database is opened read-only when it holds what the files
want, and otherwise built in memory from the files. What could not be cached (the scan
record, the recall view) is said once, in one line on stderr, and the command goes on.

A cache the disk refuses (`rose.disk.atomic.uncached`) is passed over with the same one line.
"""

from __future__ import annotations

from contextlib import ExitStack
from typing import TYPE_CHECKING

from rose.disk.atomic import tell_once

if TYPE_CHECKING:
    from rose.errors import StoreReadOnly
    from rose.graph.engine import Graph
    from rose.graph.sync import SyncReport
    from rose.store.facade import Store

_how: dict[str, str] = {}


def read_graph(
    store: Store, exc: StoreReadOnly, known: SyncReport | None, deadline_s: float
) -> tuple[ExitStack, Graph]:
    """The graph of a store whose database cannot be opened for writing (`exc`): the
    database read-only when `known` says it holds what the files want, else one built in
    memory from the files. `store.unwritable` is set: nothing is recorded of this open."""
    from rose.graph.engine import open_graph, open_memory
    from rose.graph.sync import sync

    store.unwritable = exc
    stack = ExitStack()
    try:
        if known is not None and not known.held_by:
            g = stack.enter_context(
                open_graph(store.graph_path, store.engine, read_only=True, deadline_s=deadline_s)
            )
            store.last_sync = known
            how = "read its index read-only"
        else:
            g = stack.enter_context(open_memory(store.graph_path, store.engine))
            store.last_sync = sync(g, store.dirs, full=True)
            how = "read the lessons from the files into memory"
    except BaseException:
        stack.close()
        raise
    _how[str(exc.path)] = how
    return stack, g


def say_read(store: Store) -> None:
    """Say (once a process) how a read of a store that cannot be written was answered: after
    the read, so a write that stops at the read-only store says only that."""
    if store.unwritable is not None:
        exc = store.unwritable
        how = _how.get(str(exc.path), "read it")
        tell_once(f"{exc.path} cannot be written ({exc.detail}): {how}, nothing cached")

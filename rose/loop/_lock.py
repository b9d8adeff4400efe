"""One run that rewrites the apexes (a compression or a merge) per store at a time.

Both stages supersede an apex and write a lesson above it, deciding what is due from the
apexes as they stand: two runs at once could both compress one apex, or compress a lesson
while merging it, leaving two servable forms of it side by side.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager

from rose.store.facade import Store


@contextmanager
def rewriting(store: Store) -> Iterator[None]:
    """Hold the store's apex lock (`jobs/apexes.lock`) for the body of the `with`."""
    store.primary.jobs.mkdir(parents=True, exist_ok=True)
    fd = os.open(store.primary.jobs / "apexes.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)

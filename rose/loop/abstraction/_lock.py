"""One run that rewrites the apexes (a compression or a merge) per store at a time.

Both stages supersede an apex and write a lesson above it, deciding what is due from the
apexes as they stand: two runs at once could both compress one apex, or compress a lesson
while merging it, leaving two servable forms of it side by side.
"""

from __future__ import annotations

from contextlib import AbstractContextManager

from rose.disk.atomic import exclusive
from rose.store.facade import Store


def rewriting(store: Store) -> AbstractContextManager[None]:
    """Hold the store's apex lock (`jobs/apexes.lock`) for the body of the `with`."""
    return exclusive(store.primary.jobs / "apexes.lock")

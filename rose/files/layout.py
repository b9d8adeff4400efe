"""Where a store's files live, and how the project and global stores are found."""

from __future__ import annotations

import os
from pathlib import Path

from rose.disk.atomic import write_text

_GITIGNORE = """\
# Machine-local: rebuilt or regenerated, never shared.
sessions/
jobs/
events.jsonl
judge-cache/
graph.*
recall-view.json
view.html
demo.json
write-journal.json
index.txt
query-history
reports/
.*.tmp
"""


class StoreDir:
    """One `.rose` folder (a scope) and the paths inside it.

    A plain class rather than a dataclass: this module is on the prompt hook's path.
    """

    __slots__ = ("root", "scope")

    def __init__(self, root: Path, scope: str):
        self.root = Path(root)
        self.scope = scope  # "project" | "global"

    def __repr__(self) -> str:
        return f"StoreDir({str(self.root)!r}, {self.scope!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StoreDir) and (self.root, self.scope) == (other.root, other.scope)

    def __hash__(self) -> int:
        return hash((self.root, self.scope))

    @property
    def nodes(self) -> Path:
        return self.root / "nodes"

    @property
    def episodes(self) -> Path:
        return self.root / "episodes"

    @property
    def routing(self) -> Path:
        return self.root / "routing"

    @property
    def sessions(self) -> Path:
        return self.root / "sessions"

    @property
    def jobs(self) -> Path:
        """The detached jobs' ledger: records, payloads and logs (machine-local)."""
        return self.root / "jobs"

    @property
    def config(self) -> Path:
        return self.root / "config.yaml"

    @property
    def events(self) -> Path:
        return self.root / "events.jsonl"

    @property
    def judge_cache(self) -> Path:
        return self.root / "judge-cache"

    @property
    def recall_view(self) -> Path:
        return self.root / "recall-view.json"

    @property
    def view(self) -> Path:
        """The page `rose view` writes by default (machine-local)."""
        return self.root / "view.html"

    @property
    def demo(self) -> Path:
        """What `rose demo` leaves of its run for `rose view`: success and tokens over time."""
        return self.root / "demo.json"

    def ignore(self, name: str) -> None:
        """Have this store's `.gitignore` list `name`, for a store made before it was written."""
        gi = self.root / ".gitignore"
        if gi.exists():
            text = gi.read_text(encoding="utf-8")
            if name not in text.splitlines():
                write_text(gi, text.rstrip("\n") + f"\n{name}\n")

    def graph_path(self, engine: str) -> Path:
        return self.root / ("graph.kuzu" if engine == "kuzu" else "graph.lbug")

    def node_path(self, family: str, node_id: str) -> Path:
        return self.nodes / family / f"{node_id}.md"

    def episode_path(self, episode_id: str) -> Path:
        return self.episodes / f"{episode_id}.json"

    def exists(self) -> bool:
        return self.root.is_dir()

    def create(self) -> None:
        for d in (self.nodes, self.episodes, self.routing, self.sessions):
            d.mkdir(parents=True, exist_ok=True)
        gi = self.root / ".gitignore"
        if not gi.exists():
            write_text(gi, _GITIGNORE)


def global_root() -> Path:
    """`~/.rose`, or `ROSE_GLOBAL_HOME` when set (tests and unusual setups)."""
    env = os.environ.get("ROSE_GLOBAL_HOME")
    return Path(env).expanduser() if env else Path.home() / ".rose"


def find_project_root(start: Path | None = None) -> Path | None:
    """`ROSE_HOME` if set; else the nearest `.rose` folder from `start` upwards.

    A `ROSE_HOME` that is not a folder is an error naming it, never a store made there on
    the fly (a mistyped path would otherwise quietly gather its own store): `rose init`
    creates it. The global store is never mistaken for a project store, even when the
    walk passes through the home directory.
    """
    env = os.environ.get("ROSE_HOME")
    if env:
        root = Path(env).expanduser().resolve()
        if not root.is_dir():
            from rose.errors import RoseError

            raise RoseError(
                f"ROSE_HOME is {env}, which is not a folder; create a store there with "
                "`rose init`, or correct or unset ROSE_HOME"
            )
        return root
    here = (start or Path.cwd()).resolve()
    glob_root = global_root().resolve()
    for d in (here, *here.parents):
        cand = d / ".rose"
        if cand.is_dir() and cand.resolve() != glob_root:
            return cand
    return None

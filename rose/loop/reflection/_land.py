"""Where a new lesson lands: the store of its scope, created on first use, and said so.

ROSE installed for the user alone has hooks and no store. The first project lesson then
creates `.rose/` at the repository's root (the nearest folder up from the working
directory holding `.git`, a folder or a worktree's file), and the first global one
creates `~/.rose`; either way one line says where, and the status line gets a few words
(`rose.files.notices.notify`). Outside any repository there is no project to file a
project lesson under: it lands in the global store, and that is said too. A notice kept in
the global store names the folder it is about, so only a prompt there shows it (the global
store is every project's). `rose add` asks before it creates the global store outside a
repository (`creates_global`). A found store
is never second-guessed: `ROSE_HOME`, or a `.rose` up the tree, is the project store.
"""

from __future__ import annotations

from pathlib import Path

from rose.errors import StoreNotFound
from rose.files.layout import StoreDir, global_root
from rose.files.notices import notify
from rose.store.facade import Store


def repo_root(start: Path | None = None) -> Path | None:
    """The nearest folder from `start` (the working directory) upwards holding `.git`."""
    here = (start or Path.cwd()).resolve()
    for d in (here, *here.parents):
        if (d / ".git").exists():
            return d
    return None


def existing(start: Path | None = None) -> Store | None:
    """The store for `start` as it is, or None when there is none at all yet."""
    try:
        return Store.open(start)
    except StoreNotFound:
        return None


def project_name(store: Store | None, start: Path | None = None) -> str:
    """What the scope judgement is told the repository is called."""
    if store is not None and store.project is not None:
        return store.project.root.resolve().parent.name
    root = repo_root(start)
    return (root or (start or Path.cwd()).resolve()).name


def has_project(store: Store | None, start: Path | None = None) -> bool:
    """Whether a project lesson would land in a project store (one is found or can be made)."""
    return (store is not None and store.project is not None) or repo_root(start) is not None


def creates_global(scope: str | None = None, start: Path | None = None) -> Path | None:
    """The global store a lesson added here would create, or None: outside any repository,
    with no store found and no global store yet, whatever scope it is judged (a project
    lesson with no repository to hold it lands in the global store too). `scope` "global"
    is a choice already made: None then."""
    if scope == "global" or repo_root(start) is not None or existing(start) is not None:
        return None
    glob = global_root()
    return None if glob.is_dir() else glob


def store_for(store: Store | None, scope: str, start: Path | None = None) -> tuple[Store, str]:
    """The store a lesson of `scope` lands in, and the scope it lands in there.

    Creates the store the scope needs when it is missing (and says so); a project lesson
    with no repository to hold it lands in the global store.
    """
    if scope == "project":
        if store is not None and store.project is not None:
            return store, "project"
        root = repo_root(start)
        if root is None:
            scope = "global"
            note = "not in a git repository: the project lesson goes to the global store {}"
        else:
            path = root / ".rose"
            created = not path.is_dir()  # else another process (or lesson) made it meanwhile
            StoreDir(path, "project").create()
            if created:
                notify(
                    f"created a project store at {path} for this repository's first lesson "
                    "(commit it to share what ROSE learns here)",
                    "new store: .rose/",
                    keep_in=path,
                )
            glob = global_root()
            return Store(path.resolve(), glob if glob.is_dir() else None), "project"
    else:
        note = ""
    here = repo_root(start) or (start or Path.cwd()).resolve()  # what the notice is about
    if store is not None and store.global_ is not None:
        if note:
            notify(
                note.format(store.global_.root),
                "filed globally: no repository",
                keep_in=store.global_.root,
                about=here,
            )
        return store, "global"
    glob = global_root()
    created = not glob.is_dir()
    StoreDir(glob, "global").create()
    if note:
        notify(note.format(glob), "filed globally: no repository", keep_in=glob, about=here)
    elif created:
        line = f"created the global store {glob} for the first global lesson"
        notify(line, "new store: ~/.rose", keep_in=glob, about=here)
    project = store.project.root if store is not None and store.project is not None else None
    return Store(project, glob), "global"

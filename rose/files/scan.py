"""Listing a store's lesson and episode files with their stat, using the standard library only.

Both the graph sync and the prompt hook's fast path need this: the sync to find
what changed, the hook to tell whether the materialised recall view is still
current without opening the database.

A scan (`survey`) stats every lesson file (a lesson may be edited in place) and lists every
folder; given the last scan (`prev`, kept beside the database by `rose.graph.synced`), it
takes a folder's names from there instead when the folder's own mtime, ctime and inode are
as they were, and were already a safe while old when it was listed: adding, removing or
renaming an entry changes a folder's mtime and ctime, but a change in the clock tick of the
listing could leave them as they were, so a folder changed less than `RACY_NS` before its
listing is listed again. What differs from `prev` (files new or with another stat, files
gone) is found on the way.
"""

from __future__ import annotations

import marshal
import os
import time
import zlib
from array import array
from collections import namedtuple
from collections.abc import Callable

# A file as last seen: path, kind ("node" | "episode"), scope, mtime_ns, size.
# (A namedtuple, not a dataclass: importing dataclasses costs the hook ~9 ms.)
FileState = namedtuple("FileState", "path kind scope mtime_ns size")

#: A folder's listing is trusted only when the folder last changed this long before it.
RACY_NS = 2_000_000_000

# A folder as a scan found it, a plain tuple (marshal keeps it, and reads it back fast):
# kind ("node" | "episode"), scope, (mtime_ns, ctime_ns, inode) of the folder, when it was
# listed (time_ns, taken before), its file names in name order joined by NUL, its subfolders
# (lesson folders only), and each file's mtime_ns and size as int64s (lesson files only: an
# episode is written once, never edited).
_KIND, _SCOPE, _IDENT, _LISTED, _NAMES, _DIRS, _STATS = range(7)

#: Whether a folder is as the earlier survey found it (`survey`'s `clean`), or None.
Clean = Callable[[str], bool] | None

_new = tuple.__new__  # FileState's own __new__ is Python: this builds the same tuple directly
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)


def names_of(folder: tuple) -> list[str]:
    """A folder's file names (see the tuple above)."""
    joined = folder[_NAMES]
    return joined.split("\0") if joined else []


def _pairs(kind: str, stats: bytes, count: int) -> list[tuple[int, int]]:
    if kind != "node":
        return [(0, 0)] * count
    flat = array("q", stats)
    return list(zip(flat[0::2], flat[1::2], strict=True))


class Survey:
    """The store's files as one scan found them, folder by folder, and what differs from the
    scan it started from (`base` is that scan's fingerprint, "" when there was none)."""

    __slots__ = ("_parts", "_states", "base", "changed", "folders", "keep", "removed", "token")

    def __init__(self, base: str = "") -> None:
        self.folders: dict[str, tuple] = {}
        self.base = base
        #: Files new or with another stat than in the scan started from, and files gone.
        self.changed: list[FileState] = []
        self.removed: list[str] = []
        #: A folder was listed afresh and its listing can be trusted next time: worth keeping.
        self.keep = False
        #: The graph server's watch token this scan was made after (`rose.graph._watch`).
        self.token: list | None = None
        self._parts: list[tuple[str, bytes]] | None = None
        self._states: dict[str, FileState] | None = None

    def states(self) -> dict[str, FileState]:
        """Every file, by path."""
        if self._states is None:
            out: dict[str, FileState] = {}
            for folder, f in self.folders.items():
                base, kind, scope = folder + os.sep, f[_KIND], f[_SCOPE]
                names = names_of(f)
                for name, (mtime, size) in zip(
                    names, _pairs(kind, f[_STATS], len(names)), strict=True
                ):
                    path = base + name
                    out[path] = _new(FileState, (path, kind, scope, mtime, size))
            self._states = out
        return self._states

    def parts(self) -> list[tuple[str, bytes]]:
        """(kind, bytes) per folder: its path, kind, scope, names and stats."""
        if self._parts is None:
            self._parts = [
                (
                    f[_KIND],
                    f"{folder}\0{f[_KIND]}\0{f[_SCOPE]}\0{f[_NAMES]}\0".encode("utf-8", "replace")
                    + f[_STATS],
                )
                for folder, f in self.folders.items()
            ]
        return self._parts

    def holds_episode(self, path: str) -> bool:
        folder = self.folders.get(os.path.dirname(path))
        return (
            folder is not None
            and folder[_KIND] == "episode"
            and os.path.basename(path) in names_of(folder)
        )

    def __len__(self) -> int:
        return sum(len(names_of(f)) for f in self.folders.values())

    def patched(self, fingerprint: str, written: list[str], removed: list[str]) -> Survey | None:
        """This survey (whose fingerprint is `fingerprint`) with `written` files stat'ed again
        and `removed` ones gone, as a writer that just made those changes sees the store
        without scanning it again; None when a file lies outside the folders it lists.

        What it says of the other files is what this survey found: a change another process
        made meanwhile is not in it, so the graph synced from it does not hold that change
        either, and the next scan finds it against the listing kept from this. The folders
        touched are marked never listed, so the next scan lists them again."""
        by_folder: dict[str, dict[str, bool]] = {}
        for path, present in [*((p, True) for p in written), *((p, False) for p in removed)]:
            folder, name = os.path.split(path)
            f = self.folders.get(folder)
            if f is None or not _counted(f[_KIND], name):
                return None
            by_folder.setdefault(folder, {})[name] = present
        out = Survey(fingerprint)
        out.folders = dict(self.folders)
        out.token = self.token  # the touched folders changed since: the next scan sees them
        for folder, names in by_folder.items():
            kind, scope, _, _, _, dirs, stats = f = self.folders[folder]
            old = names_of(f)
            pairs = dict(zip(old, _pairs(kind, stats, len(old)), strict=True))
            try:
                for name, present in names.items():
                    path = folder + os.sep + name
                    if not present:
                        if pairs.pop(name, None) is not None:
                            out.removed.append(path)
                        continue
                    st = os.stat(path) if kind == "node" else None
                    pairs[name] = (st.st_mtime_ns, st.st_size) if st else (0, 0)
                    out.changed.append(_new(FileState, (path, kind, scope, *pairs[name])))
                ident = os.stat(folder)
            except OSError:  # gone again already: let a scan say what is there
                return None
            order = sorted(pairs)
            flat = array("q")
            if kind == "node":
                for name in order:
                    flat.extend(pairs[name])
            ident_t = (ident.st_mtime_ns, ident.st_ctime_ns, ident.st_ino)
            out.folders[folder] = (kind, scope, ident_t, 0, "\0".join(order), dirs, flat.tobytes())
        return out


def _counted(kind: str, name: str) -> bool:
    """Whether a scan lists a file of this name in a folder of this kind (see `_list_nodes`
    and `_episodes`)."""
    if kind == "node":
        return (
            name[:1] not in ("", ".", "_") and name.endswith(".md") and name.lower() != "readme.md"
        )
    return name.endswith(".json") and not name.startswith(".")


def survey(
    roots: list[tuple[str, str]],
    *,
    episodes: bool = True,
    prev: dict | None = None,
    clean: Clean = None,
    token: list | None = None,
) -> Survey:
    """Every lesson (and episode) file under each `(store root, scope)`, in the order given;
    `prev` is an earlier survey's record (`record`), whose listings are used where they hold.

    `clean(folder)` says a folder is as `prev` found it (a watch saw no change there since
    `prev` was made): `prev`'s listing and stats of it are taken as they are, unstat'ed.
    `token` is the watch's token taken before this survey, kept with it (`record`)."""
    old: dict = (prev or {}).get("folders") or {}
    out = Survey(str((prev or {}).get("fingerprint") or ""))
    out.token = token
    for root, scope in roots:
        _nodes(os.path.join(root, "nodes"), scope, old, out, clean)
        if episodes:
            _episodes(os.path.join(root, "episodes"), scope, old, out, clean)
    for folder, f in old.items():  # folders gone with their files
        if folder not in out.folders and (episodes or f[_KIND] == "node"):
            out.removed += [folder + os.sep + n for n in names_of(f)]
    if token is not None and token != (prev or {}).get("watch"):
        # Keeping it with the newer token spares the next scan the folders scanned here.
        out.keep = out.keep or any(f is not old.get(k) for k, f in out.folders.items())
    return out


def record(s: Survey, fingerprint: str) -> dict:
    """What to keep of a survey for the next one (`prev`), with the fingerprint it had."""
    return {"fingerprint": fingerprint, "folders": s.folders, "watch": s.token}


#: The kept survey's format (`read_kept`): bump it when the folders' tuples change.
KEPT_FORMAT = 5
#: What a kept survey opens with, before the checksum of the rest: a damaged file is refused
#: before it is unmarshalled (flipped bits can make `marshal.loads` take seconds and GBs).
_KEPT_MAGIC = b"rose-kept-scan\n"


def kept_bytes(s: Survey, fingerprint: str) -> bytes:
    """A survey as kept on disk (`rose.graph.synced` keeps it beside the database)."""
    payload = marshal.dumps({"format": KEPT_FORMAT, **record(s, fingerprint)}, 2)
    return _KEPT_MAGIC + zlib.crc32(payload).to_bytes(4, "big") + payload


def read_kept(path: str) -> dict | None:
    """A survey kept at `path` (`kept_bytes`) as `survey` takes it for `prev`, or None when it
    is missing, unreadable, damaged (its checksum does not match), or of another format or
    shape."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError:
        return None
    head = len(_KEPT_MAGIC) + 4
    if not raw.startswith(_KEPT_MAGIC) or len(raw) < head:
        return None
    payload = raw[head:]
    if zlib.crc32(payload).to_bytes(4, "big") != raw[len(_KEPT_MAGIC) : head]:
        return None
    try:
        data = marshal.loads(payload)
    except (EOFError, ValueError, TypeError):
        return None
    if not (isinstance(data, dict) and data.get("format") == KEPT_FORMAT):
        return None
    folders = data.get("folders")
    if not (isinstance(folders, dict) and isinstance(data.get("fingerprint"), str)):
        return None
    token = data.get("watch")
    if not (token is None or (type(token) is list and len(token) == 2 and type(token[1]) is int)):
        return None
    for f in folders.values():  # the shape `survey` reads without checking
        if not (
            type(f) is tuple
            and len(f) == 7
            and type(f[2]) is tuple
            and type(f[3]) is int
            and type(f[4]) is str
            and type(f[5]) is tuple
            and type(f[6]) is bytes
            and len(f[6]) == (16 * (f[4].count("\0") + 1) if f[4] and f[0] == "node" else 0)
        ):
            return None
    return data


def file_identity(path: str | os.PathLike[str]) -> list[int] | None:
    """(inode, size, mtime, ctime) of a file, or None when it is missing: a write changes it."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def scan(roots: list[tuple[str, str]], *, episodes: bool = True) -> dict[str, FileState]:
    """Every lesson (and episode) file, by path; episodes carry no stat (mtime and size 0)."""
    return survey(roots, episodes=episodes).states()


def _ident(fd: int) -> tuple[int, int, int]:
    st = os.fstat(fd)
    return st.st_mtime_ns, st.st_ctime_ns, st.st_ino


def _unchanged(folder: str, kind: str, scope: str, old: dict, clean: Clean) -> tuple | None:
    """The earlier survey's folder as it stands, when a watch saw no change in it since."""
    if clean is None:
        return None
    was = old.get(folder)
    if was is None or was[_KIND] != kind or was[_SCOPE] != scope or not clean(folder):
        return None
    return was


def _listing(folder: str, kind: str, scope: str, ident: tuple, old: dict) -> tuple | None:
    """The earlier listing of `folder` if it still holds, else None: the folder is as it was
    then, and had settled (changed `RACY_NS` or more before it was listed)."""
    was = old.get(folder)
    if was is None or was[_IDENT] != ident or was[_KIND] != kind or was[_SCOPE] != scope:
        return None
    return was if max(ident[0], ident[1]) + RACY_NS < was[_LISTED] else None


def _nodes(folder: str, scope: str, old: dict, out: Survey, clean: Clean) -> None:
    """A folder of lessons, each file stat'ed (a lesson may be edited in place), and the
    folders under it. Stats go through the folder's descriptor: one name resolved each."""
    was = _unchanged(folder, "node", scope, old, clean)
    if was is not None:
        out.folders[folder] = was
        for d in was[_DIRS]:
            _nodes(folder + os.sep + d, scope, old, out, clean)
        return
    try:
        fd = os.open(folder, _DIR_FLAGS)
    except (FileNotFoundError, NotADirectoryError):
        return
    try:
        ident = _ident(fd)
        was = _listing(folder, "node", scope, ident, old)
        if was is not None:
            listed, joined, dirs = was[_LISTED], was[_NAMES], was[_DIRS]
            names = joined.split("\0") if joined else []
        else:
            listed = time.time_ns()
            names, dirs = _list_nodes(fd)
            joined = "\0".join(names)
            out.keep = out.keep or max(ident[0], ident[1]) + RACY_NS < listed
        stat = os.stat
        try:
            found = [stat(n, dir_fd=fd) for n in names]
        except FileNotFoundError:  # removed while listed: skip it, as if listed after
            names, found = _present(names, fd)
            joined = "\0".join(names)
        flat = array("q")
        for st in found:
            flat.append(st.st_mtime_ns)
            flat.append(st.st_size)
        stats = flat.tobytes()
        out.folders[folder] = ("node", scope, ident, listed, joined, dirs, stats)
        prior = old.get(folder)
        if prior is None or prior[_KIND] != "node" or prior[_SCOPE] != scope:
            _differ(out, folder, "node", scope, names, stats, None)
        elif joined != prior[_NAMES] or stats != prior[_STATS]:
            _differ(out, folder, "node", scope, names, stats, prior)
        for d in dirs:
            _nodes(folder + os.sep + d, scope, old, out, clean)
    finally:
        os.close(fd)


def _present(names: list[str], fd: int) -> tuple[list[str], list[os.stat_result]]:
    kept, found = [], []
    for n in names:
        try:
            found.append(os.stat(n, dir_fd=fd))
        except FileNotFoundError:
            continue
        kept.append(n)
    return kept, found


def _list_nodes(fd: int) -> tuple[list[str], tuple[str, ...]]:
    """A lesson folder's lesson files and subfolders, each in name order."""
    names, dirs = [], []
    for e in os.scandir(fd):
        name = e.name
        if name[0] in "._" or name.lower() == "readme.md":
            continue  # hidden or set aside; a folder's README is not a lesson
        if name.endswith(".md") and e.is_file():
            names.append(name)
        elif e.is_dir():
            dirs.append(name)
    names.sort()
    dirs.sort()
    return names, tuple(dirs)


def _episodes(folder: str, scope: str, old: dict, out: Survey, clean: Clean) -> None:
    """Episode files by name alone: an episode is written once and never edited, so its
    name says everything a sync needs (no stat: a store gathers thousands of them)."""
    was = _unchanged(folder, "episode", scope, old, clean)
    if was is not None:
        out.folders[folder] = was
        return
    try:
        fd = os.open(folder, _DIR_FLAGS)
    except (FileNotFoundError, NotADirectoryError):
        return
    try:
        ident = _ident(fd)
        was = _listing(folder, "episode", scope, ident, old)
        if was is not None:
            listed, joined = was[_LISTED], was[_NAMES]
        else:
            listed = time.time_ns()
            joined = "\0".join(
                sorted(n for n in os.listdir(fd) if n.endswith(".json") and n[0] != ".")
            )
            out.keep = out.keep or max(ident[0], ident[1]) + RACY_NS < listed
    finally:
        os.close(fd)
    out.folders[folder] = ("episode", scope, ident, listed, joined, (), b"")
    prior = old.get(folder)
    if prior is None or prior[_KIND] != "episode" or prior[_SCOPE] != scope:
        _differ(out, folder, "episode", scope, joined.split("\0") if joined else [], b"", None)
    elif joined != prior[_NAMES]:
        _differ(out, folder, "episode", scope, joined.split("\0") if joined else [], b"", prior)


def _differ(
    out: Survey, folder: str, kind: str, scope: str, names: list[str], stats: bytes, prior
) -> None:
    """Note the files of `folder` new or changed since `prior` (its earlier listing), and
    those gone."""
    base = folder + os.sep
    before: dict[str, tuple[int, int]] = {}
    if prior is not None:
        old_names = names_of(prior)
        before = dict(zip(old_names, _pairs(kind, prior[_STATS], len(old_names)), strict=True))
    for name, st in zip(names, _pairs(kind, stats, len(names)), strict=True):
        if before.pop(name, None) != st:
            out.changed.append(_new(FileState, (base + name, kind, scope, *st)))
    out.removed += [base + n for n in before]


def stamp(s: Survey, roots: list[tuple[str, str]]) -> str:
    """A fingerprint of the lesson files and config files: it changes when any of them does."""
    crc, adler, count = 0, 1, 0
    for (kind, data), f in zip(s.parts(), s.folders.values(), strict=True):
        if kind == "node":
            crc, adler = zlib.crc32(data, crc), zlib.adler32(data, adler)
            count += len(names_of(f))
    for root, _ in roots:
        try:
            m = os.stat(os.path.join(root, "config.yaml")).st_mtime_ns
        except OSError:
            m = 0
        data = f"config\0{root}\0{m}".encode()
        crc, adler = zlib.crc32(data, crc), zlib.adler32(data, adler)
    # Two 32-bit checksums (zlib is built in; hashlib would load OpenSSL on the hook's path).
    return f"{crc:08x}{adler:08x}{count:x}"


def evidence_stamp(s: Survey) -> str:
    """A fingerprint of the episode files: the lessons' observed record changes with them."""
    crc, count = 0, 0
    for (kind, data), f in zip(s.parts(), s.folders.values(), strict=True):
        if kind == "episode":
            crc = zlib.crc32(data, crc)
            count += len(names_of(f))
    return f"{crc:08x}{count:x}"

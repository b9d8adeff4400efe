"""What changed in a store's folders since a given moment, as a graph server watches them
(Linux inotify), so that an open stats only the folders that changed instead of every
lesson file (`rose.files.scan.survey`'s `clean`).

A process asks with the folders it scans (`<root>/nodes` and `<root>/episodes`, the "tops")
and the token its last kept scan was made after; the answer is a new token and, for each
top, either "scan it all" (`fresh`: not watched before that token, or the watch could not
be trusted meanwhile) or the folders under it that changed since (`dirty`). A token is
taken after every event queued so far was read, and a scan made after it sees every change
before it; a change after it is reported next time.

Watched only where the kernel sees every change: a top on a local file system, with no
symbolic link under it (a link's target changes elsewhere), within the user's watch limit.
A folder moved in or out, a top removed or moved, or a full event queue makes the top, or
every top, fresh again. A file written through a hard link from outside the store, or
through a memory map, is not seen: lesson files are written by editors, git and ROSE.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import struct
from typing import Any

from rose.graph.engine import file_identity

IN_MODIFY = 0x2
IN_ATTRIB = 0x4
IN_CLOSE_WRITE = 0x8
IN_MOVED_FROM = 0x40
IN_MOVED_TO = 0x80
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_ONLYDIR = 0x01000000
IN_DONT_FOLLOW = 0x02000000
IN_ISDIR = 0x40000000
_MASK = (
    IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
    | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW
)  # fmt: skip
_EVENT = struct.Struct("iIII")
MAX_TOPS = 16
#: File systems whose every change the kernel sees (a network one changes on other hosts).
LOCAL_FS = frozenset({
    "ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "ramfs", "overlay", "zfs", "f2fs",
    "jfs", "reiserfs", "bcachefs",
})  # fmt: skip


class Refused(Exception):
    """A top that cannot be watched, and why."""


class _Gone(Exception):
    """A top that is not there (yet)."""


def mount_type(path: str, mountinfo: str = "/proc/self/mountinfo") -> str | None:
    """The file system type of the mount holding `path`, or None when it cannot be told."""
    real = os.path.realpath(path)
    best, kind = "", None
    try:
        with open(mountinfo, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    for line in lines:
        fields = line.split()
        if "-" not in fields or len(fields) < 5:
            continue
        point = _unescape(fields[4])
        inside = real == point or real.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best):
            best, kind = point, fields[fields.index("-") + 1]
    return kind


def _unescape(field: str) -> str:
    """A mountinfo path: space, tab, newline and backslash are written as octal escapes."""
    for code in ("040", "011", "012", "134"):
        field = field.replace("\\" + code, chr(int(code, 8)))
    return field


class Watch:
    """The folders of the tops asked about, watched; see the module's docstring."""

    def __init__(self, fd: int, libc: Any):
        self.fd, self.libc = fd, libc
        self.nonce = os.urandom(8).hex()  # tokens of another watch (a server before) are void
        self.seq = 0
        self.void_before = 0  # tokens older than this are void (the event queue overflowed)
        self.paths: dict[int, str] = {}  # watch descriptor -> folder
        self.tops: dict[str, int] = {}  # watched top -> the seq its watch was complete at
        self.idents: dict[str, tuple[int, int]] = {}  # watched top -> its (device, inode)
        self.dirty: dict[str, int] = {}  # folder -> the seq of its last change
        self.refused: dict[str, str] = {}  # top -> why it is not watched

    @classmethod
    def open(cls) -> Watch | None:
        """A watch, or None where the kernel offers none (not Linux, or no room for one)."""
        try:
            libc = ctypes.CDLL(None, use_errno=True)  # the C library the process runs on
            init = libc.inotify_init1
        except (OSError, AttributeError):
            return None
        fd = init(os.O_NONBLOCK | os.O_CLOEXEC)
        return None if fd < 0 else cls(fd, libc)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)

    # -- answering ---------------------------------------------------------------------

    def changes(self, tops: list[str], since: Any) -> dict[str, Any]:
        """The answer to a process that scans `tops` and kept a scan made after `since`."""
        self.drain()
        for top in tops[:MAX_TOPS]:
            if top in self.tops and file_identity(top) != self.idents.get(top):
                self._rewatch(top)  # another folder at its path (a folder above it moved)
            elif top not in self.tops and top not in self.refused and os.path.isabs(top):
                self._watch_top(top)  # a relative path would be the server's, not the asker's
        at = -1
        if isinstance(since, list) and len(since) == 2 and since[0] == self.nonce:
            at = since[1] if isinstance(since[1], int) and since[1] >= self.void_before else -1
        fresh = [t for t in tops if at < 0 or t not in self.tops or self.tops[t] > at]
        watched = [t for t in tops if t not in fresh]
        dirty = [f for f, s in self.dirty.items() if s > at and any(_under(f, t) for t in watched)]
        return {"token": [self.nonce, self.seq], "fresh": fresh, "dirty": dirty}

    # -- watching ----------------------------------------------------------------------

    def _watch_top(self, top: str) -> None:
        """Watch `top` and every folder under it; refused for good where it cannot be
        trusted, left for the next question where it does not exist yet."""
        ident = file_identity(top)
        if ident is None or not os.path.isdir(top):
            return
        kind = mount_type(top)
        if kind not in LOCAL_FS:
            self.refused[top] = f"on a {kind or 'unknown'} file system"
            return
        added: list[int] = []
        try:
            self._add_tree(top, added)
        except (Refused, _Gone) as exc:
            for wd in added:
                self._forget(wd)
            if isinstance(exc, Refused):
                self.refused[top] = str(exc)
            return
        self.seq += 1
        self.tops[top] = self.seq
        self.idents[top] = ident

    def _add_tree(self, folder: str, added: list[int]) -> None:
        wd = self.libc.inotify_add_watch(self.fd, os.fsencode(folder), _MASK)
        if wd < 0:
            code = ctypes.get_errno()
            if code == errno.ENOTDIR:  # a link or a file where a folder was asked for
                raise Refused(f"{folder} is not a folder")
            if code == errno.ENOENT and added:
                return  # gone meanwhile: its parent's change says so
            if code == errno.ENOENT:
                raise _Gone(folder)
            raise Refused(f"{folder}: {os.strerror(code)}")
        if self.paths.get(wd, folder) != folder:  # one folder by two paths: one is watched
            raise Refused(f"{folder} is watched already as {self.paths[wd]}")
        self.paths[wd] = folder
        added.append(wd)
        try:
            entries = list(os.scandir(folder))
        except (FileNotFoundError, NotADirectoryError):
            if not added[1:]:
                raise _Gone(folder) from None
            return  # gone meanwhile: its parent's change says so
        except OSError as exc:  # unreadable (permissions): its changes cannot be vouched for
            raise Refused(f"{folder}: {exc.strerror}") from None
        for e in entries:
            if e.is_symlink():
                raise Refused(f"{e.path} is a symbolic link")
            if e.is_dir(follow_symlinks=False):
                self._add_tree(e.path, added)

    def _forget(self, wd: int) -> None:
        if self.paths.pop(wd, None) is not None:
            self.libc.inotify_rm_watch(self.fd, wd)

    def _forget_under(self, top: str) -> None:
        """Stop watching `top` and every folder under it."""
        for wd, folder in list(self.paths.items()):
            if _under(folder, top):
                self._forget(wd)
        self.tops.pop(top, None)

    def _top_of(self, folder: str) -> str | None:
        return next((top for top in self.tops if _under(folder, top)), None)

    def _rewatch(self, top: str) -> None:
        """Watch `top` afresh: what was watched under it no longer matches the folders."""
        self._forget_under(top)
        self._watch_top(top)

    def drain(self) -> None:
        """Read every event queued so far and note the folders they changed."""
        while True:
            try:
                data = os.read(self.fd, 65536)
            except OSError:  # nothing more queued (or the watch is closed)
                return
            if not data:
                return
            self.seq += 1
            rewatch: set[str] = set()
            try:
                for wd, mask, name in _events(data):
                    self._event(wd, mask, name, rewatch)
            except Exception:  # the rest of this read is lost: nothing said before holds
                self.void_before = self.seq
                rewatch.update(self.tops)
            for top in rewatch:
                self._rewatch(top)

    def _event(self, wd: int, mask: int, name: str, rewatch: set[str]) -> None:
        if mask & IN_Q_OVERFLOW:  # events were lost: nothing said before now holds
            self.void_before = self.seq
            rewatch.update(self.tops)
            return
        folder = self.paths.get(wd)
        if folder is None:
            return
        top = self._top_of(folder)
        self.dirty[folder] = self.seq
        if mask & IN_IGNORED:  # the folder went (or its file system did)
            self.paths.pop(wd, None)
        if top is None:
            return
        if mask & (IN_IGNORED | IN_MOVE_SELF | IN_DELETE_SELF):
            rewatch.add(top)
        elif mask & IN_ISDIR:
            self._entry_folder(folder + os.sep + name, mask, top, rewatch)
        elif mask & (IN_CREATE | IN_MOVED_TO) and os.path.islink(folder + os.sep + name):
            self._refuse(top, f"{folder + os.sep + name} is a symbolic link")

    def _entry_folder(self, path: str, mask: int, top: str, rewatch: set[str]) -> None:
        """A folder made, removed or moved in a watched one."""
        if mask & (IN_MOVED_FROM | IN_MOVED_TO):
            rewatch.add(top)  # the watches under a moved folder went with it
        elif mask & IN_CREATE:
            self._created(path, top, rewatch)
        elif mask & IN_DELETE:
            self.dirty[path] = self.seq

    def _refuse(self, top: str, why: str) -> None:
        self._forget_under(top)
        self.refused[top] = why

    def _created(self, path: str, top: str, rewatch: set[str]) -> None:
        """A new folder: watched from now, and changed in full (what was written into it
        before its watch was added is seen by any scan after this)."""
        added: list[int] = []
        try:
            self._add_tree(path, added)
        except (Refused, _Gone, OSError):
            rewatch.add(top)  # refused there (the top's next watch says why), or gone
            return
        for wd in added:
            self.dirty[self.paths[wd]] = self.seq


def _under(folder: str, top: str) -> bool:
    """Whether `folder` is `top` or lies below it."""
    return folder == top or folder.startswith(top + os.sep)


def _events(data: bytes):
    """(watch descriptor, mask, name) of each event in what one read returned."""
    offset = 0
    while offset + _EVENT.size <= len(data):
        wd, mask, _cookie, size = _EVENT.unpack_from(data, offset)
        offset += _EVENT.size
        raw = data[offset : offset + size].split(b"\0", 1)[0]
        offset += size
        yield wd, mask, os.fsdecode(raw)

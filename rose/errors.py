"""One error hierarchy: each message says what went wrong, where, and what to do."""

from __future__ import annotations

import errno
from pathlib import Path


class RoseError(Exception):
    """Base of every error ROSE raises on purpose."""


class StoreNotFound(RoseError):
    def __init__(self, start: Path):
        self.start = start
        super().__init__(
            f"no ROSE store found from {start} upwards; run `rose init` to create one here"
        )


class LessonFileError(RoseError):
    """A lesson or episode file on disk could not be read or is inconsistent."""

    def __init__(self, path: Path | str, reason: str):
        self.path = Path(path)
        self.reason = reason
        super().__init__(f"{path}: {reason}")


class LessonNotFound(RoseError):
    def __init__(self, lesson_id: str):
        self.lesson_id = lesson_id
        super().__init__(f"no lesson with id {lesson_id!r}; `rose status` lists what exists")


class CycleError(RoseError):
    def __init__(self, cycle: list[str]):
        self.cycle = cycle
        super().__init__(
            "refused: this change would make a cycle in the lesson graph: " + " -> ".join(cycle)
        )


class StoreLocked(RoseError):
    def __init__(self, path: Path | str, holder: str | None, waited_s: float, detail: str = ""):
        self.path = Path(path)
        self.holder = holder
        self.waited_s = waited_s
        who = f" (held by {holder})" if holder else ""
        tail = f": {detail}" if detail else ""
        super().__init__(
            f"graph database {path} stayed locked{who} for {waited_s:.1f}s{tail}; "
            "retry when the other rose process finishes"
        )


class GraphDamaged(RoseError):
    """The graph database cannot be opened or read for a reason other than a lock: it is damaged.

    The store moves it aside and rebuilds it from the files; this reaches the user only
    when that repair failed, or when the damage showed only in the middle of a command.
    """

    def __init__(
        self,
        path: Path | str,
        detail: str,
        why: str = "",
        *,
        moved_to: Path | None = None,
        ident: tuple[int, int] | None = None,
        probe: bool = True,
    ):
        self.path = Path(path)
        self.detail = detail
        #: (device, inode) of what was found damaged: a healer moves only that one aside.
        self.ident = ident
        #: Whether opening it again in-process is safe (not after an open crashed a process).
        self.probe = probe
        if why:
            tail = f" and could not be rebuilt ({why}); move it away and run `rose reindex`"
        elif moved_to:
            tail = f"; moved it to {moved_to.name}: the next command rebuilds it from the files"
        else:
            tail = "; ROSE rebuilds it from the lesson files (`rose reindex`)"
        super().__init__(f"graph database {path} is damaged ({detail}){tail}")


class StoreReadOnly(RoseError):
    """A store folder or its database cannot be written: nothing can be recorded or indexed."""

    def __init__(self, path: Path | str, detail: str = "permission denied"):
        self.path = Path(path)
        self.detail = detail = detail or "permission denied"
        super().__init__(
            f"{path}: cannot be written ({detail}); the store keeps its lessons and index there: "
            f"make it writable (chmod u+w {path}), then run the command again"
        )


class WriteFailed(RoseError, OSError):
    """The disk refused a write (read-only, full, or not ours): the file is named, and what to do.

    Also an OSError (errno kept), so code that treats a failed write as best effort still does.
    """

    def __init__(self, path: Path | str, exc: OSError):
        super().__init__(exc.errno, exc.strerror or str(exc), str(path))
        self.path = Path(path)
        if exc.errno == errno.ENOSPC or exc.errno == errno.EDQUOT:
            self.what, hint = "no space left", "free some disk space"
        elif exc.errno == errno.EROFS:
            self.what, hint = "read-only file system", "mount it writable"
        else:
            where = self.path.parent
            self.what, hint = "permission denied", f"make it writable (chmod u+w {where})"
        self.hint = f"{hint}, then run the command again"

    def __str__(self) -> str:
        return f"{self.path}: could not be written ({self.what}); {self.hint}"


class QueryError(RoseError):
    """The graph engine rejected a statement; the message is the engine's own.

    `damaged` when the engine could not read its own storage (the database is damaged).
    """

    def __init__(self, name: str, message: str, *, damaged: bool = False):
        self.name = name
        self.message = message
        self.damaged = damaged
        super().__init__(message if name == "<console>" else f"query {name}: {message}")


class ConfigError(RoseError):
    def __init__(self, key: str, value: object, why: str):
        self.key = key
        self.value = value
        super().__init__(f"config {key}={value!r}: {why}")


class BackendUnavailable(RoseError):
    def __init__(self, name: str, hint: str):
        self.name = name
        super().__init__(f"model backend {name!r} is unavailable: {hint}")


class BackendFailed(RoseError):
    def __init__(self, name: str, detail: str):
        self.name = name
        self.detail = detail
        super().__init__(f"model backend {name!r} failed: {detail}")


class BackendTimeout(RoseError):
    def __init__(self, name: str, seconds: float):
        self.name = name
        self.seconds = seconds
        super().__init__(f"model backend {name!r} gave no answer within {seconds:g}s")


class AnswerInvalid(RoseError):
    def __init__(self, call: str, excerpt: str, why: str = ""):
        self.call = call
        self.excerpt = excerpt
        tail = f" ({why})" if why else ""
        super().__init__(f"the answer to {call!r} does not fit its schema{tail}: {excerpt[:200]!r}")


#: What a model call can fail with: the judgement is then missing, never read as a pass.
MODEL_FAILURES = (BackendUnavailable, BackendFailed, BackendTimeout, AnswerInvalid)


class LearningFailed(RoseError):
    """A model call a learning job needed failed (after its retries): what the session
    taught is not lost, the job keeps its input for a later run (`rose jobs --retry`)."""

    def __init__(self, what: str, why: str):
        self.what = what
        self.why = why
        super().__init__(f"{what} failed: {why}; `rose jobs --retry` runs it again")


class TranscriptError(RoseError):
    """A host agent's transcript could not be read, or is not one ROSE knows how to read."""

    def __init__(self, path: Path | str, reason: str):
        self.path = Path(path)
        self.reason = reason
        super().__init__(
            f"transcript {path}: {reason}; give the path of a Claude Code session file "
            "(~/.claude/projects/*/*.jsonl) or of a Codex rollout "
            "(~/.codex/sessions/**/rollout-*.jsonl)"
        )

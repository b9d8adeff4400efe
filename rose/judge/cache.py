"""The judge cache: one small JSON file per judgement, under a machine-local folder.

Why one file per key rather than a single JSON file or an append-only log:

- Concurrent processes (hooks, detached reflectors) write it at the same time. Each
  entry is written to a temp file in the same folder and renamed into place
  (`rose.disk.atomic`), and a rename is atomic, so a reader sees no file or a whole one,
  never a torn write. Writers of different keys never touch the same file, so nobody
  loses an update; writers of the same key race only to store equivalent answers, and
  whichever rename lands last leaves one complete, valid entry.
- No lock is needed, so a hook is never made to wait behind a slow writer, and a
  crash mid-write leaves at most an orphaned temp file, never a broken cache.
- A lookup is one ``open()`` of a known path: no log to scan, no file to parse whole.

Entries are written through `rose.disk.atomic`, so they are redacted like everything else
on disk. An entry that cannot be read back is treated as a miss and overwritten.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any


def digest(text: str) -> str:
    """The sha256 of `text`, hex."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def canonical(value: Any) -> str:
    """One spelling of a JSON value: sorted keys, no whitespace, unicode kept."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def cache_key(
    call: str, template_hash: str, model: str, schema_hash: str, context: dict[str, Any]
) -> str:
    """The key of one judgement: everything its answer depends on, and nothing else."""
    return digest(
        canonical(
            {
                "call": call,
                "template": template_hash,
                "model": model,
                "schema": schema_hash,
                "context": context,
            }
        )
    )


class JudgeCache:
    """Judgements stored as ``<root>/<key[:2]>/<key>.json``."""

    def __init__(self, root: Path):
        self.root = Path(root)

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored answer for `key`, or None when absent or unreadable."""
        try:
            record = json.loads(self.path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        answer = record.get("answer") if isinstance(record, dict) else None
        return answer if isinstance(answer, dict) else None

    def put(self, key: str, call: str, answer: dict[str, Any]) -> None:
        """Store `answer` for `key`, atomically."""
        from rose.disk.atomic import write_json  # imports redaction, only needed on a write

        write_json(self.path(key), {"call": call, "answer": answer})

    def __len__(self) -> int:
        return sum(1 for _ in self.root.glob("*/*.json"))

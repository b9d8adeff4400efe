"""Running the real `rose hook <event>` as a subprocess with a captured payload."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures" / "hooks"


def payload(event: str, project: Path, **changes) -> dict:
    data = json.loads((FIXTURES / f"{event}.json").read_text())
    data["cwd"] = str(project)
    data.update(changes)
    return data


def run_hook(event: str, data: dict | str | None, *, env: dict | None = None):
    """Returns (exit code, parsed stdout JSON or None, raw stdout, stderr)."""
    text = data if isinstance(data, str) or data is None else json.dumps(data)
    proc = subprocess.run(
        [sys.executable, "-m", "rose", "hook", event],
        input=text or "",
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=60,
    )
    out = json.loads(proc.stdout) if proc.stdout.strip() else None
    return proc.returncode, out, proc.stdout, proc.stderr

"""The prompt hook's module-level imports leave out the standard library's slow starters.

Every prompt starts a `rose hook` process, so what its imports load is paid on each one:
`typing` (~4 ms here, on top of `re`) and `hashlib` (~3 ms: it loads OpenSSL) are imported
only for the type checker or inside the rare function that needs them. Run with `-S`, so
an editable install's finder (which loads more at every interpreter start) is not there.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PROBE = """
import sys
sys.path.insert(0, sys.argv[1])
import {module}
{then}
print(" ".join(m for m in ("typing", "hashlib") if m in sys.modules))
"""


def _loaded(module: str, then: str = "") -> set[str]:
    proc = subprocess.run(
        [sys.executable, "-S", "-c", PROBE.format(module=module, then=then), str(REPO)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return set(proc.stdout.split())


def test_the_hook_imports_neither_typing_nor_hashlib():
    assert _loaded("rose.hooks.main") == set()


def test_a_sessions_first_prompt_asks_about_the_mcp_server_without_them(tmp_path: Path):
    """The first prompt of a Claude Code session reads the host's MCP registrations (the
    block's head says whether the `rose` tools are there): still neither."""
    (tmp_path / ".claude.json").write_text(
        '{"mcpServers": {"rose": {"type": "stdio", "command": "rose", "args": ["mcp"]}}}'
    )
    then = (
        f"import os; os.environ['HOME'] = {str(tmp_path)!r}\n"
        "from rose.hosts import mcp_wiring\n"
        "assert mcp_wiring.registered('claude', None)"
    )
    assert _loaded("rose.hooks.main", then) == set()


@pytest.mark.parametrize("module", ["typing", "hashlib"])
def test_the_probe_sees_them_when_they_are_loaded(module: str):
    assert _loaded(module) == {module}

"""A kept process's log: what a graph server prints reaches the disk redacted.

Locks in: a line printed, a warning and a traceback are redacted before they are written; a
private key's block split across writes is redacted whole; what is written below Python to
the process's standard error (a library's own output) never reaches the log; a forked
child's prints go through the same redaction.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

TOKEN = "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789"
KEY = "AKIA" + "IOSFODNN7EXAMPLE"

SCRIPT = f"""
import os, sys, warnings
from pathlib import Path
from rose.processes import kept
kept.log_to(Path(sys.argv[1]))
print("a line with {TOKEN}")
sys.stderr.write("-----BEGIN RSA PRIVATE KEY-----\\nMIIEsecretbody\\n")
sys.stderr.write("-----END RSA PRIVATE KEY-----\\n")
warnings.warn("a warning with {KEY}")
os.write(2, b"below python {TOKEN}\\n")
pid = os.fork()
if pid == 0:
    print("the child has {KEY}")
    os._exit(0)
os.waitpid(pid, 0)
raise RuntimeError("a crash with {TOKEN}")
"""


def test_what_a_kept_process_prints_is_redacted(tmp_path: Path):
    log = tmp_path / "k.log"
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(log)], capture_output=True)
    assert proc.returncode == 1 and not proc.stderr, "every word went to the log"
    text = log.read_text()
    assert TOKEN not in text and KEY not in text and "MIIEsecretbody" not in text
    assert "a line with [REDACTED:github-token]" in text
    assert "[REDACTED:private-key]" in text
    assert "a warning with [REDACTED:aws-key]" in text
    assert "the child has [REDACTED:aws-key]" in text
    assert "RuntimeError: a crash with [REDACTED:github-token]" in text
    assert "below python" not in text
    assert (log.stat().st_mode & 0o777) == 0o600

"""The secret coverage benchmark runs, keeps its `--json` shape, and its figures hold.

It measures the secret table against gitleaks' rule ids at a named release, from a
checked-in sample per rule. A format dropped from the table, or a sample that a JSON
escape before it hides from redaction, shows up here as a lower figure.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "secret_coverage.py"


def test_the_coverage_figures_hold():
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--json"], capture_output=True, text=True, check=True
    )
    figures = json.loads(out.stdout)
    assert figures["ruleset"] == "gitleaks-v8.30.1"
    assert figures["rules"] == 222
    assert set(figures["by_class"]) == {"shape", "keyword", "path"}
    shape = figures["by_class"]["shape"]
    assert shape["context"] >= 116  # of 120 rules with a shape of their own
    assert figures["context"] >= 127
    assert figures["json"] == figures["context"]  # an escape before a sample hides nothing
    assert "mailgun-private-api-token" not in figures["missed"]
    assert "doppler-api-token" not in figures["missed"]

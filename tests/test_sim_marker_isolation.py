"""Nothing outside rose/sim knows the simulated world's marker syntax.

Locks in: the harness must judge through the model, never by parsing the world's
markers; a harness that read them would pass every simulated test while being a lookup
table the real world does not have. This greps every module and prompt outside
``rose/sim`` for the marker's opening token.
"""

from __future__ import annotations

from pathlib import Path

import rose
from rose.sim.markers import OPEN

ROOT = Path(rose.__file__).parent


def _outside_sim() -> list[Path]:
    """Every module and prompt (indeed every source file) of the package but rose/sim."""
    return [
        p
        for p in ROOT.rglob("*")
        if p.is_file()
        and p.relative_to(ROOT).parts[0] != "sim"
        and "__pycache__" not in p.parts
        and p.suffix not in {".pyc", ".so"}
    ]


def test_scan_covers_the_judge_and_its_prompts():
    names = {p.name for p in _outside_sim()}
    assert {"judge.py", "relevance.j2", "compress.j2"} <= names
    assert not any(p.relative_to(ROOT).parts[0] == "sim" for p in _outside_sim())


def test_no_marker_outside_sim():
    offenders = [
        str(p.relative_to(ROOT))
        for p in _outside_sim()
        if OPEN in p.read_text(encoding="utf-8", errors="replace")
    ]
    assert offenders == []


def test_the_token_is_really_used_inside_sim():
    assert any(OPEN in p.read_text(encoding="utf-8") for p in (ROOT / "sim").glob("*.py"))

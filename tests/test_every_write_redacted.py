"""Every place ROSE writes to disk goes through redaction.

Locks in: a writer added beside `rose.disk.atomic` (the module that redacts, then writes by
temp file and rename or by one O_APPEND write) would put secrets on disk unseen. This
walks the AST of the package and lists every call that writes a file; each must be in
`rose/disk/atomic.py`, or be listed below with what it writes and why that is safe. A secret
passed on the command line, which the graph's holder note records, must not reach it.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ROOT = REPO / "rose"
_WRITE_METHODS = {"write_text", "write_bytes"}
# file -> why its direct writes are safe (what they write holds no user text, or is redacted)
ALLOWED = {
    "rose/disk/atomic.py": "the writer everything else uses: redacts first",
    "rose/cli/docgen.py": "the generated reference docs in the repository: help text only",
    "rose/model/codex.py": "a temporary JSON schema for `codex exec`: no user text, deleted after",
    "rose/graph/engine.py": "the holder note: pid, time, the program and its subcommand only",
    "rose/jobs/_runner.py": "a job's log: each line redacted before the write",
    "rose/processes/detach.py": "a detached process's output, appended: the keeper redacts",
    "rose/processes/kept.py": "a kept process's log: each line redacted before the write",
    "rose/graph/server.py": "a graph server's lock file, opened to be locked: nothing written",
}


def _writes(tree: ast.AST) -> list[int]:
    """Line numbers of calls that write a file."""
    return [
        node.lineno for node in ast.walk(tree) if isinstance(node, ast.Call) and _writes_file(node)
    ]


def _writes_file(call: ast.Call) -> bool:
    f = call.func
    if isinstance(f, ast.Attribute):
        if f.attr in _WRITE_METHODS:
            return True
        if (f.attr, getattr(f.value, "id", None)) in (("write", "os"), ("dump", "json")):
            return True
    return _opens_for_writing(call)


def _opens_for_writing(call: ast.Call) -> bool:
    f = call.func
    named = (isinstance(f, ast.Name) and f.id == "open") or (
        isinstance(f, ast.Attribute) and f.attr in ("open", "fdopen")
    )
    if not named:
        return False
    modes = [a for a in call.args[1:2] if isinstance(a, ast.Constant)]
    modes += [
        k.value for k in call.keywords if k.arg == "mode" and isinstance(k.value, ast.Constant)
    ]
    return any(isinstance(m.value, str) and set(m.value) & set("wax+") for m in modes)


def test_every_write_is_the_redacting_writer_or_listed():
    found = {}
    for path in sorted(ROOT.rglob("*.py")):
        rel = str(path.relative_to(REPO))
        if rel.startswith("rose/sim/"):
            continue  # the simulated world writes nothing to disk
        lines = _writes(ast.parse(path.read_text(encoding="utf-8")))
        if lines and rel not in ALLOWED:
            found[rel] = lines
    assert found == {}, "write through rose.disk.atomic, or list the file here with why it is safe"
    used = {
        str(p.relative_to(REPO))
        for p in ROOT.rglob("*.py")
        if _writes(ast.parse(p.read_text(encoding="utf-8")))
    }
    assert set(ALLOWED) <= used, "an allowed file no longer writes: drop it from the list"


def test_the_detector_sees_each_kind_of_write():
    src = (
        "p.write_text('x')\nopen(f, 'w')\nopen(f, mode='a')\nos.write(fd, b)\n"
        "json.dump(d, fh)\nos.fdopen(fd, 'wb')\nopen(f)\nopen(f, 'r')\n"
    )
    assert _writes(ast.parse(src)) == [1, 2, 3, 4, 5, 6]


def test_a_secret_on_the_command_line_never_reaches_the_holder_note(tmp_path: Path, monkeypatch):
    import sys

    from rose.graph.engine import claim_holder, holder_file

    secret = "sk-ant-api03-" + "A" * 40
    monkeypatch.setattr(sys, "argv", ["rose", "add", f"use the key {secret}", "-f", "x"])
    db = tmp_path / "graph.kuzu"
    claim_holder(db)
    note = json.loads(holder_file(db).read_text(encoding="utf-8"))
    assert secret not in json.dumps(note)
    assert note["pid"] > 0

"""Reading a transcript is the standard library alone: the Stop hook counts a session's
activity every turn, and pydantic, jinja2, typer and the graph engine cost 250-400 ms.

Locks in: everything `rose.transcripts.transcript` imports at module level, followed through the
package, is the standard library or such a module (and the `__init__` files on the way
import nothing), and a real import, read and count leave none of the heavy packages loaded.
"""

from __future__ import annotations

import subprocess
import sys

from tests._transcripts import fixture
from tests.test_import_layers import _package_modules

HEAVY = ("pydantic", "jinja2", "typer", "kuzu", "ladybug", "networkx", "yaml")


def test_the_module_level_imports_are_the_standard_library():
    modules, inits = _package_modules()
    todo, seen, bad = ["rose.transcripts.transcript"], set(), []
    while todo:
        mod = todo.pop()
        if mod in seen:
            continue
        seen.add(mod)
        for imp in (i for i in modules[mod] if i.top):
            root = imp.module.split(".")[0]
            if root == "rose" and imp.module in modules:
                todo.append(imp.module)
            elif root != "rose" and root not in sys.stdlib_module_names:
                bad.append(f"{mod}:{imp.line} imports {imp.module}")
    for pkg in ("rose", "rose.transcripts"):
        bad += [f"{pkg}/__init__ imports {i.module}" for i in modules[pkg] if i.top]
    assert "rose.transcripts._codex_records" in seen  # the scan really followed the imports
    assert bad == []


_PROBE = """
import sys
from rose.transcripts.transcript import activity, read
activity(sys.argv[1])
read(sys.argv[1])
print(",".join(m for m in sys.argv[2].split(",") if m in sys.modules))
"""


def test_reading_and_counting_load_nothing_heavy():
    path = str(fixture("codex-0.171-hand"))
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, path, ",".join(HEAVY)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == ""

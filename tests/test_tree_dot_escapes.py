"""`rose tree --dot` keeps the text as written.

Locks in: the DOT output was quoted with `json.dumps`, so a title's `…` became `\\u2026`
(DOT has no such escape: it printed the letters) and un-doubling the backslashes made
`C:\\certs\\ca.pem` lose them (`\\c` is no escape); now UTF-8 stays as characters, a
backslash is `\\\\` and a quote `\\"`.
"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from rose.cli import app
from rose.store.facade import Store
from tests._reconcile import lesson

pytestmark = pytest.mark.graph

TITLE = 'Trust C:\\certs\\ca.pem … "always"'


def test_dot_keeps_utf8_backslashes_and_quotes(store: Store):
    store.save(lesson("n_certs0001", "Certs.", title=TITLE, family="tls"))
    res = CliRunner().invoke(app, ["tree", "--dot"])
    assert res.exit_code == 0, res.output
    (line,) = [x for x in res.stdout.splitlines() if "label=" in x]
    assert 'label="L0 Trust C:\\\\certs\\\\ca.pem … \\"always\\"\\nn_certs0001"' in line
    assert "u2026" not in res.stdout

"""The generated references (docs/cli.md from every command's --help, docs/configuration.md from
rose/config_schema.py) match the code: a new option, command or setting without regenerating fails
here and in CI; `--check` names the stale file; the output is plain, stable text with no
colour codes and no machine paths."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from rose.cli import docgen
from rose.config import env_name
from rose.config import keys as config_keys

REPO = Path(__file__).resolve().parents[1]


def test_committed_docs_are_current():
    res = subprocess.run(
        [sys.executable, "-m", "rose.cli.docgen", "--check", "--root", str(REPO)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, (
        f"{res.stderr.strip()}\nregenerate with `python -m rose.cli.docgen` and commit docs/"
    )


def test_check_names_the_stale_file(tmp_path: Path, capsys):
    assert docgen.main(["--root", str(tmp_path)]) == 0
    assert docgen.main(["--check", "--root", str(tmp_path)]) == 0
    conf = tmp_path / "docs" / "configuration.md"
    conf.write_text(conf.read_text(encoding="utf-8") + "hand edit\n", encoding="utf-8")
    capsys.readouterr()
    assert docgen.main(["--check", "--root", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "docs/configuration.md" in err and "docs/cli.md" not in err
    (tmp_path / "docs" / "cli.md").unlink()
    assert docgen.main(["--check", "--root", str(tmp_path)]) == 1
    assert "docs/cli.md" in capsys.readouterr().err


def test_output_is_stable_plain_and_complete():
    first, second = docgen.generated(), docgen.generated()
    assert first == second
    text = "\n".join(first.values())
    assert "\x1b[" not in text and "╭" not in text  # no ANSI colour, no rich panels
    for machine in (str(REPO), str(Path.home()), sys.prefix):
        assert machine not in text
    cli = first[docgen.CLI_DOC]
    for path, _ in docgen.command_helps():
        assert f"## {path}\n" in cli
    assert "## rose report" in cli and "--about" in cli
    assert max(len(line) for line in cli.splitlines() if not line.startswith("- [")) <= 100
    conf = first[docgen.CONFIG_DOC]
    for key in config_keys():
        assert f"`{key}`" in conf and f"`{env_name(key)}`" in conf

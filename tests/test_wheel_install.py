"""The built distribution works on its own: the sdist carries the Cypher queries and the Jinja2
templates, and a wheel built from that sdist, installed into a clean virtual environment (no
system site-packages, no checkout on the path), runs `rose --help`, `rose doctor` without a
traceback, and `rose init` / `rose add` / `rose trace`, which load queries and templates from
the installed package. Locks in: package data missing from the wheel or sdist, and an
installed `rose` that only works from a checkout."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from tests._shared import once

pytestmark = pytest.mark.heavy

REPO = Path(__file__).resolve().parents[1]
# Package data: where each kind is in the checkout, and where it lands in the wheel.
DATA = (
    ("rose/queries/*.cypher", "rose/queries/*.cypher"),
    ("prompts/*.j2", "rose/prompts/*.j2"),
    ("prompts/inject/*.j2", "rose/prompts/inject/*.j2"),
    ("rose/inspect/_viewer_assets/*", "rose/inspect/_viewer_assets/*"),
)
_SKIP_COPY = shutil.ignore_patterns(
    ".git", ".venv", "venv", ".rose", "__pycache__", "*.egg-info", "build", "dist",
    ".pytest_cache", ".ruff_cache", ".hypothesis",
)  # fmt: skip
_OFFLINE = (
    "Could not find a version",
    "No matching distribution",
    "NewConnectionError",
    "Network is unreachable",
    "Temporary failure in name resolution",
    "Failed to establish a new connection",
    "ConnectionError",
    "Read timed out",
)


def _pip_env() -> dict[str, str]:
    """The environment for pip and build: the real home, so the user's pip config applies."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["HOME"] = pwd.getpwuid(os.getuid()).pw_dir
    env.pop("VIRTUAL_ENV", None)
    return env


def _run(argv: list, *, env: dict | None = None, cwd: Path | None = None, timeout: float = 240):
    return subprocess.run(
        [str(a) for a in argv], capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout
    )


def _build(src: Path, out: Path) -> None:
    """sdist, then a wheel built from that sdist (so the wheel proves the sdist is complete)."""
    res = _run([sys.executable, "-m", "build", "--outdir", out, src], env=_pip_env())
    if res.returncode == 0:
        return
    log = res.stdout + res.stderr
    if not any(sign in log for sign in _OFFLINE):
        pytest.fail(f"python -m build failed:\n{log[-3000:]}")
    retry = [sys.executable, "-m", "build", "--no-isolation", "--skip-dependency-check"]
    res = _run([*retry, "--outdir", out, src], env=_pip_env())
    if res.returncode != 0:
        pytest.skip(f"cannot build without the package index: {log.strip().splitlines()[-1]}")


def _matches(names: list[str], pattern: str) -> list[str]:
    folder, _, suffix = pattern.rpartition("/*")
    return [n for n in names if f"{folder}/" in n and n.endswith(suffix) and "/." not in n]


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sdist and wheel, built once a run (each worker built its own: 24-58 s each)."""
    pytest.importorskip("build", reason="`build` is in the test extra: pip install '.[test]'")

    def make(root: Path) -> None:
        src = root / "src"
        shutil.copytree(REPO, src, ignore=_SKIP_COPY)
        _build(src, root / "out")

    return once(tmp_path_factory, "dist", make) / "out"


@pytest.fixture(scope="module")
def venv(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    env_dir = tmp_path_factory.mktemp("venv") / "v"
    res = _run([sys.executable, "-m", "venv", env_dir], timeout=120)
    assert res.returncode == 0, res.stderr
    wheel = next(dist.glob("*.whl"))
    py = env_dir / "bin" / "python"
    res = _run([py, "-m", "pip", "install", "-q", wheel], env=_pip_env())
    if res.returncode != 0:
        log = res.stdout + res.stderr
        if any(sign in log for sign in _OFFLINE):
            pytest.skip(f"no package index for the wheel's dependencies: {log.strip()[-300:]}")
        pytest.fail(f"installing the wheel failed:\n{log[-3000:]}")
    return env_dir


def test_sdist_and_wheel_carry_the_package_data(dist: Path):
    sdist = next(dist.glob("*.tar.gz"))
    with tarfile.open(sdist) as tar:
        in_sdist = tar.getnames()
    with zipfile.ZipFile(next(dist.glob("*.whl"))) as whl:
        in_wheel = whl.namelist()
    for pattern, packaged in DATA:
        want = {p.name for p in REPO.glob(pattern)}
        assert want, pattern
        assert {Path(n).name for n in _matches(in_sdist, pattern)} >= want, f"sdist: {pattern}"
        assert {Path(n).name for n in _matches(in_wheel, packaged)} >= want, f"wheel: {packaged}"
    # Every module ships (the package list in pyproject.toml is explicit), and the templates
    # ship inside `rose`, never as a top-level `prompts` package.
    modules = {str(p.relative_to(REPO)) for p in (REPO / "rose").rglob("*.py")}
    assert modules <= set(in_wheel)
    assert not [n for n in in_wheel if n.split("/")[0] not in ("rose",) and ".dist-info" not in n]


def test_installed_rose_runs_from_a_clean_venv(venv: Path, tmp_path: Path):
    bin_dir = venv / "bin"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    work = tmp_path / "work"
    work.mkdir()

    def rose(*args: str):
        return _run([bin_dir / "rose", *args], env=env, cwd=work, timeout=120)

    where = _run([bin_dir / "python", "-c", "import rose; print(rose.__file__)"], env=env, cwd=work)
    assert Path(where.stdout.strip()).is_relative_to(venv), where.stdout + where.stderr

    res = rose("--help")
    assert res.returncode == 0 and "Usage" in res.stdout, res.stderr
    assert rose("init").returncode == 0
    res = rose("doctor")
    assert res.returncode in (0, 1), res.stderr
    assert "graph engine" in res.stdout and "Traceback" not in res.stdout + res.stderr
    res = rose("add", "Retry idempotent calls with backoff: 100ms, 400ms, 1.6s.", "-f", "retry")
    assert res.returncode == 0, res.stderr
    res = rose("trace", "-p", "add retries to the http client")
    assert res.returncode == 0, res.stderr
    assert "<rose-memory>" in res.stdout and "Retry idempotent calls" in res.stdout
    assert "ROSE · 1 lesson" in res.stdout
    res = rose("view")  # the page's template, script and style, read from the package
    assert res.returncode == 0, res.stderr
    assert "Retry idempotent calls" in (work / ".rose" / "view.html").read_text()

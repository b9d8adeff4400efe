"""The benchmarks' helper modules, imported as the scripts import them (from their folder)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def module(name: str) -> ModuleType:
    """`benchmarks/<name>.py`, imported with its folder on the path only while it loads."""
    sys.path.insert(0, str(BENCH))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(BENCH))

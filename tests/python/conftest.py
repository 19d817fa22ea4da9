"""Shared pytest setup: the binding on sys.path and the fixture models."""
import os
import pathlib
import sys

ROOT = pathlib.Path(os.environ.get("RESET_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(ROOT / "bindings" / "python"))
FIXTURES = ROOT / "tests" / "fixtures" / "models"

"""Shared helpers of the ptc_lisp tests.

The suite runs from `cargo test` (tests/python.rs), which builds the
extension into target/py-venv and passes the `ptc` binary as PTC_BIN so
that prompts can be compared with what the Rust agent renders.
"""

import os
import shutil
from typing import Optional

import pytest


def ptc_binary() -> Optional[str]:
    return os.environ.get("PTC_BIN") or shutil.which("ptc")


@pytest.fixture
def ptc_bin() -> str:
    path = ptc_binary()
    if path is None:
        pytest.fail("PTC_BIN is not set (run the suite through `cargo test --test tests python::`)")
    return path


# Under CI the examples drawn are the same on every run (as the Rust
# property tests' fixed seed), and no example database is written.
from hypothesis import settings  # noqa: E402

settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

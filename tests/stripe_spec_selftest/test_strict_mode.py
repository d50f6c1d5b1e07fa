"""Strict mode (``CASEWARD_STRICT_TESTS=1``, as CI runs the suite) fails every skip with the
skip's reason, and the end of every run says whether sandbox answers met Stripe's specs.

Each case runs pytest itself in a child process, as CI would, on one chosen test.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from stripe_spec import STRICT_ENV_VAR, specs_available, specs_dir

REPO = Path(__file__).resolve().parents[2]
NEEDS_SPECS = (
    "tests/stripe_spec_selftest/test_stripe_spec_fixtures.py::"
    "test_moved_fields_exist_at_their_new_place"
)
SANDBOX_ANSWERS = (
    "tests/stripe_sandbox/test_stripe_sandbox_customers.py::test_create_retrieve_update_list"
)
POSTGRESQL_ONLY = (
    "tests/audit/test_audit_keys.py::test_sealing_adds_no_statement_to_the_money_transaction"
)


def _run(test: str, *, strict: bool, specs: Path, sqlite: bool = True) -> tuple[int, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in (STRICT_ENV_VAR, "CASEWARD_SPECS_DIR")
    }
    if sqlite:  # no DATABASE_URL: the suite's SQLite fallback
        env.pop("DATABASE_URL", None)
    env["CASEWARD_SPECS_DIR"] = str(specs)
    if strict:
        env[STRICT_ENV_VAR] = "1"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", test],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    return done.returncode, done.stdout + done.stderr


@pytest.fixture
def no_specs(tmp_path: Path) -> Path:
    empty = tmp_path / "no-specs-here"
    empty.mkdir()
    return empty


def test_missing_specs_skip_and_say_so_outside_strict_mode(no_specs: Path) -> None:
    code, output = _run(NEEDS_SPECS, strict=False, specs=no_specs)

    assert code == 0, output
    assert "1 skipped" in output, output
    assert "Stripe spec conformance: OFF (Stripe spec files" in output, output
    assert str(no_specs) in output


def test_missing_specs_fail_in_strict_mode_with_the_skip_reason(no_specs: Path) -> None:
    code, output = _run(NEEDS_SPECS, strict=True, specs=no_specs)

    assert code == 1, output  # the skip came from a fixture: reported as an error
    assert f"{STRICT_ENV_VAR}=1, so not skipped: Stripe spec files" in output, output
    assert f"not found in {no_specs}" in output


def test_unchecked_sandbox_answers_fail_in_strict_mode(no_specs: Path) -> None:
    relaxed_code, relaxed = _run(SANDBOX_ANSWERS, strict=False, specs=no_specs)
    code, output = _run(SANDBOX_ANSWERS, strict=True, specs=no_specs)

    assert relaxed_code == 0, relaxed
    assert "Stripe spec conformance: OFF" in relaxed
    assert code == 1, output
    assert "sandbox answers left unchecked: Stripe spec files" in output, output


def test_a_postgresql_only_test_fails_on_sqlite_in_strict_mode() -> None:
    code, output = _run(POSTGRESQL_ONLY, strict=True, specs=specs_dir())

    assert code == 1, output
    assert f"{STRICT_ENV_VAR}=1, so not skipped: statement count is PostgreSQL's" in output


def test_the_summary_counts_the_sandbox_answers_checked() -> None:
    if not specs_available():
        pytest.skip(f"Stripe spec files not in {specs_dir()}")
    code, output = _run(SANDBOX_ANSWERS, strict=True, specs=specs_dir())

    assert code == 0, output
    [line] = [line for line in output.splitlines() if line.startswith("Stripe spec conformance")]
    assert line.startswith("Stripe spec conformance: ON: "), line
    assert int(line.split()[4]) > 0, line

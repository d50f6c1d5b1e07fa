"""Strict mode (``CASEWARD_STRICT_TESTS=1``, as CI runs the suite) fails every skip with the
skip's reason, and the end of every run says whether sandbox answers met Stripe's specs.

Each case reads one of three runs of pytest in a child process, as CI would run it, on
two chosen tests; the three start together.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
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


class _Run:
    """pytest in a child process on ``tests``, as CI would run it, started at once and
    read when a test asks: the three runs below go side by side."""

    def __init__(self, tests: list[str], *, strict: bool, specs: Path) -> None:
        env = {
            key: value
            for key, value in os.environ.items()
            if key not in (STRICT_ENV_VAR, "CASEWARD_SPECS_DIR")
        }
        env.pop("DATABASE_URL", None)  # the suite's SQLite fallback
        env["CASEWARD_SPECS_DIR"] = str(specs)
        if strict:
            env[STRICT_ENV_VAR] = "1"
        self._process = subprocess.Popen(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *tests],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self._output: str | None = None

    def result(self) -> tuple[int, str]:
        if self._output is None:
            self._output, _ = self._process.communicate(timeout=300)
        return self._process.returncode, self._output


@pytest.fixture(scope="module")
def no_specs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("no-specs-here")


@pytest.fixture(scope="module")
def runs(no_specs: Path) -> Iterator[dict[str, _Run]]:
    started = {
        "relaxed without specs": _Run([NEEDS_SPECS, SANDBOX_ANSWERS], strict=False, specs=no_specs),
        "strict without specs": _Run([NEEDS_SPECS, SANDBOX_ANSWERS], strict=True, specs=no_specs),
        "strict with specs": _Run(
            [POSTGRESQL_ONLY, SANDBOX_ANSWERS], strict=True, specs=specs_dir()
        ),
    }
    yield started
    for run in started.values():
        run.result()


def test_missing_specs_skip_and_say_so_outside_strict_mode(
    runs: dict[str, _Run], no_specs: Path
) -> None:
    code, output = runs["relaxed without specs"].result()

    assert code == 0, output
    assert "1 passed, 1 skipped" in output, output
    assert "Stripe spec conformance: OFF (Stripe spec files" in output, output
    assert str(no_specs) in output


def test_missing_specs_fail_in_strict_mode_with_the_skip_reason(
    runs: dict[str, _Run], no_specs: Path
) -> None:
    code, output = runs["strict without specs"].result()

    assert code == 1, output  # the skip came from a fixture: reported as an error
    assert f"{STRICT_ENV_VAR}=1, so not skipped: Stripe spec files" in output, output
    assert f"not found in {no_specs}" in output


def test_unchecked_sandbox_answers_fail_in_strict_mode(runs: dict[str, _Run]) -> None:
    _, relaxed = runs["relaxed without specs"].result()
    code, output = runs["strict without specs"].result()

    assert "Stripe spec conformance: OFF" in relaxed
    assert code == 1, output
    assert "sandbox answers left unchecked: Stripe spec files" in output, output


def test_a_postgresql_only_test_fails_on_sqlite_in_strict_mode(runs: dict[str, _Run]) -> None:
    code, output = runs["strict with specs"].result()

    assert code == 1, output
    assert f"{STRICT_ENV_VAR}=1, so not skipped: statement count is PostgreSQL's" in output


def test_the_summary_counts_the_sandbox_answers_checked(runs: dict[str, _Run]) -> None:
    if not specs_available():
        pytest.skip(f"Stripe spec files not in {specs_dir()}")
    _, output = runs["strict with specs"].result()

    assert "1 failed, 1 passed" in output, output  # the sandbox test passed; the other is above
    [line] = [line for line in output.splitlines() if line.startswith("Stripe spec conformance")]
    assert line.startswith("Stripe spec conformance: ON: "), line
    assert int(line.split()[4]) > 0, line

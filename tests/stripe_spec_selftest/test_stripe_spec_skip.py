"""Without the spec files, tests that need them are skipped with a clear message."""

from pathlib import Path

import pytest
import stripe_spec
from stripe_spec import require_specs, specs_available, specs_dir


def test_default_specs_dir_is_next_to_the_repo(monkeypatch):
    monkeypatch.delenv("CASEWARD_SPECS_DIR", raising=False)
    repo_root = Path(stripe_spec.__file__).resolve().parent.parent
    assert specs_dir() == (repo_root.parent / "shared" / "specs").resolve()


def test_require_specs_skips_naming_the_folder(monkeypatch, tmp_path):
    empty = tmp_path / "no-specs-here"
    empty.mkdir()
    monkeypatch.setenv("CASEWARD_SPECS_DIR", str(empty))
    assert specs_dir() == empty
    assert not specs_available()
    with pytest.raises(pytest.skip.Exception) as skipped:
        require_specs()
    message = str(skipped.value)
    assert str(empty) in message
    assert "CASEWARD_SPECS_DIR" in message
    assert stripe_spec.FIXTURES_FILE in message


def test_require_specs_skips_when_folder_is_missing(monkeypatch, tmp_path):
    missing = tmp_path / "does-not-exist"
    monkeypatch.setenv("CASEWARD_SPECS_DIR", str(missing))
    with pytest.raises(pytest.skip.Exception, match="does-not-exist"):
        require_specs()


def test_require_specs_passes_when_files_are_present():
    if not specs_available():
        pytest.skip(f"spec files not in {specs_dir()}")
    assert require_specs() is None

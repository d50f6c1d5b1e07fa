"""Secrets generated into the instance folder are private from their first byte and
shared by every process of the installation, even when several start at once."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]


def _python(code: str, *, umask: int = 0o022) -> subprocess.Popen[str]:
    script = f"import os; os.umask({umask:#o})\n" + textwrap.dedent(code)
    return subprocess.Popen(
        [sys.executable, "-c", script],
        cwd=PROJECT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finished(process: subprocess.Popen[str]) -> str:
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    return out


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_generated_secrets_are_owner_only_from_creation_even_with_an_open_umask(
    tmp_path: Path,
) -> None:
    """With umask 0 a plain write creates 0666; a chmod afterwards leaves a moment in
    which the secret is world-readable. With chmod disabled, the mode can only come
    from the creation itself."""
    instance = tmp_path / "instance"
    _finished(
        _python(
            f"""
            os.chmod = lambda *args, **kwargs: None
            from app import create_app
            from app.settings import Settings
            create_app(Settings.from_env({{"CASEWARD_INSTANCE_PATH": {str(instance)!r}}}))
            """,
            umask=0,
        )
    )

    secrets = {p.name: _mode(p) for p in instance.iterdir() if not p.name.startswith("caseward.db")}
    assert {"secret_key", "encryption_key"} <= set(secrets)
    assert set(secrets.values()) == {0o600}, secrets


def test_processes_starting_together_share_one_secret(tmp_path: Path) -> None:
    path = tmp_path / "secret_key"
    racers = [
        _python(
            f"""
            import sys
            from pathlib import Path
            from app.crypto import read_or_create_secret
            print("ready", flush=True)
            sys.stdin.readline()  # blocked, not spinning, until every racer is ready
            print(read_or_create_secret(Path({str(path)!r}), lambda: os.urandom(16).hex()))
            """,
            umask=0,
        )
        for _ in range(4)  # more racers than cores
    ]
    for racer in racers:
        assert racer.stdout is not None and racer.stdout.readline() == "ready\n"
    for racer in racers:  # go, all at once
        assert racer.stdin is not None
        racer.stdin.write("go\n")
        racer.stdin.flush()

    secrets = {_finished(racer).strip() for racer in racers}

    assert len(secrets) == 1
    assert secrets == {path.read_text()}
    assert _mode(path) == 0o600
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_an_existing_secret_is_kept(tmp_path: Path) -> None:
    from app.crypto import read_or_create_secret  # noqa: PLC0415

    path = tmp_path / "secret_key"
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(descriptor, b"kept-from-last-year\n")
    os.close(descriptor)

    assert read_or_create_secret(path, lambda: "new") == "kept-from-last-year"

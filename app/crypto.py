"""Provider credentials encrypted at rest.

The key comes from ``CASEWARD_ENCRYPTION_KEYS`` (comma-separated Fernet keys, newest
first, so a key can be rotated without losing old rows). The embedded default
generates one into the instance folder on first run; production refuses to.

Every secret kept in a file is readable by its owner only from the first byte
(mode 0600 at creation, whatever the umask), and two processes starting at once
end up with the same secret.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Callable
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken, MultiFernet

from app.settings import Settings


class SecretBoxError(Exception):
    """A stored secret cannot be decrypted with any configured key."""


class SecretBox:
    def __init__(self, keys: list[str]) -> None:
        if not keys:
            raise ValueError("at least one encryption key is required")
        self._fernet = MultiFernet([Fernet(key.encode()) for key in keys])

    def encrypt(self, plaintext: str) -> bytes:
        return self._fernet.encrypt(plaintext.encode())

    def decrypt(self, token: bytes) -> str:
        try:
            return self._fernet.decrypt(token).decode()
        except InvalidToken as exc:
            raise SecretBoxError("stored secret does not decrypt with the configured keys") from exc

    @staticmethod
    def generate_key() -> str:
        return Fernet.generate_key().decode()


def mask_secret(secret: str) -> str:
    """What logs, audit text and pages may show of a key: its prefix and last four."""
    prefix, _, rest = secret.rpartition("_")
    tail = rest[-4:] if len(rest) >= 8 else ""
    return f"{prefix}_…{tail}" if prefix else f"…{tail}"


def secret_box(settings: Settings) -> SecretBox:
    """The box for this installation: configured keys, else one kept in the instance folder."""
    if settings.encryption_keys:
        return SecretBox(list(settings.encryption_keys))
    settings.require_production_secrets()
    key = read_or_create_secret(settings.instance_path / "encryption_key", SecretBox.generate_key)
    return SecretBox([key])


def read_or_create_secret(path: Path, generate: Callable[[], str]) -> str:
    """The secret in ``path``, generating it first if the file does not exist yet.

    The secret is written to a private temporary file (created 0600, so the umask
    cannot widen it) and then hard-linked into place: the link either creates
    ``path`` complete or fails because another process got there first, in which
    case that process's secret is the one kept. A reader never sees a half-written file.
    """
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        draft = path.with_name(f".{path.name}.{secrets.token_hex(8)}")
        descriptor = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(descriptor, "w") as file:
                file.write(generate())
                file.flush()
                os.fsync(file.fileno())
            # FileExistsError: another process created it meanwhile, and theirs is kept.
            with contextlib.suppress(FileExistsError):
                os.link(draft, path)
        finally:
            draft.unlink()
    return path.read_text().strip()

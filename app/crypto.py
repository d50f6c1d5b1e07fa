"""Provider credentials encrypted at rest.

The key comes from ``CASEWARD_ENCRYPTION_KEYS`` (comma-separated Fernet keys, newest
first, so a key can be rotated without losing old rows). The embedded default
generates one into the instance folder on first run.
"""

from __future__ import annotations

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
    path = settings.instance_path / "encryption_key"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(SecretBox.generate_key())
        path.chmod(0o600)
    return SecretBox([path.read_text().strip()])

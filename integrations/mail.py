"""Mail to shoppers: one interface, an SMTP sender, and a local outbox.

Caseward sends one kind of mail today, the one-time code that proves a shopper reads the
order's email, written by the caller in the shopper's language, which the message names
(``Content-Language``, RFC 3282) so mail clients offer to translate only what needs it;
any script travels as UTF-8. Production names an SMTP server
(``smtp://user:password@host:587``, STARTTLS); the demo and the tests use the outbox, a
folder of RFC 5322 files that a person can open and a test can read the newest code from.
Nothing here logs a message's body.
"""

from __future__ import annotations

import smtplib
import time
import uuid
from dataclasses import dataclass, field
from email.message import EmailMessage
from email.parser import BytesParser
from email.policy import default as default_policy
from pathlib import Path
from typing import Protocol
from urllib.parse import unquote, urlsplit


class Mailer(Protocol):
    def send(self, *, to: str, subject: str, body: str, language: str) -> None:
        """Send ``body`` (plain text) written in ``language`` (a BCP 47 tag such as ``fr``)."""
        ...


def _message(sender: str, to: str, subject: str, body: str, language: str) -> EmailMessage:
    message = EmailMessage()
    message["From"] = sender
    message["To"] = to
    message["Subject"] = subject
    message["Message-ID"] = f"<{uuid.uuid4()}@caseward>"
    message.set_content(body)
    # After the content: setting it clears every Content-* header.
    message["Content-Language"] = language
    return message


@dataclass(frozen=True)
class Outbox:
    """Writes each message to ``folder`` as ``<nanoseconds>-<uuid>.eml``; reads them back."""

    folder: Path
    sender: str

    def send(self, *, to: str, subject: str, body: str, language: str) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        # The name sorts by arrival (and is unique across processes); writing to a
        # temporary name first means a reader never sees half a message.
        name = f"{time.time_ns():020d}-{uuid.uuid4().hex}.eml"
        partial = self.folder / f".{name}"
        partial.write_bytes(bytes(_message(self.sender, to, subject, body, language)))
        partial.rename(self.folder / name)

    def messages(self, to: str | None = None) -> list[EmailMessage]:
        """Every message in the outbox, oldest first (only those to ``to`` when given)."""
        if not self.folder.is_dir():
            return []
        parser = BytesParser(policy=default_policy)
        found = []
        for path in sorted(self.folder.glob("*.eml")):
            message = parser.parsebytes(path.read_bytes())
            assert isinstance(message, EmailMessage)
            if to is None or message["To"] == to:
                found.append(message)
        return found


@dataclass(frozen=True)
class SmtpMailer:
    host: str
    port: int
    username: str | None
    password: str | None = field(repr=False)
    sender: str
    timeout_seconds: float = 20.0

    def send(self, *, to: str, subject: str, body: str, language: str) -> None:
        with smtplib.SMTP(self.host, self.port, timeout=self.timeout_seconds) as smtp:
            smtp.starttls()
            if self.username:
                smtp.login(self.username, self.password or "")
            smtp.send_message(_message(self.sender, to, subject, body, language))


def mailer_for(url: str, *, sender: str, outbox_folder: Path) -> Mailer:
    """The mailer ``url`` names: ``smtp://...``, or the outbox in ``outbox_folder`` when empty."""
    if not url:
        return Outbox(outbox_folder, sender)
    parts = urlsplit(url)
    if parts.scheme != "smtp" or not parts.hostname:
        raise ValueError("the mail URL must look like smtp://user:password@host:587")
    return SmtpMailer(
        host=parts.hostname,
        port=parts.port or 587,
        username=unquote(parts.username) if parts.username else None,
        password=unquote(parts.password) if parts.password else None,
        sender=sender,
    )

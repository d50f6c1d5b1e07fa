"""Signing what Caseward sends to a merchant's endpoint (Caseward issue 11, point 5).

A receiver holding the secret accepts a signed request and refuses one tampered with,
too old, signed with a secret it does not hold, or without the headers. During a
rotation's grace period both secrets sign, so a receiver on either accepts; after it,
only the new one does. The library-free check of docs/merchant-endpoint.md agrees with the signer.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from standardwebhooks import Webhook

from integrations.merchant_endpoint.signing import (
    ID_HEADER,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    SignatureRefused,
    SigningSecrets,
    is_secret,
    new_secret,
    sign,
    verify,
)

BODY = json.dumps({"type": "action.status", "idempotency_key": "caseward-action-1"})
GUIDE = Path(__file__).resolve().parents[2] / "docs" / "merchant-endpoint.md"


def _now() -> datetime:
    return datetime.now(UTC)


def _signed(secrets: SigningSecrets, body: str = BODY, at: datetime | None = None) -> Any:
    moment = at or _now()
    return sign(secrets.in_use(moment), body, now=moment)


def test_a_signed_request_verifies_with_the_standard_library_and_ours() -> None:
    secret = new_secret()
    headers = _signed(SigningSecrets(secret))

    assert set(headers) == {ID_HEADER, TIMESTAMP_HEADER, SIGNATURE_HEADER}
    assert re.fullmatch(r"msg_[0-9a-f]{32}", headers[ID_HEADER])
    assert headers[SIGNATURE_HEADER].startswith("v1,")
    assert Webhook(secret).verify(BODY, headers) == json.loads(BODY)
    assert verify(BODY.encode(), headers, [secret]) == json.loads(BODY)
    # Every request has an id of its own, so a receiver can refuse a replayed one.
    assert _signed(SigningSecrets(secret))[ID_HEADER] != headers[ID_HEADER]


Headers = dict[str, str]


def _tampered(headers: Headers, body: str) -> tuple[Headers, str]:
    return headers, body.replace("caseward-action-1", "caseward-action-2")


def _without(name: str) -> Any:
    return lambda headers, body: ({k: v for k, v in headers.items() if k != name}, body)


def _unsigned(headers: Headers, body: str) -> tuple[Headers, str]:
    return {}, body


def _malformed(headers: Headers, body: str) -> tuple[Headers, str]:
    return {**headers, SIGNATURE_HEADER: "v1"}, body


def _moved(headers: Headers, body: str) -> tuple[Headers, str]:
    return {**headers, TIMESTAMP_HEADER: str(int(headers[TIMESTAMP_HEADER]) + 1)}, body


@pytest.mark.parametrize(
    "spoil",
    [
        pytest.param(_tampered, id="tampered-body"),
        pytest.param(_without(SIGNATURE_HEADER), id="no-signature"),
        pytest.param(_without(TIMESTAMP_HEADER), id="no-timestamp"),
        pytest.param(_without(ID_HEADER), id="no-id"),
        pytest.param(_unsigned, id="unsigned"),
        pytest.param(_malformed, id="malformed-signature"),
        pytest.param(_moved, id="moved-timestamp"),
    ],
)
def test_a_spoilt_request_is_refused(spoil: Any) -> None:
    secret = new_secret()
    headers, body = spoil(_signed(SigningSecrets(secret)), BODY)

    with pytest.raises(SignatureRefused):
        verify(body.encode(), headers, [secret])


def test_an_old_request_and_an_unknown_secret_are_refused() -> None:
    secret = new_secret()
    six_minutes_ago = _now() - timedelta(minutes=6)

    with pytest.raises(SignatureRefused, match="too old"):
        verify(BODY.encode(), _signed(SigningSecrets(secret), at=six_minutes_ago), [secret])
    with pytest.raises(SignatureRefused, match="No matching signature"):
        verify(BODY.encode(), _signed(SigningSecrets(new_secret())), [secret])
    with pytest.raises(SignatureRefused):
        verify(BODY.encode(), _signed(SigningSecrets(secret)), [])


def test_during_the_grace_period_both_secrets_sign_and_after_it_only_the_new() -> None:
    old, new = new_secret(), new_secret()
    rotated_at = _now()
    secrets = SigningSecrets(old).rotated(new, rotated_at, timedelta(hours=24))

    assert secrets.in_use(rotated_at) == (new, old)
    during = _signed(secrets, at=rotated_at)
    assert len(during[SIGNATURE_HEADER].split(" ")) == 2
    # A receiver still on the old secret, one already on the new, one holding both.
    for held in ([old], [new], [old, new]):
        verify(BODY.encode(), during, held)

    # A day later only the new one signs.
    after = rotated_at + timedelta(hours=24, seconds=1)
    assert secrets.in_use(after) == (new,)
    assert len(sign(secrets.in_use(after), BODY, now=after)[SIGNATURE_HEADER].split(" ")) == 1
    assert secrets.without_expired(after) == SigningSecrets(new)


def test_after_the_grace_period_a_receiver_on_the_old_secret_refuses() -> None:
    old, new = new_secret(), new_secret()
    grace_over = SigningSecrets(old).rotated(new, _now() - timedelta(hours=25))

    headers = _signed(grace_over)

    verify(BODY.encode(), headers, [new])
    with pytest.raises(SignatureRefused):
        verify(BODY.encode(), headers, [old])


def test_a_rotation_without_grace_stops_the_old_secret_at_once_and_only_two_ever_sign() -> None:
    first, second, third = new_secret(), new_secret(), new_secret()
    now = _now()

    at_once = SigningSecrets(first).rotated(second, now, timedelta(0))
    assert at_once == SigningSecrets(second)
    with pytest.raises(SignatureRefused):
        verify(BODY.encode(), _signed(at_once), [first])

    twice = SigningSecrets(first).rotated(second, now).rotated(third, now)
    assert twice.in_use(now) == (third, second)


def test_secrets_are_the_standards_form_and_keep_as_stored() -> None:
    secret = new_secret()
    assert is_secret(secret) and secret.startswith("whsec_")
    assert not is_secret("whsec_short") and not is_secret("sk_" + secret)
    assert new_secret() != secret

    rotated = SigningSecrets(secret).rotated(new_secret(), _now())
    assert SigningSecrets.from_json(rotated.to_json()) == rotated
    assert SigningSecrets.from_json(SigningSecrets(secret).to_json()) == SigningSecrets(secret)


def _guide_block(name: str) -> str:
    """The guide's Python block that defines ``name``."""
    blocks: list[str] = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), flags=re.DOTALL)
    return next(block for block in blocks if f"def {name}(" in block)


def test_the_guide_check_without_a_library_agrees_with_the_signer() -> None:
    namespace: dict[str, Any] = {}
    exec(_guide_block("signed_with"), namespace)  # the guide's own code
    signed_with = namespace["signed_with"]
    old, new = new_secret(), new_secret()
    headers = _signed(SigningSecrets(old).rotated(new, _now()))

    assert signed_with(old, headers, BODY.encode())
    assert signed_with(new, headers, BODY.encode())
    assert not signed_with(new_secret(), headers, BODY.encode())
    assert not signed_with(new, headers, BODY.replace("1", "2").encode())
    stale = _signed(SigningSecrets(new), at=_now() - timedelta(minutes=6))
    assert not signed_with(new, stale, BODY.encode())

"""An owner's endpoint cannot point Caseward's signed requests into a private network.

In production, connecting refuses an endpoint whose host is an IP literal, or a name with
any address that is not public (loopback, private, link-local, reserved), with a 400
naming ``endpoint_url`` and nothing stored. Outside production this machine stays allowed,
as the tests' own receivers need. And whatever DNS says later, the adapter refuses a
connection that reached an address the endpoint may not have before sending anything on
it: the receiver's own request log shows nothing arrived.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Sequence

import httpx
import pytest
from merchant_support import MerchantShop, Receiver, Staff
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.actors import Surface, staff
from app.clock import utcnow
from app.connections.merchant import endpoint_url, save_merchant_connection
from app.connections.models import Connection
from app.crypto import secret_box
from app.demo import OWNER
from app.errors import InvalidInput
from app.execution.executor import ExecutionContext
from app.settings import Settings
from app.shops.models import Shop, StaffMember, StaffRole
from app.web.errors import status_of
from integrations.merchant_endpoint.adapter import MerchantEndpointAdapter, merchant_http_client
from integrations.merchant_endpoint.signing import SigningSecrets
from integrations.provider import ActionKind, PaymentFacts, ProviderRejected

Resolver = Callable[[str, int], Sequence[str]]

PUBLIC = "93.184.215.14"


def resolving_to(*addresses: str) -> Resolver:
    """DNS as it answers for one name; the names below are nobody's."""
    return lambda host, port: list(addresses)


REFUSED_IN_PRODUCTION: list[tuple[str, Resolver | None]] = [
    # IP literals, public or not: an https endpoint is named by DNS.
    ("https://10.0.0.5/caseward", None),
    ("https://169.254.169.254/latest", None),
    ("https://[fd00::1]/caseward", None),
    ("https://[::ffff:192.168.0.1]/caseward", None),
    ("https://93.184.215.14/caseward", None),
    # Names the system's own resolver turns into loopback addresses.
    ("https://127.1/caseward", None),
    ("https://2130706433/caseward", None),
    # Names whose DNS gives a private, link-local, shared or reserved address.
    ("https://pay.linen.example/caseward", resolving_to("10.1.2.3")),
    ("https://pay.linen.example/caseward", resolving_to("fe80::1")),
    ("https://pay.linen.example/caseward", resolving_to("100.64.0.9")),
    ("https://pay.linen.example/caseward", resolving_to("240.0.0.1")),
    ("https://pay.linen.example/caseward", resolving_to(PUBLIC, "192.168.1.4")),
    # A name with no address at all.
    ("https://pay.linen.invalid/caseward", None),
]


@pytest.mark.parametrize(("url", "resolve"), REFUSED_IN_PRODUCTION)
def test_production_refuses_an_endpoint_that_is_not_public(
    url: str, resolve: Resolver | None
) -> None:
    with pytest.raises(InvalidInput) as refused:
        if resolve is None:
            endpoint_url(url, production=True)
        else:
            endpoint_url(url, production=True, resolve=resolve)

    assert status_of(refused.value) == 400 and refused.value.field == "endpoint_url"


def test_production_accepts_a_name_whose_every_address_is_public() -> None:
    url = "https://pay.linen.example/caseward"

    for addresses in ([PUBLIC], [PUBLIC, "2606:4700:4700::1111"]):
        assert endpoint_url(url, production=True, resolve=resolving_to(*addresses)) == url


def test_a_refused_production_endpoint_is_not_stored(session: Session, settings: Settings) -> None:
    domain = f"private-address-{uuid.uuid4().hex[:8]}.myshopify.com"
    shop = Shop(domain=domain, name="Linen & Loom", created_at=utcnow())
    session.add(shop)
    session.flush()
    session.add(StaffMember(shop_id=shop.id, user_id=OWNER, role=StaffRole.OWNER))
    session.flush()

    with pytest.raises(InvalidInput) as refused:
        save_merchant_connection(
            session,
            shop=shop,
            actor=staff(OWNER, Surface.STAFF_API),
            url="https://192.168.1.20/caseward",
            box=secret_box(settings),
            production=True,
            now=utcnow(),
        )

    assert refused.value.field == "endpoint_url"
    assert session.scalars(select(Connection).where(Connection.shop_id == shop.id)).all() == []
    session.rollback()


def test_outside_production_this_machine_is_allowed(
    shop: MerchantShop, owner: Staff, receiver: Receiver, ctx: ExecutionContext
) -> None:
    assert endpoint_url("https://10.0.0.5/caseward", production=False) == (
        "https://10.0.0.5/caseward"
    )
    answer = owner.put("/api/shop/connections/merchant", {"endpoint_url": receiver.url})
    assert answer.status_code == 200, answer.get_json()

    with ctx.session_factory() as session:
        facts = ctx.adapters(session, shop.shop_id, "merchant").facts(
            ActionKind.REFUND, shop.payment
        )
    assert isinstance(facts, PaymentFacts) and facts.exists


@pytest.fixture(scope="module")
def http() -> Iterator[httpx.Client]:
    client = merchant_http_client(2.0)
    yield client
    client.close()


def test_a_connection_that_reaches_a_private_address_sends_nothing(
    shop: MerchantShop, receiver: Receiver, http: httpx.Client
) -> None:
    """127.1 is a name this machine's resolver turns into 127.0.0.1: not this machine's
    own name, so its loopback address is refused, before the request is written."""
    port = receiver.url.rsplit(":", 1)[1]
    adapter = MerchantEndpointAdapter(
        f"http://127.1:{port}", SigningSecrets(shop.secret), http_client=http
    )

    with pytest.raises(ProviderRejected) as refused:
        adapter.facts(ActionKind.REFUND, shop.payment)
    assert refused.value.code == "endpoint_not_public"
    assert "127.0.0.1" in str(refused.value)
    with pytest.raises(ProviderRejected):
        adapter.customers_with_email("maya@example.com")
    assert receiver.received() == []

    # The same receiver by this machine's own name is reached.
    local = MerchantEndpointAdapter(
        f"http://localhost:{port}", SigningSecrets(shop.secret), http_client=http
    )
    assert [found.id for found in local.customers_with_email("maya@example.com")] == [shop.customer]
    assert [r["path"] for r in receiver.received()] == ["/customers/find"]

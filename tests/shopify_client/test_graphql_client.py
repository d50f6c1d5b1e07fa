"""The Admin GraphQL client against a local server speaking Shopify's JSON shapes.

Time is injected: waiting for the cost bucket moves a fake clock, so nothing here waits
on the wall clock, and the tests can say exactly how long the client would have waited.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from shopify_client_support import (
    SHOP,
    Answer,
    FakeTime,
    ScriptedServer,
    graphql_answer,
    throttled_answer,
)

from integrations.provider import NotSent, OutcomeUnknown, ProviderRejected, Throttled
from integrations.shopify.documents import REFUND_CREATE
from integrations.shopify.documents import SHOP as SHOP_QUERY
from integrations.shopify.errors import (
    ShopifyForbidden,
    ShopifyGraphQLError,
    ShopifyNotSent,
    ShopifyOutcomeUnknown,
    ShopifyRefused,
    ShopifyThrottled,
    ShopifyUnauthorized,
    ShopifyUserErrors,
    UserError,
)
from integrations.shopify.graphql import AdminClient, GraphQLAnswer, data_or_user_errors
from integrations.shopify.transport import shopify_http_client

SHOP_DATA = {"shop": {"id": "gid://shopify/Shop/1", "name": "Demo"}}
REFUND_VARIABLES = {"input": {"orderId": "gid://shopify/Order/1"}, "key": "caseward-action-7"}


@pytest.fixture
def http(server: ScriptedServer) -> Iterator[httpx.Client]:
    with shopify_http_client(server.url, timeout=2.0) as client:
        yield client


@pytest.fixture
def time_() -> FakeTime:
    return FakeTime()


@pytest.fixture
def client(http: httpx.Client, time_: FakeTime) -> AdminClient:
    return AdminClient(SHOP, "shpat_secret_token", http, clock=time_.clock, sleep=time_.sleep)


def test_an_answer_carries_data_and_cost(client: AdminClient, server: ScriptedServer) -> None:
    server.queue(Answer(body=graphql_answer(SHOP_DATA, requested=2, actual=1, available=1999)))

    answer = client.execute(SHOP_QUERY, {}, operation_name="Shop")

    assert answer.data == SHOP_DATA
    assert answer.cost is not None
    assert (answer.cost.requested, answer.cost.actual, answer.cost.currently_available) == (
        2,
        1,
        1999,
    )
    (request,) = server.received
    assert request.path == "/admin/api/2026-04/graphql.json"
    assert request.headers["Host"] == SHOP
    assert request.headers["X-Shopify-Access-Token"] == "shpat_secret_token"
    assert request.json() == {"query": SHOP_QUERY, "variables": {}, "operationName": "Shop"}
    assert "shpat" not in repr(client)


def test_throttled_waits_for_the_restore_then_sends_again(
    client: AdminClient, server: ScriptedServer, time_: FakeTime
) -> None:
    server.queue(
        Answer(body=throttled_answer(requested=100, available=40, restore=50)),
        Answer(body=graphql_answer(SHOP_DATA)),
    )

    answer = client.execute(SHOP_QUERY, {})

    assert answer.data == SHOP_DATA
    assert time_.sleeps == [pytest.approx(1.2)]  # 60 points short at 50 a second
    assert len(server.received) == 2


def test_an_old_style_throttled_answer_without_a_code_is_throttling_too(
    client: AdminClient, server: ScriptedServer, time_: FakeTime
) -> None:
    old_style = throttled_answer(requested=100, available=40, restore=50)
    del old_style["errors"][0]["extensions"]
    server.queue(Answer(body=old_style), Answer(body=graphql_answer(SHOP_DATA)))

    assert client.execute(SHOP_QUERY, {}).data == SHOP_DATA
    assert time_.sleeps == [pytest.approx(1.2)]


def test_throttling_gives_up_after_the_bounded_attempts(
    http: httpx.Client, server: ScriptedServer, time_: FakeTime
) -> None:
    client = AdminClient(
        SHOP, "shpat_x", http, clock=time_.clock, sleep=time_.sleep, max_throttle_retries=2
    )
    server.queue(*[Answer(body=throttled_answer(requested=100, available=0, restore=50))] * 5)

    with pytest.raises(ShopifyThrottled) as throttled:
        client.execute(REFUND_CREATE, REFUND_VARIABLES)

    assert isinstance(throttled.value, Throttled)  # the provider contract's "ran nothing"
    assert throttled.value.retry_after == pytest.approx(2.0)
    assert len(server.received) == 3
    assert time_.sleeps == [pytest.approx(2.0)] * 2


def test_a_known_short_bucket_is_waited_for_before_sending(
    client: AdminClient, server: ScriptedServer, time_: FakeTime
) -> None:
    server.queue(
        Answer(body=graphql_answer(SHOP_DATA, requested=100, available=30, restore=50)),
        Answer(body=graphql_answer(SHOP_DATA, requested=100, available=0, restore=50)),
        Answer(body=graphql_answer(SHOP_DATA)),
    )

    client.execute(SHOP_QUERY, {})
    assert time_.sleeps == []
    client.execute(SHOP_QUERY, {})  # 100 needed, 30 there: 1.4 s of refill first
    assert time_.sleeps == [pytest.approx(1.4)]
    time_.now += 5  # 250 points came back meanwhile
    client.execute(SHOP_QUERY, {})
    assert time_.sleeps == [pytest.approx(1.4)]
    assert len(server.received) == 3


def test_a_long_refill_is_not_waited_for_and_nothing_is_sent(
    http: httpx.Client, server: ScriptedServer, time_: FakeTime
) -> None:
    client = AdminClient(
        SHOP, "shpat_x", http, clock=time_.clock, sleep=time_.sleep, max_throttle_wait=5.0
    )
    server.queue(Answer(body=graphql_answer(SHOP_DATA, requested=900, available=0, restore=50)))
    client.execute(SHOP_QUERY, {})

    with pytest.raises(ShopifyThrottled) as throttled:
        client.execute(SHOP_QUERY, {})

    assert throttled.value.retry_after == pytest.approx(18.0)
    assert len(server.received) == 1
    assert time_.sleeps == []


def test_each_client_keeps_its_own_bucket(
    http: httpx.Client, server: ScriptedServer, time_: FakeTime
) -> None:
    drained = AdminClient(SHOP, "shpat_a", http, clock=time_.clock, sleep=time_.sleep)
    other = AdminClient(
        "other.myshopify.com", "shpat_b", http, clock=time_.clock, sleep=time_.sleep
    )
    server.queue(
        Answer(body=graphql_answer(SHOP_DATA, requested=100, available=0, restore=50)),
        Answer(body=graphql_answer(SHOP_DATA)),
    )

    drained.execute(SHOP_QUERY, {})
    other.execute(SHOP_QUERY, {})

    assert time_.sleeps == []
    assert [request.headers["Host"] for request in server.received] == [
        SHOP,
        "other.myshopify.com",
    ]


def test_429_waits_for_retry_after(
    client: AdminClient, server: ScriptedServer, time_: FakeTime
) -> None:
    server.queue(
        Answer(status=429, body={"errors": "Too many requests"}, headers={"Retry-After": "2.5"}),
        Answer(body=graphql_answer(SHOP_DATA)),
    )

    assert client.execute(SHOP_QUERY, {}).data == SHOP_DATA
    assert time_.sleeps == [2.5]


def test_401_means_the_token_is_gone(client: AdminClient, server: ScriptedServer) -> None:
    server.queue(
        Answer(
            status=401,
            body={"errors": "[API] Invalid API key or access token (unrecognized login)"},
        )
    )

    with pytest.raises(ShopifyUnauthorized) as refused:
        client.execute(SHOP_QUERY, {})

    assert isinstance(refused.value, ProviderRejected)
    assert refused.value.status == 401


@pytest.mark.parametrize("status", [402, 404, 423])
def test_other_refusals_ran_nothing(
    client: AdminClient, server: ScriptedServer, status: int
) -> None:
    server.queue(Answer(status=status, body={"errors": "Unavailable Shop"}))

    with pytest.raises(ShopifyRefused) as refused:
        client.execute(SHOP_QUERY, {})

    assert refused.value.status == status


@pytest.mark.parametrize("status", [500, 502, 503])
def test_a_5xx_after_sending_a_mutation_is_unknown_and_not_retried(
    client: AdminClient, server: ScriptedServer, status: int
) -> None:
    server.queue(Answer(status=status, body={"errors": "Internal error"}), Answer(body={}))

    with pytest.raises(ShopifyOutcomeUnknown) as unknown:
        client.execute(REFUND_CREATE, REFUND_VARIABLES, operation_name="RefundCreate")

    assert isinstance(unknown.value, OutcomeUnknown)
    assert len(server.received) == 1


def test_a_dropped_connection_is_unknown_and_not_retried(
    client: AdminClient, server: ScriptedServer
) -> None:
    server.queue(Answer(drop=True), Answer(body={}))

    with pytest.raises(ShopifyOutcomeUnknown):
        client.execute(REFUND_CREATE, REFUND_VARIABLES)

    assert len(server.received) == 1


def test_a_read_timeout_is_unknown(server: ScriptedServer, time_: FakeTime) -> None:
    server.queue(Answer(hang=True))
    with shopify_http_client(server.url, timeout=0.3) as http:
        client = AdminClient(SHOP, "shpat_x", http, clock=time_.clock, sleep=time_.sleep)
        with pytest.raises(ShopifyOutcomeUnknown):
            client.execute(REFUND_CREATE, REFUND_VARIABLES)

    assert len(server.received) == 1


def test_a_refused_connection_was_not_sent(time_: FakeTime) -> None:
    closed = ScriptedServer()  # bound, then closed without ever listening for us
    closed.stop()
    with shopify_http_client(closed.url, timeout=2.0) as http:
        client = AdminClient(SHOP, "shpat_x", http, clock=time_.clock, sleep=time_.sleep)
        with pytest.raises(ShopifyNotSent) as not_sent:
            client.execute(REFUND_CREATE, REFUND_VARIABLES)

    assert isinstance(not_sent.value, NotSent)


def test_a_validation_error_is_a_graphql_error(client: AdminClient, server: ScriptedServer) -> None:
    server.queue(
        Answer(
            body={
                "errors": [
                    {
                        "message": "Field 'nope' doesn't exist on type 'Shop'",
                        "locations": [{"line": 1, "column": 9}],
                        "path": ["query", "shop", "nope"],
                        "extensions": {
                            "code": "undefinedField",
                            "typeName": "Shop",
                            "fieldName": "nope",
                        },
                    }
                ]
            }
        )
    )

    with pytest.raises(ShopifyGraphQLError) as refused:
        client.execute("{ shop { nope } }", {})

    assert [error.code for error in refused.value.errors] == ["undefinedField"]
    assert "doesn't exist" in str(refused.value)


def test_an_internal_error_inside_a_200_is_unknown(
    client: AdminClient, server: ScriptedServer
) -> None:
    server.queue(
        Answer(
            body={
                "data": {"refundCreate": None},
                "errors": [
                    {
                        "message": "Internal error. Looks like something went wrong on our end.",
                        "extensions": {"code": "INTERNAL_SERVER_ERROR", "requestId": "abc"},
                    }
                ],
            }
        )
    )

    with pytest.raises(ShopifyOutcomeUnknown):
        client.execute(REFUND_CREATE, REFUND_VARIABLES)


def test_a_missing_scope_is_forbidden(client: AdminClient, server: ScriptedServer) -> None:
    server.queue(
        Answer(
            body={
                "data": {"refundCreate": None},
                "errors": [
                    {
                        "message": "Access denied for refundCreate field.",
                        "extensions": {"code": "ACCESS_DENIED"},
                    }
                ],
            }
        )
    )

    with pytest.raises(ShopifyForbidden):
        client.execute(REFUND_CREATE, REFUND_VARIABLES)


def test_user_errors_are_raised_with_their_fields() -> None:
    answer = GraphQLAnswer(
        data={
            "refundCreate": {
                "refund": None,
                "userErrors": [
                    {
                        "field": ["input", "transactions", "0", "amount"],
                        "message": "Amount can't be greater than the amount captured",
                    }
                ],
            }
        },
        cost=None,
    )

    with pytest.raises(ShopifyUserErrors) as refused:
        data_or_user_errors(answer, "refundCreate")

    assert refused.value.errors == (
        UserError(
            field=("input", "transactions", "0", "amount"),
            message="Amount can't be greater than the amount captured",
        ),
    )
    assert isinstance(refused.value, ProviderRejected)


def test_a_payload_without_user_errors_is_returned() -> None:
    payload = {"refund": {"id": "gid://shopify/Refund/9"}, "userErrors": []}

    assert data_or_user_errors(GraphQLAnswer({"refundCreate": payload}, None), "refundCreate") == (
        payload
    )


def test_a_missing_payload_is_unknown_not_refused() -> None:
    with pytest.raises(ShopifyOutcomeUnknown):
        data_or_user_errors(GraphQLAnswer({"refundCreate": None}, None), "refundCreate")


def test_only_shop_domains_are_accepted(http: httpx.Client) -> None:
    with pytest.raises(ValueError, match="not a shop domain"):
        AdminClient("demo.example.com", "shpat_x", http)

"""Every refund's checks look up the order its payment paid (the worker's under the
action's and the money's locks). In a shop with thousands of orders that lookup reads the
one order, found by its payment, not every order of the shop: PostgreSQL's own account of
the statement the checks run (``EXPLAIN ANALYZE``) says which rows it read."""

from __future__ import annotations

from index_reads import analyzed, assert_read_by_index, skip_unless_postgresql
from sent_statements import Sent
from sqlalchemy import insert
from sqlalchemy.orm import Session

from app.cases.models import Customer, Order
from app.execution.evaluation import _ORDER_PAID_BY
from app.shops.models import Shop

ORDERS = 3000


def test_the_order_a_payment_paid_is_found_by_the_payment_not_among_the_shops_orders(
    session: Session, database: str
) -> None:
    skip_unless_postgresql(database)
    shop = Shop(domain="many-orders.myshopify.com", name="Many orders")
    session.add(shop)
    session.flush()
    customer = Customer(shop_id=shop.id, email="buyer@example.com")
    session.add(customer)
    session.flush()
    session.execute(
        insert(Order),
        [
            {
                "shop_id": shop.id,
                "customer_id": customer.id,
                "name": f"#{1000 + number}",
                "currency": "usd",
                "total": 9600,
                "payment_provider": "stripe",
                "payment_id": f"pi_{number:024d}",
                "lines": [{"id": "1", "title": "Linen shirt", "quantity": 1, "paid": 9600}],
                "shipments": [],
            }
            for number in range(ORDERS)
        ],
    )
    analyzed(session)

    compiled = _ORDER_PAID_BY.compile(dialect=session.get_bind().dialect)
    params = compiled.construct_params({"shop_id": shop.id, "payment_id": f"pi_{1234:024d}"})
    assert_read_by_index(session, Sent(str(compiled), params), "orders", rows=1, by="payment_id")

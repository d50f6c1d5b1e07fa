"""The RQ job that refreshes our copy of a customer's Shopify orders, and its queueing.

Runs on the background queue, after the commit that made it due (a case opened, an
order changed at Shopify). It reads through the shop's Shopify adapter, as the worker
does for money, and writes in one transaction. Nothing here is swallowed: a failed read
fails the job, which leaves the copy as it was, and the next trigger queues it again.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from rq import Queue
from sqlalchemy.orm import Session, sessionmaker

from app.actors import WORKER
from app.cases.models import Customer
from app.cases.store_orders import ORDERS_SHOWN, refresh_store_orders
from app.connections.adapters import AdapterFactory, worker_adapters
from app.jobs.context import worker_context
from app.jobs.queueing import enqueue_unique
from integrations.shopify.adapter import ShopifyAdapter


def refresh_customer_orders(customer_id: str) -> str:
    ctx = worker_context()
    return refresh_orders_of(
        ctx.session_factory, worker_adapters(), uuid.UUID(customer_id), now=ctx.clock()
    )


def refresh_orders_of(
    session_factory: sessionmaker[Session],
    adapters: AdapterFactory,
    customer_id: uuid.UUID,
    *,
    now: datetime,
) -> str:
    """Read the customer's newest Shopify orders and write them into our copy.

    The read happens between two transactions: building the adapter locks the shop's
    install row (its token may be refreshed), and money workers must not wait on reads.
    """
    with session_factory() as session, session.begin():
        customer = session.get(Customer, customer_id)
        if customer is None or customer.shopify_customer_id is None:
            return "no shopify customer"
        shopify_customer = customer.shopify_customer_id
        adapter = adapters(session, customer.shop_id, "shopify")
    if not isinstance(adapter, ShopifyAdapter):
        raise TypeError(f"the shopify adapter is a {type(adapter).__name__}")
    orders = adapter.customer_orders(shopify_customer, ORDERS_SHOWN)
    with session_factory() as session, session.begin():
        customer = session.get(Customer, customer_id)
        if customer is None or customer.shopify_customer_id != shopify_customer:
            return "the customer changed while their orders were read"
        added, updated = refresh_store_orders(
            session, customer=customer, orders=orders, actor=WORKER, now=now
        )
        return f"{added} added, {updated} updated"


def enqueue_order_refresh(queue: Queue, customer_id: uuid.UUID) -> bool:
    """Refresh our copy of the customer's Shopify orders (background queue); a refresh
    already waiting for the customer will read the same orders, so none is added."""
    return enqueue_unique(
        queue,
        "app.cases.jobs.refresh_customer_orders",
        (str(customer_id),),
        f"orders-{customer_id}",
    )

"""Stripe objects, built field for field after Stripe's current example objects.

Each builder returns every field that ``stripe-fixtures3-2026-07-29.dahlia.json`` has for
the object, with realistic values or ``null`` (the fixtures' placeholders such as
``"type": "type"`` are replaced by what a real card payment shows). Optional fields that
Stripe only includes in some states (``failure_reason``, ``pending_reason``,
``next_action`` on refunds) are added by the resource code when they apply.
"""

from __future__ import annotations

import calendar
import datetime as dt
from typing import Any

from .ids import new_id, random_base62

JSON = dict[str, Any]


def _address() -> JSON:
    return {
        "city": None,
        "country": None,
        "line1": None,
        "line2": None,
        "postal_code": None,
        "state": None,
    }


def deleted(object_type: str, object_id: str) -> JSON:
    """What Stripe answers to a DELETE (and to retrieving some deleted objects)."""
    return {"id": object_id, "object": object_type, "deleted": True}


# -- customers -----------------------------------------------------------------------------


def customer(
    *,
    created: int,
    livemode: bool,
    email: str | None,
    name: str | None,
    description: str | None,
    phone: str | None,
    metadata: dict[str, str],
) -> JSON:
    """A new customer with no balance, no currency and no default payment method."""
    return {
        "id": new_id("cus"),
        "object": "customer",
        "address": None,
        "balance": 0,
        "created": created,
        "currency": None,
        "default_source": None,
        "delinquent": False,
        "description": description,
        "discount": None,
        "email": email,
        "invoice_prefix": random_base62(8).upper(),
        "invoice_settings": {
            "custom_fields": None,
            "default_payment_method": None,
            "footer": None,
            "rendering_options": None,
        },
        "livemode": livemode,
        "metadata": metadata,
        "name": name,
        "next_invoice_sequence": 1,
        "phone": phone,
        "preferred_locales": [],
        "shipping": None,
        "tax_exempt": "none",
        "test_clock": None,
    }


def customer_balance_transaction(
    *,
    created: int,
    livemode: bool,
    customer_id: str,
    amount: int,
    currency: str,
    ending_balance: int,
    description: str | None,
    metadata: dict[str, str],
) -> JSON:
    """An ``adjustment`` to a customer's credit balance (negative amount = credit)."""
    return {
        "id": new_id("cbtxn"),
        "object": "customer_balance_transaction",
        "amount": amount,
        "checkout_session": None,
        "created": created,
        "credit_note": None,
        "currency": currency,
        "customer": customer_id,
        "customer_account": None,
        "description": description,
        "ending_balance": ending_balance,
        "invoice": None,
        "livemode": livemode,
        "metadata": metadata,
        "type": "adjustment",
    }


# -- cards and payments -------------------------------------------------------------------


def card_details(card: JSON) -> JSON:
    """``payment_method.card`` for one of the sandbox's test cards."""
    return {
        "brand": card["brand"],
        "checks": {
            "address_line1_check": None,
            "address_postal_code_check": None,
            "cvc_check": "pass",
        },
        "country": "US",
        "display_brand": card["brand"],
        "exp_month": 12,
        "exp_year": card["exp_year"],
        "fingerprint": card["fingerprint"],
        "funding": card["funding"],
        "generated_from": None,
        "last4": card["last4"],
        "networks": {"available": [card["brand"]], "preferred": None},
        "regulated_status": "unregulated",
        "three_d_secure_usage": {"supported": True},
        "wallet": None,
    }


def payment_method(*, created: int, livemode: bool, customer_id: str | None, card: JSON) -> JSON:
    """A card PaymentMethod, as created from a test token such as ``pm_card_visa``."""
    return {
        "id": new_id("pm"),
        "object": "payment_method",
        "allow_redisplay": "unspecified",
        "billing_details": {
            "address": _address(),
            "email": None,
            "name": None,
            "phone": None,
            "tax_id": None,
        },
        "card": card_details(card),
        "created": created,
        "customer": customer_id,
        "customer_account": None,
        "livemode": livemode,
        "metadata": {},
        "type": "card",
    }


def payment_intent(
    *,
    created: int,
    livemode: bool,
    amount: int,
    currency: str,
    customer_id: str | None,
    capture_method: str,
    description: str | None,
    metadata: dict[str, str],
    receipt_email: str | None,
    payment_method_types: list[str],
) -> JSON:
    """A PaymentIntent awaiting its payment method."""
    pi_id = new_id("pi")
    return {
        "id": pi_id,
        "object": "payment_intent",
        "amount": amount,
        "amount_capturable": 0,
        "amount_details": {"tip": {}},
        "amount_received": 0,
        "application": None,
        "application_fee_amount": None,
        "automatic_payment_methods": None,
        "canceled_at": None,
        "cancellation_reason": None,
        "capture_method": capture_method,
        "client_secret": f"{pi_id}_secret_{random_base62(25)}",
        "confirmation_method": "automatic",
        "created": created,
        "currency": currency,
        "customer": customer_id,
        "customer_account": None,
        "description": description,
        "excluded_payment_method_types": None,
        "last_payment_error": None,
        "latest_charge": None,
        "livemode": livemode,
        "managed_payments": {"enabled": False},
        "metadata": metadata,
        "next_action": None,
        "on_behalf_of": None,
        "payment_method": None,
        "payment_method_configuration_details": None,
        "payment_method_options": {
            "card": {
                "installments": None,
                "mandate_options": None,
                "network": None,
                "request_three_d_secure": "automatic",
            }
        },
        "payment_method_types": payment_method_types,
        "processing": None,
        "receipt_email": receipt_email,
        "review": None,
        "setup_future_usage": None,
        "shipping": None,
        "source": None,
        "statement_descriptor": None,
        "statement_descriptor_suffix": None,
        "status": "requires_payment_method",
        "transfer_data": None,
        "transfer_group": None,
    }


def charge(
    *,
    created: int,
    livemode: bool,
    pi: JSON,
    pm: JSON,
    card: JSON,
    outcome: JSON,
    succeeded: bool,
    captured: bool,
    failure_code: str | None = None,
    failure_message: str | None = None,
) -> JSON:
    """The charge a PaymentIntent confirmation creates (succeeded or failed)."""
    charge_id = new_id("ch")
    amount = int(pi["amount"])
    return {
        "id": charge_id,
        "object": "charge",
        "amount": amount,
        "amount_captured": amount if (succeeded and captured) else 0,
        "amount_refunded": 0,
        "application": None,
        "application_fee": None,
        "application_fee_amount": None,
        "balance_transaction": new_id("txn") if (succeeded and captured) else None,
        "billing_details": {
            "address": _address(),
            "email": None,
            "name": None,
            "phone": None,
            "tax_id": None,
        },
        "calculated_statement_descriptor": "CASEWARD SANDBOX",
        "captured": bool(succeeded and captured),
        "created": created,
        "currency": pi["currency"],
        "customer": pi["customer"],
        "description": pi["description"],
        "disputed": False,
        "failure_balance_transaction": None,
        "failure_code": failure_code,
        "failure_message": failure_message,
        "fraud_details": {},
        "livemode": livemode,
        "metadata": dict(pi["metadata"]),
        "on_behalf_of": None,
        "outcome": outcome,
        "paid": succeeded,
        "payment_intent": pi["id"],
        "payment_method": pm["id"],
        "payment_method_details": {
            "card": {
                "amount_authorized": amount if succeeded else None,
                "authorization_code": random_base62(6).upper() if succeeded else None,
                "brand": card["brand"],
                "checks": {
                    "address_line1_check": None,
                    "address_postal_code_check": None,
                    "cvc_check": "pass",
                },
                "country": "US",
                "exp_month": 12,
                "exp_year": card["exp_year"],
                "extended_authorization": {"status": "disabled"},
                "fingerprint": card["fingerprint"],
                "funding": card["funding"],
                "incremental_authorization": {"status": "unavailable"},
                "installments": None,
                "last4": card["last4"],
                "mandate": None,
                "multicapture": {"status": "unavailable"},
                "network": card["brand"],
                "network_token": {"used": False},
                "network_transaction_id": random_base62(15) if succeeded else None,
                "overcapture": {"maximum_amount_capturable": amount, "status": "unavailable"},
                "regulated_status": "unregulated",
                "three_d_secure": None,
                "transaction_link_id": None,
                "wallet": None,
            },
            "type": "card",
        },
        "receipt_email": pi["receipt_email"],
        "receipt_number": None,
        "receipt_url": f"https://pay.stripe.com/receipts/payment/{random_base62(60)}",
        "refunded": False,
        "refunds": {
            "object": "list",
            "data": [],
            "has_more": False,
            "url": f"/v1/charges/{charge_id}/refunds",
        },
        "review": None,
        "shipping": None,
        "source": None,
        "source_transfer": None,
        "statement_descriptor": None,
        "statement_descriptor_suffix": None,
        "status": "succeeded" if succeeded else "failed",
        "transfer_data": None,
        "transfer_group": None,
    }


def refund(
    *,
    created: int,
    charge_obj: JSON,
    amount: int,
    reason: str | None,
    metadata: dict[str, str],
    status: str,
) -> JSON:
    """A card refund against ``charge_obj`` (state-specific fields are added by the caller)."""
    return {
        "id": new_id("re"),
        "object": "refund",
        "amount": amount,
        "balance_transaction": new_id("txn") if status in ("succeeded", "pending") else None,
        "charge": charge_obj["id"],
        "created": created,
        "currency": charge_obj["currency"],
        "customer": charge_obj["customer"],
        "customer_account": None,
        "destination_details": {"card": {"type": "refund"}, "type": "card"},
        "metadata": metadata,
        "payment_intent": charge_obj["payment_intent"],
        "payment_method": charge_obj["payment_method"],
        "reason": reason,
        "receipt_number": None,
        "source_transfer_reversal": None,
        "status": status,
        "transfer_reversal": None,
    }


def dispute(*, created: int, livemode: bool, charge_obj: JSON, reason: str, due_by: int) -> JSON:
    """A chargeback opened against ``charge_obj`` (what ``pm_card_createDispute`` causes)."""
    card = charge_obj["payment_method_details"]["card"]
    return {
        "id": new_id("dp"),
        "object": "dispute",
        "amount": charge_obj["amount"],
        "balance_transactions": [],
        "charge": charge_obj["id"],
        "created": created,
        "currency": charge_obj["currency"],
        "enhanced_eligibility_types": [],
        "evidence": {
            name: None
            for name in (
                "access_activity_log billing_address cancellation_policy "
                "cancellation_policy_disclosure cancellation_rebuttal customer_communication "
                "customer_email_address customer_name customer_purchase_ip customer_signature "
                "duplicate_charge_documentation duplicate_charge_explanation duplicate_charge_id "
                "product_description receipt refund_policy refund_policy_disclosure "
                "refund_refusal_explanation service_date service_documentation shipping_address "
                "shipping_carrier shipping_date shipping_documentation shipping_tracking_number "
                "uncategorized_file uncategorized_text"
            ).split()
        }
        | {"enhanced_evidence": {}},
        "evidence_details": {
            "due_by": due_by,
            "enhanced_eligibility": {},
            "has_evidence": False,
            "past_due": False,
            "submission_count": 0,
        },
        "is_charge_refundable": False,
        "livemode": livemode,
        "metadata": {},
        "payment_intent": charge_obj["payment_intent"],
        "payment_method_details": {
            "card": {
                "brand": card["brand"],
                "case_type": "chargeback",
                "network": card["brand"],
                "network_reason_code": "10.4",
            },
            "type": "card",
        },
        "reason": reason,
        "status": "needs_response",
    }


# -- discounts -------------------------------------------------------------------------------


def coupon(
    *,
    coupon_id: str,
    created: int,
    livemode: bool,
    percent_off: float | None,
    amount_off: int | None,
    currency: str | None,
    duration: str,
    duration_in_months: int | None,
    max_redemptions: int | None,
    redeem_by: int | None,
    name: str | None,
    metadata: dict[str, str],
) -> JSON:
    """A coupon: a percentage or fixed amount off, once, for some months, or forever."""
    return {
        "id": coupon_id,
        "object": "coupon",
        "amount_off": amount_off,
        "created": created,
        "currency": currency,
        "duration": duration,
        "duration_in_months": duration_in_months,
        "livemode": livemode,
        "max_redemptions": max_redemptions,
        "metadata": metadata,
        "name": name,
        "percent_off": percent_off,
        "redeem_by": redeem_by,
        "times_redeemed": 0,
        "valid": True,
    }


def promotion_code(
    *,
    created: int,
    livemode: bool,
    code: str,
    coupon_id: str,
    customer_id: str | None,
    active: bool,
    expires_at: int | None,
    max_redemptions: int | None,
    metadata: dict[str, str],
    restrictions: JSON,
) -> JSON:
    """A customer-facing code for a coupon (the 2025+ ``promotion`` shape)."""
    return {
        "id": new_id("promo"),
        "object": "promotion_code",
        "active": active,
        "code": code,
        "created": created,
        "customer": customer_id,
        "customer_account": None,
        "expires_at": expires_at,
        "livemode": livemode,
        "max_redemptions": max_redemptions,
        "metadata": metadata,
        "promotion": {"coupon": coupon_id, "type": "coupon"},
        "restrictions": restrictions,
        "times_redeemed": 0,
    }


# -- billing -------------------------------------------------------------------------------------


def product(*, created: int, livemode: bool, name: str, metadata: dict[str, str]) -> JSON:
    """A product that prices point to."""
    return {
        "id": new_id("prod"),
        "object": "product",
        "active": True,
        "created": created,
        "default_price": None,
        "description": None,
        "images": [],
        "livemode": livemode,
        "marketing_features": [],
        "metadata": metadata,
        "name": name,
        "package_dimensions": None,
        "shippable": None,
        "statement_descriptor": None,
        "tax_code": None,
        "type": "service",
        "unit_label": None,
        "updated": created,
        "url": None,
    }


def price(
    *,
    created: int,
    livemode: bool,
    product_id: str,
    currency: str,
    unit_amount: int,
    interval: str | None,
    interval_count: int,
    metadata: dict[str, str],
    nickname: str | None = None,
) -> JSON:
    """A per-unit price, recurring when ``interval`` is given."""
    recurring = (
        {
            "interval": interval,
            "interval_count": interval_count,
            "meter": None,
            "trial_period_days": None,
            "usage_type": "licensed",
        }
        if interval
        else None
    )
    return {
        "id": new_id("price"),
        "object": "price",
        "active": True,
        "billing_scheme": "per_unit",
        "created": created,
        "currency": currency,
        "custom_unit_amount": None,
        "livemode": livemode,
        "lookup_key": None,
        "metadata": metadata,
        "nickname": nickname,
        "product": product_id,
        "recurring": recurring,
        "tax_behavior": "unspecified",
        "tiers_mode": None,
        "transform_quantity": None,
        "type": "recurring" if interval else "one_time",
        "unit_amount": unit_amount,
        "unit_amount_decimal": str(unit_amount),
    }


def plan_from_price(price_obj: JSON) -> JSON:
    """The legacy ``plan`` view Stripe still embeds in subscription items."""
    recurring = price_obj["recurring"] or {}
    return {
        "id": price_obj["id"],
        "object": "plan",
        "active": price_obj["active"],
        "amount": price_obj["unit_amount"],
        "amount_decimal": price_obj["unit_amount_decimal"],
        "billing_scheme": price_obj["billing_scheme"],
        "created": price_obj["created"],
        "currency": price_obj["currency"],
        "interval": recurring.get("interval", "month"),
        "interval_count": recurring.get("interval_count", 1),
        "livemode": price_obj["livemode"],
        "metadata": price_obj["metadata"],
        "meter": None,
        "nickname": price_obj["nickname"],
        "product": price_obj["product"],
        "tiers_mode": None,
        "transform_usage": None,
        "trial_period_days": None,
        "usage_type": recurring.get("usage_type", "licensed"),
    }


def add_interval(start: int, interval: str, count: int) -> int:
    """``start`` plus ``count`` billing intervals, calendar-aware for months and years."""
    moment = dt.datetime.fromtimestamp(start, tz=dt.UTC)
    if interval == "day":
        return start + 86400 * count
    if interval == "week":
        return start + 7 * 86400 * count
    months = count * (12 if interval == "year" else 1)
    month_index = moment.month - 1 + months
    year = moment.year + month_index // 12
    month = month_index % 12 + 1
    day = min(moment.day, calendar.monthrange(year, month)[1])
    return int(moment.replace(year=year, month=month, day=day).timestamp())


def subscription_item(
    *, created: int, subscription_id: str, price_obj: JSON, quantity: int, period: tuple[int, int]
) -> JSON:
    """One line of a subscription; billing periods live on items since 2025."""
    return {
        "id": new_id("si"),
        "object": "subscription_item",
        "billing_thresholds": None,
        "created": created,
        "current_period_end": period[1],
        "current_period_start": period[0],
        "discounts": [],
        "metadata": {},
        "plan": plan_from_price(price_obj),
        "price": price_obj,
        "quantity": quantity,
        "subscription": subscription_id,
        "tax_rates": [],
    }


def subscription(
    *,
    subscription_id: str,
    created: int,
    livemode: bool,
    customer_id: str,
    currency: str,
    items: list[JSON],
    status: str,
    trial: tuple[int, int] | None,
    cancel_at_period_end: bool,
    description: str | None,
    metadata: dict[str, str],
) -> JSON:
    """A subscription in the current (flexible-periods) shape."""
    return {
        "id": subscription_id,
        "object": "subscription",
        "application": None,
        "application_fee_percent": None,
        "automatic_tax": {"disabled_reason": None, "enabled": False, "liability": None},
        "billing_cycle_anchor": created if trial is None else trial[1],
        "billing_cycle_anchor_config": None,
        "billing_mode": {"flexible": None, "type": "classic"},
        "billing_schedules": [],
        "billing_thresholds": None,
        "cancel_at": None,
        "cancel_at_period_end": cancel_at_period_end,
        "canceled_at": None,
        "cancellation_details": {"comment": None, "feedback": None, "reason": None},
        "collection_method": "charge_automatically",
        "created": created,
        "currency": currency,
        "customer": customer_id,
        "customer_account": None,
        "days_until_due": None,
        "default_payment_method": None,
        "default_source": None,
        "default_tax_rates": [],
        "description": description,
        "discounts": [],
        "ended_at": None,
        "invoice_settings": {"account_tax_ids": None, "issuer": {"type": "self"}},
        "items": {
            "object": "list",
            "data": items,
            "has_more": False,
            "url": f"/v1/subscription_items?subscription={subscription_id}",
        },
        "latest_invoice": None,
        "livemode": livemode,
        "managed_payments": {"enabled": False},
        "metadata": metadata,
        "next_pending_invoice_item_invoice": None,
        "on_behalf_of": None,
        "pause_collection": None,
        "payment_settings": {
            "payment_method_options": None,
            "payment_method_types": None,
            "save_default_payment_method": "off",
        },
        "pending_invoice_item_interval": None,
        "pending_setup_intent": None,
        "pending_update": None,
        "schedule": None,
        "start_date": created,
        "status": status,
        "test_clock": None,
        "transfer_data": None,
        "trial_end": trial[1] if trial else None,
        "trial_settings": {"end_behavior": {"missing_payment_method": "create_invoice"}},
        "trial_start": trial[0] if trial else None,
    }


# -- webhooks ------------------------------------------------------------------------------


def webhook_endpoint(
    *,
    created: int,
    livemode: bool,
    url: str,
    enabled_events: list[str],
    description: str | None,
    api_version: str | None,
    metadata: dict[str, str],
) -> JSON:
    """A webhook endpoint (its ``secret`` is only shown in the create response)."""
    return {
        "id": new_id("we"),
        "object": "webhook_endpoint",
        "api_version": api_version,
        "application": None,
        "created": created,
        "description": description,
        "enabled_events": enabled_events,
        "livemode": livemode,
        "metadata": metadata,
        "status": "enabled",
        "url": url,
    }

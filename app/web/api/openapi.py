"""The OpenAPI 3.1 description of the staff API, served at ``/api/openapi.json``.

It states the bounds the handlers enforce (required fields, lengths, ranges, enums,
no unknown fields), reading them from the modules that enforce them, and the shape of
every answer. A test compares its paths with the URL map and a schemathesis run checks
the API against it: a new route is added to :data:`PATHS` in the same change.
"""

from __future__ import annotations

import re
from typing import Any

from app.actors import ActorKind, Surface
from app.agents.models import AgentTool
from app.alerts.models import AlertKind
from app.alerts.service import MAX_WEBHOOK_URL
from app.approvals.drafts import DURATIONS, MAX_ID, MAX_LINE_ITEMS, MAX_TEXT, PRORATIONS
from app.cases.models import CaseStatus
from app.cases.proposals import ProposalStatus
from app.connections.adapters import TARGETS
from app.connections.merchant import MAX_GRACE_SECONDS, MAX_URL_LENGTH
from app.connections.service import MAX_KEY_LENGTH
from app.conversations.models import Author
from app.conversations.service import MAX_MESSAGE
from app.drafting.result import NextStep
from app.execution.brakes import MAX_CEILING, MAX_ERROR_WINDOW, SETTING_NAMES, BrakeRule
from app.execution.models import ActionStatus
from app.guard import MONEY_KINDS, IdentityLevel, Outcome
from app.guard.policy import (
    MAX_AMOUNT,
    MAX_COUNT,
    MAX_CREDIT_BONUS_PERCENT,
    MAX_DAYS,
    MAX_OWNER_LENGTH,
    MAX_PERIOD,
    MAX_REASON_LENGTH,
    MAX_REASONS,
)
from app.history_audit.findings import Rule
from app.history_audit.models import ScanStatus
from app.history_audit.report import EXPORT_FORMATS
from app.history_audit.scan import DEFAULT_WINDOW_DAYS, MAX_WINDOW_DAYS, PROVIDERS
from app.shops.policy_form import CEILING_FIELDS
from app.staff.members import ROLES
from app.staff.tokens import MAX_LIFETIME
from app.validation import (
    DIGEST_LENGTH,
    INT32_MAX,
    LONG_TEXT,
    PAGE_DEFAULT,
    PAGE_MAXIMUM,
    SHORT_TEXT,
)
from app.whatif import SHOWN as WHAT_IF_SHOWN
from app.whatif import Change, Source
from integrations.provider import ActionKind

JSONSchema = dict[str, Any]


def _ref(name: str) -> JSONSchema:
    return {"$ref": f"#/components/schemas/{name}"}


def _json(schema: JSONSchema) -> dict[str, Any]:
    return {"content": {"application/json": {"schema": schema}}}


def _nullable(schema: JSONSchema) -> JSONSchema:
    return {"oneOf": [schema, {"type": "null"}]}


def _object(
    properties: dict[str, JSONSchema], required: tuple[str, ...] = (), *, closed: bool = False
) -> JSONSchema:
    """An object schema; ``closed`` where the handler refuses unknown fields."""
    schema: JSONSchema = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    if closed:
        schema["additionalProperties"] = False
    return schema


def _text(max_length: int, *, min_length: int = 0, description: str = "") -> JSONSchema:
    schema: JSONSchema = {"type": "string", "maxLength": max_length}
    if min_length:
        schema["minLength"] = min_length
    schema["description"] = (
        description + " " if description else ""
    ) + "No control characters (free text may hold tab and line breaks)."
    return schema


def _int(minimum: int, maximum: int = INT32_MAX, description: str = "") -> JSONSchema:
    schema: JSONSchema = {"type": "integer", "minimum": minimum, "maximum": maximum}
    if description:
        schema["description"] = description
    return schema


def _enum(values: Any) -> JSONSchema:
    return {"type": "string", "enum": [str(v) for v in values]}


def _op(
    summary: str,
    ok: JSONSchema,
    body: JSONSchema | None = None,
    errors: tuple[int, ...] = (400, 401, 403, 404),
    status: int = 200,
    parameters: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    codes = (*errors, 413) if body is not None else errors
    operation: dict[str, Any] = {
        "summary": summary,
        "security": [{"staffToken": []}],
        "responses": {
            str(status): {
                "description": {201: "Created", 202: "Accepted"}.get(status, "OK"),
                **_json(ok),
            },
            **{str(code): {"description": _ERRORS[code], **_json(_ref("Error"))} for code in codes},
        },
    }
    if parameters:
        operation["parameters"] = parameters
    if body is not None:
        operation["requestBody"] = {"required": True, **_json(body)}
    return operation


def _file_op(
    summary: str, media_types: tuple[str, ...], parameters: list[dict[str, Any]]
) -> dict[str, Any]:
    """An operation answering a file (one of ``media_types``) rather than JSON."""
    operation = _op(summary, {"type": "string"}, errors=(400, 401, 403), parameters=parameters)
    operation["responses"]["200"] = {
        "description": "OK",
        "content": {media_type: {"schema": {"type": "string"}} for media_type in media_types},
    }
    return operation


def _with_path_parameters(paths: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Declare every ``{name}`` of a templated path as a required uuid parameter."""
    for template, item in paths.items():
        names = re.findall(r"\{(\w+)\}", template)
        if names:
            item["parameters"] = [
                {
                    "name": name,
                    "in": "path",
                    "required": True,
                    "schema": _PATH_PARAMETER_SCHEMAS.get(name, _UUID),
                }
                for name in names
            ]
    return paths


_ERRORS = {
    400: "Bad input; `error.field` names the field",
    401: "Missing or invalid staff token",
    403: "The caller's role, limit or the shop's configuration does not allow it",
    404: "Not found in the caller's shop",
    409: "The state changed (stale digest, already decided, already executing)",
    413: "The request body is larger than the limit the message names",
    502: "The provider did not answer; nothing was saved",
}

_UUID: JSONSchema = {"type": "string", "format": "uuid"}
_TIME: JSONSchema = {"type": "string", "format": "date-time"}
_OPTIONAL_TIME = _nullable(_TIME)
_OPTIONAL_TEXT: JSONSchema = {"type": ["string", "null"]}
_SECONDS_MAX = int(MAX_PERIOD.total_seconds())

# ---------------------------------------------------------------- requests

_PARAMS = _object(
    {
        "reason": _text(MAX_TEXT, min_length=1),
        "description": _text(MAX_TEXT, min_length=1),
        "percent_off": _int(1, 100),
        "amount_off": _int(1, description="minor units"),
        "duration": _enum(DURATIONS),
        "duration_in_months": _int(1, 120),
        "at_period_end": {"type": "boolean"},
        "shipping": _int(1, description="Shopify refunds: shipping given back, minor units"),
        "notify": {"type": "boolean", "description": "Shopify: Shopify tells the customer"},
        "cancel_at_period_end": {"type": "boolean"},
        "proration_behavior": _enum(PRORATIONS),
        "items": {
            "type": "array",
            "minItems": 1,
            "maxItems": MAX_LINE_ITEMS,
            "items": _object(
                {"price": _text(MAX_ID, min_length=1), "quantity": _int(1)},
                ("price",),
                closed=True,
            ),
        },
    },
    closed=True,
)

_DRAFT = _object(
    {
        "kind": _enum(ActionKind),
        "provider": {
            "enum": sorted(TARGETS),
            "description": "who carries the action out; by default, the one whose ids the "
            "target has",
        },
        "target": {
            "type": "string",
            "minLength": 4,
            "maxLength": MAX_ID,
            "pattern": "^((pi_|ch_|cus_|sub_)[A-Za-z0-9_]+"
            "|gid://shopify/(Order|Customer)/[1-9][0-9]*)$",
            "description": "Stripe: pi_/ch_ (refund), cus_ (credit, discount), sub_ "
            "(subscription). Shopify: an Order gid (refund), a Customer gid (credit, "
            "discount).",
        },
        "amount": _int(1, description="minor units (4800 = $48.00)"),
        "currency": {"type": "string", "minLength": 3, "maxLength": 3, "example": "usd"},
        "line_items": {
            "type": "array",
            "maxItems": MAX_LINE_ITEMS,
            "items": _object(
                {
                    "line_id": _text(MAX_ID, min_length=1),
                    "amount": _int(1),
                    "quantity": _int(1, description="Shopify only, and required there"),
                },
                ("line_id", "amount"),
                closed=True,
            ),
        },
        "params": _PARAMS,
        "reason": _text(MAX_TEXT),
        "customer_ref": _text(MAX_ID),
    },
    ("kind", "target"),
    closed=True,
)
_DRAFT["example"] = {
    "kind": "refund",
    "target": "pi_3PqLinenApron0001",
    "amount": 4800,
    "currency": "usd",
    "line_items": [{"line_id": "apron-natural", "amount": 4800}],
    "reason": "One apron arrived torn.",
}

_CAP = _nullable(
    _object(
        {
            "amount": _int(1, MAX_AMOUNT),
            "currency": {"type": "string", "minLength": 3, "maxLength": 3},
            "period_seconds": _int(1, _SECONDS_MAX),
        },
        ("amount", "currency", "period_seconds"),
        closed=True,
    )
)
_CURRENCY_AMOUNTS: JSONSchema = {
    "type": "object",
    "description": "currency code -> minor units",
    "additionalProperties": _int(0, MAX_AMOUNT),
}

_POLICY_RULES = _object(
    {
        "version": {"type": "integer", "description": "ignored: the next version is assigned"},
        "enabled_kinds": {"type": "array", "items": _enum(ActionKind)},
        "auto_approve_ceiling": _CURRENCY_AMOUNTS,
        "two_person_threshold": _CURRENCY_AMOUNTS,
        "kind_ceilings": _object(
            {kind.value: _CURRENCY_AMOUNTS for kind in sorted(MONEY_KINDS)}, closed=True
        ),
        "duplicate_window_seconds": _int(1, _SECONDS_MAX),
        "refund_window_days": _nullable(_int(1, MAX_DAYS)),
        "per_customer_cap": _CAP,
        "per_shop_cap": _CAP,
        "allowed_reasons": _nullable(
            {
                "type": "array",
                "maxItems": MAX_REASONS,
                "items": _text(MAX_REASON_LENGTH, min_length=1),
            }
        ),
        "min_identity": _object(
            {
                kind.value: _enum([IdentityLevel.MEDIUM, IdentityLevel.STRONG])
                for kind in ActionKind
            },
            closed=True,
        ),
        "max_percent_off": _int(1, 100),
        "store_credit_bonus_percent": _nullable(_int(0, MAX_CREDIT_BONUS_PERCENT)),
        "replacement_discount": {"type": "boolean"},
        "handover_owner": _nullable(_text(MAX_OWNER_LENGTH, min_length=1)),
        "signals": _object(
            {
                "history_needed": _int(0, MAX_COUNT),
                "repeat_claims": _nullable(_int(1, MAX_COUNT)),
                "repeat_claims_percent": _nullable(_int(1, 100)),
                "old_delivery_days": _nullable(_int(1, MAX_DAYS)),
                "delivered_but_not_received": {"type": "boolean"},
                "new_customer_amount": _CURRENCY_AMOUNTS,
                "new_customer_days": _nullable(_int(1, MAX_DAYS)),
                "shared_email_customers": _nullable(_int(1, MAX_COUNT)),
            },
            closed=True,
        ),
    },
    closed=True,
)

# ---------------------------------------------------------------- answers

_MONEY = _nullable(
    _object(
        {
            "amount": {"type": "integer", "description": "minor units (4800 = $48.00)"},
            "currency": {"type": "string", "example": "usd"},
            "display": {"type": "string", "example": "$48.00"},
        },
        ("amount", "currency", "display"),
    )
)

_CASE_SUMMARY = _object(
    {
        "id": _UUID,
        "subject": {"type": "string"},
        "status": _enum(CaseStatus),
        "owner": _OPTIONAL_TEXT,
        "identity_level": _enum(IdentityLevel),
        "created_at": _TIME,
        "updated_at": _TIME,
    },
    ("id", "subject", "status", "owner", "identity_level", "created_at", "updated_at"),
)

_AGENT = _object(
    {
        "id": _UUID,
        "name": {"type": "string"},
        "prefix": {"type": "string"},
        "allowed_kinds": {"type": "array", "items": _enum(ActionKind)},
        "allowed_tools": {"type": "array", "items": _enum(AgentTool)},
        "ceiling": _nullable({"type": "object", "additionalProperties": {"type": "integer"}}),
        "created_by": {"type": "string"},
        "created_at": _TIME,
        "revoked_at": _nullable(_TIME),
        "last_used_at": _nullable(_TIME),
    },
    (
        "id",
        "name",
        "prefix",
        "allowed_kinds",
        "allowed_tools",
        "ceiling",
        "created_at",
        "revoked_at",
    ),
)

_MESSAGE = _object(
    {
        "id": _UUID,
        "author": _enum(Author),
        "text": {"type": "string"},
        "created_at": _TIME,
    },
    ("id", "author", "text", "created_at"),
)

_GORGIAS_CONNECTED = _object(
    {
        "domain": {"type": "string"},
        "key": {"type": "string"},
        "prepare_on_arrival": {"type": "boolean"},
        "integration_secret": _OPTIONAL_TEXT,
        "events_url": {"type": "string"},
        "sidebar_url": {"type": "string"},
    },
    ("domain", "key", "prepare_on_arrival", "integration_secret", "events_url", "sidebar_url"),
)

_APPROVAL = _object(
    {
        "approver": {"type": "string"},
        "digest": {"type": "string"},
        "created_at": _TIME,
        "expires_at": _TIME,
        "void_reason": _OPTIONAL_TEXT,
        "consumed_by_action": _OPTIONAL_TEXT,
    },
    ("approver", "digest", "created_at", "expires_at"),
)

_PROPOSAL = _object(
    {
        "id": _UUID,
        "case_id": _UUID,
        "revision": {"type": "integer"},
        "status": _enum(ProposalStatus),
        "kind": _enum(ActionKind),
        "provider": {"type": "string"},
        "target": {"type": "string"},
        "money_ref": {
            "type": ["string", "null"],
            "description": "a refund's money: the payment behind the order, whichever "
            "provider refunds it",
        },
        "customer_ref": _OPTIONAL_TEXT,
        "amount": _ref("Money"),
        "line_items": {"type": "array"},
        "params": {"type": "object"},
        "reason": _OPTIONAL_TEXT,
        "rejection_reason": {
            "type": ["string", "null"],
            "description": "why a person rejected it, in their words",
        },
        "proposed_by": {"type": "string"},
        "proposed_by_agent": _nullable(
            _object({"id": _UUID, "name": {"type": "string"}}, ("id", "name"))
        ),
        "approvals_required": {"type": "integer"},
        "policy_version": {"type": "integer"},
        "digest": {"type": "string"},
        "verdict": {"type": "object", "description": "every check, its result, facts"},
        "approvals": {"type": "array", "items": _APPROVAL},
    },
    ("id", "case_id", "revision", "status", "kind", "target", "amount", "digest", "verdict"),
)

_ATTEMPT = _object(
    {
        "number": {"type": "integer"},
        "purpose": {"type": "string"},
        "idempotency_key": {"type": "string"},
        "started_at": _TIME,
        "finished_at": _OPTIONAL_TIME,
        "outcome": _OPTIONAL_TEXT,
        "provider_ref": _OPTIONAL_TEXT,
        "provider_status": _OPTIONAL_TEXT,
        "detail": _OPTIONAL_TEXT,
    },
    ("number", "purpose", "idempotency_key", "started_at"),
)

_ACTION = _object(
    {
        "id": _UUID,
        "case_id": _UUID,
        "proposal_id": _UUID,
        "proposal_revision": {"type": "integer"},
        "kind": _enum(ActionKind),
        "provider": {"type": "string"},
        "target": {"type": "string"},
        "money_ref": {
            "type": ["string", "null"],
            "description": "a refund's money: the payment behind the order, whichever "
            "provider refunds it",
        },
        "amount": _ref("Money"),
        "line_items": {"type": "array"},
        "params": {"type": "object"},
        "digest": {"type": "string"},
        "status": _enum(ActionStatus),
        "status_reason": _OPTIONAL_TEXT,
        "provider_ref": _OPTIONAL_TEXT,
        "failure_reason": _OPTIONAL_TEXT,
        "idempotency_key": {"type": "string"},
        "approved_by": {"type": "array", "items": {"type": "string"}},
        "created_at": _TIME,
        "attempts": {"type": "array", "items": _ATTEMPT},
    },
    ("id", "case_id", "proposal_id", "kind", "target", "amount", "status", "idempotency_key"),
)

_CUSTOMER = _nullable(
    _object(
        {
            "id": _UUID,
            "email": _OPTIONAL_TEXT,
            "name": _OPTIONAL_TEXT,
            "stripe_customer_id": _OPTIONAL_TEXT,
            "merchant_customer_id": _OPTIONAL_TEXT,
        },
        ("id",),
    )
)

_ORDER = _object(
    {
        "id": _UUID,
        "name": {"type": "string"},
        "total": _ref("Money"),
        "payment_provider": {"type": "string"},
        "payment_id": _OPTIONAL_TEXT,
        "shopify_order_id": {
            "type": ["string", "null"],
            "description": "the order's gid at Shopify: the target of a refund through Shopify",
        },
        "lines": {"type": "array", "items": {"type": "object"}},
        "fulfilled_at": _OPTIONAL_TIME,
        "delivered_at": _OPTIONAL_TIME,
    },
    ("id", "name", "total", "lines"),
)

_CLAIM = _nullable(
    _object(
        {
            "order": {"type": "string", "example": "#1001"},
            "lines": {
                "type": "array",
                "items": _object(
                    {
                        "line_id": {"type": "string"},
                        "quantity": {"type": "integer", "minimum": 1},
                        "why": {"type": "string", "description": "in the customer's terms"},
                    },
                    ("line_id", "quantity", "why"),
                ),
            },
        },
        ("order", "lines"),
    )
)

_DRAFTING = _nullable(
    _object(
        {
            "id": _UUID,
            "drafter": {"type": "string"},
            "model": _OPTIONAL_TEXT,
            "next_step": _enum(NextStep),
            "summary": {"type": "string", "description": "for staff"},
            "claim": {
                **_CLAIM,
                "description": "the customer's claim as the drafter stated it; a drafted "
                "proposal covers no more (its within_claim check)",
            },
            "refused_text": {
                "type": ["string", "null"],
                "description": "the drafter's own words to the customer, refused by the "
                "check and never sent",
            },
            "failure": {
                "type": ["string", "null"],
                "description": "why the answer, its proposal or its words were not used",
            },
            "proposal_id": _nullable(_UUID),
            "created_at": _TIME,
        },
        (
            "id",
            "drafter",
            "next_step",
            "summary",
            "claim",
            "refused_text",
            "failure",
            "proposal_id",
            "created_at",
        ),
    )
)

_CASE_FILE: JSONSchema = {
    "allOf": [
        _ref("CaseSummary"),
        _object(
            {
                "instruction_attempt_at": {
                    **_OPTIONAL_TIME,
                    "description": "since when a message of the customer's tried to "
                    "instruct the assistant; null when none did",
                },
                "request_text": {"type": "string"},
                "customer": _CUSTOMER,
                "orders": {"type": "array", "items": _ORDER},
                "proposals": {"type": "array", "items": _ref("Proposal")},
                "actions": {"type": "array", "items": _ref("Action")},
                "drafting": {
                    **_DRAFTING,
                    "description": "the newest run of Caseward's drafter; null when none",
                },
            },
            (
                "instruction_attempt_at",
                "request_text",
                "customer",
                "orders",
                "proposals",
                "actions",
                "drafting",
            ),
        ),
    ]
}

_AUDIT_EVENT = _object(
    {
        "seq": {"type": "integer"},
        "kind": {"type": "string"},
        "actor": {"type": "string"},
        "actor_kind": _nullable({"type": "string", "enum": [str(kind) for kind in ActorKind]}),
        "actor_surface": _nullable({"type": "string", "enum": [str(s) for s in Surface]}),
        "case_id": _OPTIONAL_TEXT,
        "action_id": _OPTIONAL_TEXT,
        "data": {"type": "object"},
        "created_at": _TIME,
        "hash": {"type": "string"},
    },
    ("seq", "kind", "actor", "data", "created_at", "hash"),
)

_PROPOSAL_RESULT = _object(
    {"proposal": _ref("Proposal"), "action": _nullable(_ref("Action"))},
    ("proposal", "action"),
)

_SHOP = _object(
    {
        "domain": {"type": "string"},
        "name": {"type": "string"},
        "writes_enabled": {"type": "boolean"},
        "kill_switch": {"type": "boolean"},
        "policy": {"type": "object"},
        "connections": {
            "type": "array",
            "items": _object(
                {
                    "provider": {"type": "string"},
                    "key": {"type": "string", "description": "masked"},
                    "livemode": {"type": "boolean"},
                },
                ("provider", "key", "livemode"),
            ),
        },
    },
    ("domain", "name", "writes_enabled", "kill_switch", "policy", "connections"),
)

_MONEY_CEILINGS: JSONSchema = {
    "type": "object",
    "additionalProperties": _int(1, MAX_CEILING),
    "description": "currency (ISO 4217) -> minor units; a currency left out has no ceiling",
}
_BRAKE_SETTINGS = _object(
    {
        "money_per_hour": _MONEY_CEILINGS,
        "money_per_day": _MONEY_CEILINGS,
        "actions_per_hour": _nullable(_int(1, MAX_CEILING)),
        "actions_per_day": _nullable(_int(1, MAX_CEILING)),
        "failures_in_a_row": _nullable(
            _int(1, MAX_ERROR_WINDOW, "failed or unclear sends in a row that trip the breaker")
        ),
        "error_percent": _nullable(
            _int(1, 100, "share of the last error_window sends, failed or unclear, that trips it")
        ),
        "error_window": _int(2, MAX_ERROR_WINDOW),
    },
    SETTING_NAMES,
    closed=True,
)
_BRAKES = _object(
    {
        "settings": _BRAKE_SETTINGS,
        "tripped": _nullable(
            _object(
                {
                    "at": _TIME,
                    "rule": _enum(BrakeRule),
                    "reason": _OPTIONAL_TEXT,
                    "action_id": _nullable(_UUID),
                },
                ("at", "rule", "reason", "action_id"),
            )
        ),
        "held": _object(
            {
                "count": {"type": "integer", "minimum": 0},
                "money": {"type": "object", "additionalProperties": {"type": "integer"}},
            },
            ("count", "money"),
        ),
    },
    ("settings", "tripped", "held"),
)
_ALERTS = _object(
    {
        "slack": _nullable(_object({"hint": {"type": "string"}}, ("hint",))),
        "slack_kinds": {"type": "array", "items": _enum(AlertKind)},
        "signing_secret": _OPTIONAL_TEXT,
    },
    ("slack", "slack_kinds", "signing_secret"),
)

# The policy as the settings page's form sends it.
_POLICY_FORM = _object(
    {
        "currency": _text(3, min_length=3, description="ISO 4217, such as usd"),
        "enabled_kinds": {"type": "array", "items": _enum(ActionKind)},
        **{
            name: _text(32, description="an amount, such as 48.00; blank: none")
            for name in (
                "auto_approve_ceiling",
                "two_person_threshold",
                *CEILING_FIELDS.values(),
                "per_customer_cap",
                "per_shop_cap",
                "new_customer_amount",
            )
        },
        **{
            name: _text(8, description="a whole number; blank: none")
            for name in (
                "per_customer_cap_days",
                "per_shop_cap_days",
                "duplicate_window_days",
                "refund_window_days",
                "max_percent_off",
                "store_credit_bonus_percent",
                # The abuse signals' numbers; a signal's field left out keeps its value.
                "history_needed",
                "repeat_claims",
                "repeat_claims_percent",
                "old_delivery_days",
                "new_customer_days",
                "shared_email_customers",
            )
        },
        "replacement_discount": {"type": "boolean"},
        "delivered_but_not_received": {"type": "boolean"},
        "handover_owner": _text(MAX_OWNER_LENGTH),
    },
    ("currency", "enabled_kinds", "duplicate_window_days", "max_percent_off"),
    closed=True,
)

_CHANGE_MONEY = _object(
    {
        "count": {"type": "integer", "minimum": 0},
        "money": {"type": "array", "items": _MONEY},
    },
    ("count", "money"),
)
_REPLAYED_OUTCOME = {
    "outcome": _enum(Outcome),
    "approvals_required": {"type": "integer", "minimum": 0},
}
_WHAT_IF = _object(
    {
        "since": _TIME,
        "until": _TIME,
        "policy_version": {"type": "integer", "description": "the current policy's version"},
        "replayed": {"type": "integer", "minimum": 0},
        "reconstructed": {
            "type": "integer",
            "minimum": 0,
            "description": "how many were replayed on inputs rebuilt from Caseward's records",
        },
        "classes": _object(
            {change.value: _CHANGE_MONEY for change in Change}, tuple(Change), closed=True
        ),
        "items": {
            "type": "array",
            "maxItems": WHAT_IF_SHOWN,
            "items": _object(
                {
                    "change": _enum(change for change in Change if change != Change.UNCHANGED),
                    "reference": {
                        "type": "string",
                        "description": "the case's number, or the provider's id of a "
                        "record made outside Caseward",
                    },
                    "source": _enum(Source),
                    "reconstructed": {"type": "boolean"},
                    "case_id": _nullable(_UUID),
                    "case_url": _nullable({"type": "string"}),
                    "kind": _enum(ActionKind),
                    "amount": _MONEY,
                    "at": _TIME,
                    "current": _object(_REPLAYED_OUTCOME, tuple(_REPLAYED_OUTCOME)),
                    "candidate": _object(
                        {
                            **_REPLAYED_OUTCOME,
                            "said": {"type": "string"},
                            "failing": {
                                "type": "array",
                                "items": _object(
                                    {
                                        "check": {"type": "string"},
                                        "check_said": {"type": "string"},
                                        "said": {"type": "string"},
                                    },
                                    ("check", "check_said", "said"),
                                ),
                            },
                        },
                        (*_REPLAYED_OUTCOME, "said", "failing"),
                    ),
                },
                (
                    "change",
                    "reference",
                    "source",
                    "reconstructed",
                    "case_id",
                    "case_url",
                    "kind",
                    "amount",
                    "at",
                    "current",
                    "candidate",
                ),
            ),
        },
        "items_total": {
            "type": "integer",
            "minimum": 0,
            "description": "how many past actions the candidate changes; items lists the first",
        },
    },
    (
        "since",
        "until",
        "policy_version",
        "replayed",
        "reconstructed",
        "classes",
        "items",
        "items_total",
    ),
)

_SHARE: JSONSchema = {
    "type": "number",
    "minimum": 0,
    "maximum": 1,
    "description": "how much of the window is read",
}
_HISTORY_SCAN = _object(
    {
        "id": _UUID,
        "provider": _enum(PROVIDERS),
        "status": _enum(ScanStatus),
        "window_days": _int(1, MAX_WINDOW_DAYS),
        "since": _TIME,
        "requested_by": {"type": "string"},
        "error": {**_OPTIONAL_TEXT, "description": "why a failed scan stopped"},
        "created_at": _TIME,
        "started_at": _OPTIONAL_TIME,
        "heartbeat_at": _OPTIONAL_TIME,
        "finished_at": _OPTIONAL_TIME,
        "progress": _object(
            {
                "share": _SHARE,
                "records": {"type": "integer"},
                "pages": {"type": "integer"},
                "requests": {"type": "integer"},
                "seconds_left": {
                    "type": ["number", "null"],
                    "description": "estimated from the rate so far; null until there is one",
                },
                "streams": {
                    "type": "array",
                    "items": _object(
                        {
                            "name": {"type": "string"},
                            "done": {"type": "boolean"},
                            "share": _SHARE,
                            "records": {"type": "integer"},
                            "pages": {"type": "integer"},
                        },
                        ("name", "done", "share", "records", "pages"),
                    ),
                },
            },
            ("share", "records", "pages", "requests", "seconds_left", "streams"),
        ),
    },
    ("id", "provider", "status", "window_days", "since", "created_at", "progress"),
)

_STRIPE_CONNECTED = _object(
    {
        "provider": {"const": "stripe"},
        "key": {"type": "string", "description": "masked"},
        "livemode": {"type": "boolean"},
        "webhook_url": {"type": "string", "format": "uri", "description": "absolute"},
        "webhook_registered": {
            "type": "boolean",
            "description": "true when Caseward registered the endpoint at Stripe; false when "
            "the caller gave the signing secret of an endpoint registered by hand",
        },
    },
    ("provider", "key", "livemode", "webhook_url", "webhook_registered"),
)

_MERCHANT_CONNECTED = _object(
    {
        "provider": {"const": "merchant"},
        "endpoint_url": {
            "type": "string",
            "description": "the base the protocol's paths hang from",
        },
        "key": {"type": "string", "description": "the current signing secret, masked"},
        "livemode": {
            "type": "boolean",
            "description": "false for an http endpoint on this machine",
        },
        "signing_secret": {
            "type": ["string", "null"],
            "description": "whsec_...: only in the answer that made it, never again",
        },
        "previous_secret_until": {
            **_OPTIONAL_TIME,
            "description": "until when the previous secret signs beside the new one",
        },
    },
    ("provider", "endpoint_url", "key", "livemode", "signing_secret", "previous_secret_until"),
)

_PERMISSION_NAMES: JSONSchema = {
    "type": "array",
    "items": {"type": "string", "description": "as Stripe names it, e.g. rak_refund_write"},
}

_STRIPE_KEY_TESTED = _object(
    {
        "ok": {
            "type": "boolean",
            "description": "true when Stripe confirmed every permission Caseward needs",
        },
        "granted": _PERMISSION_NAMES,
        "missing": _PERMISSION_NAMES,
        "unknown": {
            **_PERMISSION_NAMES,
            "description": "Stripe did not answer for these (timeout, 5xx, 429); test again",
        },
        "message": {
            "type": "string",
            "description": "one sentence for the merchant: what to set in Stripe's dashboard",
        },
    },
    ("ok", "granted", "missing", "unknown", "message"),
)

# ---------------------------------------------------------------- parameters

_CASE_STATUS_FILTER = {
    "name": "status",
    "in": "query",
    "required": False,
    "schema": _enum(CaseStatus),
}
_ACTION_STATUS_FILTER = {
    "name": "status",
    "in": "query",
    "required": False,
    "description": "one or more statuses (repeat the parameter); all when absent",
    "style": "form",
    "explode": True,
    "schema": {"type": "array", "items": _enum(ActionStatus)},
}
_PAGE_LIMIT = {
    "name": "limit",
    "in": "query",
    "required": False,
    "schema": {"type": "integer", "minimum": 1, "maximum": PAGE_MAXIMUM, "default": PAGE_DEFAULT},
}

_AUDIT_EXPORT_FORMAT = {
    "name": "format",
    "in": "query",
    "required": False,
    "schema": {**_enum(("json", "csv")), "default": "json"},
}

# The history audit's findings, filtered as the admin's report page filters them.
_HISTORY_FINDINGS_PARAMETERS = [
    {
        "name": "format",
        "in": "query",
        "required": False,
        "schema": {**_enum(EXPORT_FORMATS), "default": "json"},
    },
    {"name": "rule", "in": "query", "required": False, "schema": _enum(Rule)},
    {"name": "provider", "in": "query", "required": False, "schema": _enum(PROVIDERS)},
    {
        "name": "week",
        "in": "query",
        "required": False,
        "description": "the Monday (UTC) the week starts on",
        "schema": {"type": "string", "format": "date"},
    },
    {
        "name": "customer",
        "in": "query",
        "required": False,
        "description": "the provider's customer id",
        "schema": {"type": "string", "maxLength": SHORT_TEXT},
    },
]
_HISTORY_FINDING = _object(
    {
        "provider": _enum(PROVIDERS),
        "rule": _enum(Rule),
        "reason": {"type": "string", "description": "in the reader's language"},
        "occurred_at": _TIME,
        "records": {"type": "array", "items": {"type": "string"}},
        "customer": _OPTIONAL_TEXT,
        "money_at_risk": _int(0, description="minor units"),
        # None only for a finding with nothing at risk in a scan where nothing names one.
        "currency": _nullable({"type": "string", "minLength": 3, "maxLength": 3}),
    },
    (
        "provider",
        "rule",
        "reason",
        "occurred_at",
        "records",
        "customer",
        "money_at_risk",
        "currency",
    ),
)


def _findings_export() -> dict[str, Any]:
    """The findings as JSON (money in minor units) or CSV (money as decimal strings)."""
    operation = _file_op(
        "The current history audit's findings as a file, JSON or CSV (every role)",
        ("text/csv",),
        _HISTORY_FINDINGS_PARAMETERS,
    )
    operation["responses"]["200"]["content"]["application/json"] = {
        "schema": _object({"findings": {"type": "array", "items": _HISTORY_FINDING}}, ("findings",))
    }
    return operation


_WRITE_ERRORS = (400, 401, 403, 404, 409)

# Every /api route has its path item here, one entry per path (the URL-map test holds
# the two together).
# Staff and their tokens (app/web/api/staff.py); owners manage staff.
# A user id is printable text: a control character in it is refused (400).
_PATH_PARAMETER_SCHEMAS: dict[str, JSONSchema] = {
    "user_id": {"type": "string", "minLength": 1, "maxLength": 255}
}
_LIMITS: JSONSchema = {"type": "object", "additionalProperties": _int(0)}
_MEMBER = _object(
    {
        "user_id": {"type": "string"},
        "email": _OPTIONAL_TEXT,
        "role": _enum(ROLES),
        "approval_limits": _LIMITS,
    },
    ("user_id", "role", "approval_limits"),
)
_TOKEN = _object(
    {
        "id": _UUID,
        "user_id": {"type": "string"},
        "prefix": {"type": "string"},
        "label": _OPTIONAL_TEXT,
        "created_by": {"type": "string"},
        "created_at": _TIME,
        "expires_at": _TIME,
        "last_used_at": _OPTIONAL_TIME,
        "revoked_at": _OPTIONAL_TIME,
        "revoked_by": _OPTIONAL_TEXT,
        "token": {"type": "string", "description": "Only in the answer that issues it."},
    },
    ("id", "user_id", "prefix", "created_at", "expires_at"),
)
_EXPORT = _object(
    {
        "id": {"type": "string"},
        "request": {"type": "string"},
        "customers": {"type": "integer"},
        "created_at": _TIME,
    },
    ("id", "request", "customers", "created_at"),
)
_STAFF_PATHS: dict[str, dict[str, Any]] = {
    "/api/agents": {
        "get": _op(
            "The shop's agent credentials, never their secrets (owners only)",
            _object({"agents": {"type": "array", "items": _AGENT}}, ("agents",)),
        ),
        "post": _op(
            "Issue an agent a credential for the MCP server; its secret is in the answer "
            "only (owners only)",
            _object({"agent": _AGENT, "secret": {"type": "string"}}, ("agent", "secret")),
            _object(
                {
                    "name": _text(SHORT_TEXT, min_length=1),
                    "allowed_kinds": {
                        "type": "array",
                        "minItems": 1,
                        "items": _enum(ActionKind),
                    },
                    "allowed_tools": {
                        "type": "array",
                        "minItems": 1,
                        "items": _enum(AgentTool),
                        "description": "the MCP tools the agent may call; left out, all",
                    },
                    "ceiling": _nullable(
                        {
                            "type": "object",
                            "additionalProperties": {
                                "type": "integer",
                                "minimum": 1,
                                "maximum": INT32_MAX,
                            },
                        }
                    ),
                },
                ("name", "allowed_kinds"),
                closed=True,
            ),
            status=201,
        ),
    },
    "/api/agents/{credential_id}": {
        "delete": _op(
            "Revoke an agent credential at once (owners only)",
            _object({"agent": _AGENT}, ("agent",)),
        )
    },
    "/api/staff": {
        "get": _op(
            "The shop's staff (owners only)",
            _object({"staff": {"type": "array", "items": _MEMBER}}, ("staff",)),
        ),
        "post": _op(
            "Add a staff member (owners only)",
            _MEMBER,
            _object(
                {
                    "user_id": {"type": "string", "minLength": 1, "maxLength": 255},
                    "role": _enum(ROLES),
                    "email": {"type": "string"},
                    "approval_limits": _LIMITS,
                },
                ("user_id", "role"),
            ),
            (400, 401, 403, 409),
            status=201,
        ),
    },
    "/api/staff/{user_id}": {
        "put": _op(
            "Change a member's role or approval limits (owners only)",
            _MEMBER,
            _object({"role": _enum(ROLES), "approval_limits": _LIMITS}),
            (400, 401, 403, 404, 409),
        ),
        "delete": _op(
            "Remove a member and revoke their tokens (owners only)",
            _object({"removed": {"type": "string"}, "tokens_revoked": {"type": "integer"}}),
            errors=(400, 401, 403, 404, 409),
        ),
    },
    "/api/tokens": {
        "get": _op(
            "Tokens: one's own, or the whole shop's for an owner (never the secret)",
            _object({"tokens": {"type": "array", "items": _TOKEN}}, ("tokens",)),
        ),
        "post": _op(
            "Issue a token, shown once: for oneself, or by an owner for a member",
            _TOKEN,
            _object(
                {
                    "user_id": {"type": "string"},
                    "label": {"type": "string"},
                    "expires_in_days": _int(1, MAX_LIFETIME.days),
                }
            ),
            status=201,
        ),
    },
    "/api/tokens/{token_id}": {
        "delete": _op("Revoke a token at once", _TOKEN, errors=(401, 403, 404)),
    },
}

PATHS: dict[str, dict[str, Any]] = {
    "/api/cases": {
        "get": _op(
            "Cases of the caller's shop, most recently updated first",
            _object(
                {"cases": {"type": "array", "items": _ref("CaseSummary")}},
                ("cases",),
            ),
            parameters=[_CASE_STATUS_FILTER],
        ),
        "post": _op(
            "Open a case",
            _ref("CaseSummary"),
            _object(
                {
                    "subject": _text(SHORT_TEXT, min_length=1),
                    "request_text": _text(LONG_TEXT),
                    "identity_level": _enum(IdentityLevel),
                    "customer_id": _nullable(_UUID),
                },
                ("subject",),
                closed=True,
            ),
            status=201,
        ),
    },
    "/api/cases/{case_id}": {"get": _op("The case file", _CASE_FILE)},
    "/api/cases/{case_id}/audit": {
        "get": _op(
            "The case's audit trail",
            _object({"events": {"type": "array", "items": _AUDIT_EVENT}}, ("events",)),
        )
    },
    "/api/cases/{case_id}/proposals": {
        "post": _op(
            "Propose an action; the verdict comes back",
            _PROPOSAL_RESULT,
            _ref("Draft"),
            status=201,
        ),
    },
    "/api/cases/{case_id}/replies": {
        "post": _op(
            "Reply to the customer (refused if it claims what the provider has not reported)",
            _object({"message": _MESSAGE}, ("message",)),
            _object(
                {"text": _text(MAX_MESSAGE, min_length=1)},
                ("text",),
                closed=True,
            ),
            status=201,
        ),
    },
    "/api/proposals/{proposal_id}": {
        "put": _op(
            "Edit a proposal (voids its approvals)",
            _PROPOSAL_RESULT,
            _ref("Draft"),
            _WRITE_ERRORS,
        ),
    },
    "/api/proposals/{proposal_id}/approve": {
        "post": _op(
            "Approve the exact digest reviewed",
            _PROPOSAL_RESULT,
            _object(
                {"digest": _text(DIGEST_LENGTH, min_length=1)},
                ("digest",),
                closed=True,
            ),
            _WRITE_ERRORS,
        ),
    },
    "/api/proposals/{proposal_id}/reject": {
        "post": _op(
            "Reject a proposal",
            _object({"proposal": _ref("Proposal")}, ("proposal",)),
            _object({"reason": _text(MAX_TEXT, min_length=1)}, ("reason",), closed=True),
            _WRITE_ERRORS,
        ),
    },
    "/api/actions": {
        "get": _op(
            "The shop's actions in the given statuses, newest first",
            _object({"actions": {"type": "array", "items": _ref("Action")}}, ("actions",)),
            errors=(400, 401),
            parameters=[_ACTION_STATUS_FILTER, _PAGE_LIMIT],
        )
    },
    "/api/actions/{action_id}": {"get": _op("An action with its attempts", _ref("Action"))},
    "/api/shop": {"get": _op("Shop settings and current policy", _SHOP)},
    "/api/shop/writes": {
        "put": _op(
            "Turn provider writes on or off (protection mode)",
            _object({"writes_enabled": {"type": "boolean"}}, ("writes_enabled",)),
            _object({"enabled": {"type": "boolean"}}, ("enabled",), closed=True),
        )
    },
    "/api/shop/kill-switch": {
        "put": _op(
            "Engage or release the kill switch",
            _object({"kill_switch": {"type": "boolean"}}, ("kill_switch",)),
            _object({"engaged": {"type": "boolean"}}, ("engaged",), closed=True),
        )
    },
    "/api/shop/brakes": {
        "get": _op(
            "The shop's brakes: ceilings, the breaker's rules, whether a brake holds and "
            "the actions it holds",
            _BRAKES,
        ),
        "put": _op(
            "Set the shop's ceilings per hour and per day and the breaker's rules (owners "
            "only); null or an empty object: none",
            _BRAKES,
            _BRAKE_SETTINGS,
        ),
    },
    "/api/shop/brakes/resume": {
        "post": _op(
            "Resume sending after a brake tripped (owners and approvers); the held actions "
            "are queued again, each checked and sent once",
            _object({**_BRAKES["properties"], "resumed": {"type": "array", "items": _UUID}}),
            _object({}, (), closed=True),
            (400, 401, 403, 409),
        )
    },
    "/api/shop/alerts": {
        "get": _op("Where the shop's alerts go besides its owners' email", _ALERTS),
        "put": _op(
            "Set the shop's Slack incoming webhook (owners only; null removes it, left out "
            "keeps it) and the kinds of alert posted there; a new address gets a new "
            "signing secret, in this answer only",
            _ALERTS,
            _object(
                {
                    "slack_webhook_url": _nullable(
                        _text(
                            MAX_WEBHOOK_URL,
                            min_length=1,
                            description="https://hooks.slack.com/services/...",
                        )
                    ),
                    "slack_kinds": {"type": "array", "items": _enum(AlertKind)},
                },
                (),
                closed=True,
            ),
        ),
    },
    "/api/shop/policy": {
        "put": _op(
            "Save a new policy version",
            _object({"policy": {"type": "object"}}, ("policy",)),
            _object({"rules": _ref("PolicyRules")}, ("rules",), closed=True),
        )
    },
    "/api/shop/policy/form": {
        "put": _op(
            "Save a new policy version from the settings page's form: amounts as written in "
            "one currency, windows in days, percents; a blank amount or window turns its "
            "rule off; each field that cannot be read is refused by its name",
            _object({"policy": {"type": "object"}}, ("policy",)),
            _POLICY_FORM,
        )
    },
    "/api/shop/policy/what-if": {
        "post": _op(
            "What a candidate policy would have done to the shop's last 90 days, beside the "
            "current one (owners only): every past action replayed through the same checks, "
            "counted as would block, would escalate, would approve by itself or unchanged, "
            "with the money of each; nothing is saved or changed. The candidate as the "
            "form sends it (the same fields, refused by name) or as rules",
            _WHAT_IF,
            {
                "oneOf": [
                    _object({"rules": _ref("PolicyRules")}, ("rules",), closed=True),
                    _POLICY_FORM,
                ]
            },
        )
    },
    "/api/shop/connections/gorgias": {
        "put": _op(
            "Connect the shop's Gorgias account (read once to test it); the integration "
            "secret is in the answer only when it was made now",
            _GORGIAS_CONNECTED,
            _object(
                {
                    "domain": _text(120, min_length=1, description="NAME or NAME.gorgias.com"),
                    "username": _text(320, min_length=1, description="the API user's email"),
                    "api_key": _text(255, min_length=1),
                },
                ("domain", "username", "api_key"),
                closed=True,
            ),
            (400, 401, 403, 502),
        )
    },
    "/api/shop/connections/gorgias/secret": {
        "post": _op(
            "Make a new integration secret; the old one stops working at once",
            _GORGIAS_CONNECTED,
            _object({}, (), closed=True),
            (400, 401, 403),
        )
    },
    "/api/shop/connections/gorgias/prepare-on-arrival": {
        "put": _op(
            "Draft each ticket's case into an internal note as the customer's message "
            "arrives (on), or only when an agent applies the prepare case macro (off)",
            _GORGIAS_CONNECTED,
            _object({"enabled": {"type": "boolean"}}, ("enabled",), closed=True),
            (400, 401, 403),
        )
    },
    "/api/shop/connections/stripe": {
        "put": _op(
            "Connect Stripe with a restricted key; registers the webhook endpoint at Stripe "
            "unless webhook_secret is given",
            _STRIPE_CONNECTED,
            _object(
                {
                    "api_key": _text(
                        MAX_KEY_LENGTH, min_length=1, description="rk_test_... or rk_live_..."
                    ),
                    "livemode": {"type": "boolean"},
                    "webhook_secret": _text(
                        MAX_KEY_LENGTH,
                        min_length=1,
                        description="whsec_... of an endpoint registered by hand",
                    ),
                },
                ("api_key", "livemode"),
                closed=True,
            ),
            (400, 401, 403, 404, 502),
        )
    },
    "/api/shop/history-audit": {
        "get": _op(
            "Each provider's newest scan of the read-only audit, with its progress",
            _object(
                {"scans": {"type": "array", "items": _HISTORY_SCAN}},
                ("scans",),
            ),
        ),
        "post": _op(
            "Scan a connected provider's past money actions again, read-only (owners only); "
            "a scan of it already under way is answered instead",
            _HISTORY_SCAN,
            _object(
                {
                    "provider": _enum(PROVIDERS),
                    "window_days": _int(
                        1, MAX_WINDOW_DAYS, f"days back from now; {DEFAULT_WINDOW_DAYS} if left out"
                    ),
                },
                ("provider",),
                closed=True,
            ),
            (400, 401, 403),
            status=202,
        ),
    },
    "/api/shop/history-audit/findings": {"get": _findings_export()},
    "/api/shop/connections/stripe/test": {
        "post": _op(
            "Ask Stripe which of the permissions Caseward needs a restricted key holds, "
            "changing nothing there; the key is not stored (owners only)",
            _STRIPE_KEY_TESTED,
            _object(
                {
                    "api_key": _text(
                        MAX_KEY_LENGTH, min_length=1, description="rk_test_... or rk_live_..."
                    ),
                    "livemode": {"type": "boolean"},
                },
                ("api_key", "livemode"),
                closed=True,
            ),
        )
    },
    "/api/shop/connections/merchant": {
        "put": _op(
            "Connect the shop's own endpoint as a provider (owners only); the signing "
            "secret is in the answer only when it was made now",
            _MERCHANT_CONNECTED,
            _object(
                {
                    "endpoint_url": _text(
                        MAX_URL_LENGTH,
                        min_length=1,
                        description="https://... (http only for localhost outside production)",
                    )
                },
                ("endpoint_url",),
                closed=True,
            ),
            (400, 401, 403),
        )
    },
    "/api/shop/connections/merchant/secret": {
        "post": _op(
            "Make a new signing secret (owners only); the previous one keeps signing beside "
            "it for grace_seconds (24 hours unless given; 0 stops it now)",
            _MERCHANT_CONNECTED,
            _object(
                {"grace_seconds": _int(0, MAX_GRACE_SECONDS)},
                (),
                closed=True,
            ),
            (400, 401, 403),
        )
    },
    **_STAFF_PATHS,
    "/api/audit/export": {
        "get": _file_op(
            "The shop's audit trail as a file (owners only): JSON Lines as flask "
            "audit-export writes them, ending in a signed checkpoint, or CSV",
            ("application/x-ndjson", "text/csv"),
            parameters=[_AUDIT_EXPORT_FORMAT],
        )
    },
    "/api/privacy/exports": {
        "get": _op(
            "Exports of customers' data made on their request (owners only)",
            _object({"exports": {"type": "array", "items": _EXPORT}}, ("exports",)),
        )
    },
    "/api/privacy/exports/{export_id}": {
        "get": _op(
            "One export with its content, to hand to the customer (owners only)",
            _object(
                {**_EXPORT["properties"], "content": {"type": "object"}},
                (*_EXPORT["required"], "content"),
            ),
        )
    },
}

OPENAPI: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "Caseward staff API", "version": "1"},
    "components": {
        "securitySchemes": {"staffToken": {"type": "http", "scheme": "bearer"}},
        "schemas": {
            "Error": _object(
                {
                    "error": _object(
                        {
                            "code": {"type": "string"},
                            "message": {"type": "string"},
                            "field": {"type": "string"},
                        },
                        ("code", "message"),
                    )
                },
                ("error",),
            ),
            "Money": _MONEY,
            "Draft": _DRAFT,
            "PolicyRules": _POLICY_RULES,
            "CaseSummary": _CASE_SUMMARY,
            "Proposal": _PROPOSAL,
            "Action": _ACTION,
        },
    },
    "paths": _with_path_parameters(PATHS),
}

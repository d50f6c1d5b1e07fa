"""The OpenAPI 3.1 description of the staff API, served at ``/api/openapi.json``."""

from __future__ import annotations

import re
from typing import Any


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _json(schema: dict[str, Any]) -> dict[str, Any]:
    return {"content": {"application/json": {"schema": schema}}}


def _op(
    summary: str,
    ok: dict[str, Any],
    body: dict[str, Any] | None = None,
    errors: tuple[int, ...] = (400, 401, 403, 404),
    status: int = 200,
) -> dict[str, Any]:
    operation: dict[str, Any] = {
        "summary": summary,
        "security": [{"staffToken": []}],
        "responses": {
            str(status): {"description": "Created" if status == 201 else "OK", **_json(ok)},
            **{
                str(code): {"description": _ERRORS[code], **_json(_ref("Error"))} for code in errors
            },
        },
    }
    if body is not None:
        operation["requestBody"] = {"required": True, **_json(body)}
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
                    "schema": {"type": "string", "format": "uuid"},
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
}

_MONEY = {
    "type": ["object", "null"],
    "properties": {
        "amount": {"type": "integer", "description": "minor units (4800 = $48.00)"},
        "currency": {"type": "string", "example": "usd"},
        "display": {"type": "string", "example": "$48.00"},
    },
}

_DRAFT = {
    "type": "object",
    "required": ["kind", "target"],
    "properties": {
        "kind": {
            "enum": [
                "refund",
                "customer_credit",
                "discount",
                "subscription_cancel",
                "subscription_change",
            ]
        },
        "target": {"type": "string", "description": "pi_/ch_ (refund), cus_, sub_"},
        "amount": {"type": "integer", "minimum": 1, "description": "minor units"},
        "currency": {"type": "string"},
        "line_items": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["line_id", "amount"],
                "properties": {"line_id": {"type": "string"}, "amount": {"type": "integer"}},
            },
        },
        "params": {"type": "object"},
        "reason": {"type": "string"},
        "customer_ref": {"type": "string"},
    },
}

_PROPOSAL_RESULT = {
    "type": "object",
    "properties": {
        "proposal": _ref("Proposal"),
        "action": {"oneOf": [_ref("Action"), {"type": "null"}]},
    },
}

OPENAPI: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "Caseward staff API", "version": "1"},
    "components": {
        "securitySchemes": {"staffToken": {"type": "http", "scheme": "bearer"}},
        "schemas": {
            "Error": {
                "type": "object",
                "required": ["error"],
                "properties": {
                    "error": {
                        "type": "object",
                        "required": ["code", "message"],
                        "properties": {
                            "code": {"type": "string"},
                            "message": {"type": "string"},
                            "field": {"type": "string"},
                        },
                    }
                },
            },
            "Money": _MONEY,
            "Draft": _DRAFT,
            "CaseSummary": {
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "subject": {"type": "string"},
                    "status": {
                        "enum": [
                            "open",
                            "awaiting_approval",
                            "executing",
                            "resolved",
                            "needs_attention",
                        ]
                    },
                    "owner": {"type": ["string", "null"]},
                    "identity_level": {"enum": ["none", "claim", "medium", "strong"]},
                },
            },
            "Proposal": {
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "revision": {"type": "integer"},
                    "status": {"enum": ["blocked", "awaiting_approval", "approved", "rejected"]},
                    "kind": {"type": "string"},
                    "target": {"type": "string"},
                    "amount": _MONEY,
                    "digest": {"type": "string"},
                    "approvals_required": {"type": "integer"},
                    "verdict": {"type": "object", "description": "every check, its result, facts"},
                },
            },
            "Action": {
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "status": {
                        "enum": [
                            "queued",
                            "submitting",
                            "unknown",
                            "halted",
                            "rejected",
                            "expired",
                            "needs_decision",
                            "pending",
                            "requires_action",
                            "succeeded",
                            "failed",
                            "canceled",
                        ]
                    },
                    "provider_ref": {"type": ["string", "null"]},
                    "idempotency_key": {"type": "string"},
                    "attempts": {"type": "array", "items": {"type": "object"}},
                },
            },
        },
    },
    "paths": _with_path_parameters(
        {
            "/api/cases": {
                "get": _op("Cases of the caller's shop", {"type": "object"}),
                "post": _op("Open a case", _ref("CaseSummary"), {"type": "object"}, status=201),
            },
            "/api/cases/{case_id}": {"get": _op("The case file", {"type": "object"})},
            "/api/cases/{case_id}/audit": {
                "get": _op("The case's audit trail", {"type": "object"})
            },
            "/api/cases/{case_id}/proposals": {
                "post": _op(
                    "Propose an action; the verdict comes back",
                    _PROPOSAL_RESULT,
                    _ref("Draft"),
                    status=201,
                ),
            },
            "/api/proposals/{proposal_id}": {
                "put": _op(
                    "Edit a proposal (voids its approvals)",
                    _PROPOSAL_RESULT,
                    _ref("Draft"),
                    (400, 401, 403, 404, 409),
                ),
            },
            "/api/proposals/{proposal_id}/approve": {
                "post": _op(
                    "Approve the exact digest reviewed",
                    _PROPOSAL_RESULT,
                    {
                        "type": "object",
                        "required": ["digest"],
                        "properties": {"digest": {"type": "string"}},
                    },
                    (400, 401, 403, 404, 409),
                ),
            },
            "/api/proposals/{proposal_id}/reject": {
                "post": _op(
                    "Reject a proposal",
                    {"type": "object"},
                    {
                        "type": "object",
                        "required": ["reason"],
                        "properties": {"reason": {"type": "string"}},
                    },
                    (400, 401, 403, 404, 409),
                ),
            },
            "/api/actions/{action_id}": {"get": _op("An action with its attempts", _ref("Action"))},
            "/api/shop": {"get": _op("Shop settings and current policy", {"type": "object"})},
            "/api/shop/writes": {
                "put": _op(
                    "Turn provider writes on or off (protection mode)",
                    {"type": "object"},
                    {"type": "object"},
                )
            },
            "/api/shop/kill-switch": {
                "put": _op(
                    "Engage or release the kill switch", {"type": "object"}, {"type": "object"}
                )
            },
            "/api/shop/policy": {
                "put": _op("Save a new policy version", {"type": "object"}, {"type": "object"})
            },
            "/api/shop/connections/stripe": {
                "put": _op(
                    "Connect Stripe with a restricted key", {"type": "object"}, {"type": "object"}
                )
            },
        }
    ),
}

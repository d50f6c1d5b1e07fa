"""``/_sandbox/...``: JSON control endpoints for a sandbox running as a separate process.

Each sandbox lists its routes (mirroring its methods) on a :class:`ControlRouter`. The
prefix cannot collide with a provider's API paths, and every call needs the control token
(``Authorization: Bearer <token>`` or ``X-Sandbox-Control-Token``), compared in constant
time, so a provider credential alone can never steer a sandbox.

The sequence of one control request: check the token; decode the JSON object body; find
the route; run its action; answer its result as JSON (``{"ok": true}`` for ``None``).
Bad input answers 400, an unknown thing 404, always as
``{"error": {"type": "sandbox_control_error", "message": ...}}``.
"""

from __future__ import annotations

import hmac
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import fields
from typing import Any

from .faults import Fault
from .server import Response

JSON = dict[str, Any]
Action = Callable[[JSON, dict[str, str]], Any]


class ControlError(Exception):
    """A control request that cannot be honoured (status + message)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class ControlRouter:
    """The control routes of one sandbox, behind its token."""

    def __init__(
        self,
        token: Callable[[], str],
        *,
        response_headers: Callable[[], dict[str, str]] = dict,
    ) -> None:
        self._token = token
        self._response_headers = response_headers
        self._routes: list[tuple[str, re.Pattern[str], Action]] = []

    def add(self, method: str, template: str, action: Action) -> None:
        """Route ``method template`` (``{name}`` segments become path arguments)."""
        pattern = re.compile("^" + re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", template) + "$")
        self._routes.append((method, pattern, action))

    def _json(self, status: int, body: Any) -> Response:
        headers = {"Content-Type": "application/json", **self._response_headers()}
        return Response(status, json.dumps(body, indent=2).encode("utf-8"), headers)

    def _error(self, status: int, message: str) -> Response:
        return self._json(status, {"error": {"type": "sandbox_control_error", "message": message}})

    def _authorized(self, headers: Mapping[str, str]) -> bool:
        token = headers.get("X-Sandbox-Control-Token") or ""
        scheme, _, credential = (headers.get("Authorization") or "").partition(" ")
        if not token and scheme.lower() == "bearer":
            token = credential.strip()
        return bool(token) and hmac.compare_digest(token, self._token())

    def handle(self, method: str, target: str, headers: Mapping[str, str], body: bytes) -> Response:
        """Serve one control request."""
        if not self._authorized(headers):
            return self._error(401, "control token required")
        path = target.partition("?")[0]
        try:
            payload = json.loads(body.decode("utf-8")) if body.strip() else {}
            if not isinstance(payload, dict):
                raise ControlError(400, "the body must be a JSON object")
            for route_method, pattern, action in self._routes:
                found = pattern.match(path)
                if found and route_method == method.upper():
                    result = action(payload, found.groupdict())
                    return self._json(200, {"ok": True} if result is None else result)
            raise ControlError(404, f"no control endpoint {method} {path}")
        except ControlError as exc:
            return self._error(exc.status, exc.message)
        except KeyError as exc:
            return self._error(404, str(exc))
        except (ValueError, TypeError) as exc:
            return self._error(400, str(exc))


def fault_from_json(body: JSON, *, allowed: frozenset[str] | None = None) -> Fault:
    """A :class:`Fault` from a control request body, refusing unknown fields (``allowed``
    narrows the fields a sandbox accepts)."""
    known = allowed if allowed is not None else frozenset(f.name for f in fields(Fault)) - {"id"}
    unknown = set(body) - known
    if unknown:
        raise ControlError(400, f"unknown fault fields: {sorted(unknown)}")
    if "kind" not in body:
        raise ControlError(400, "a fault needs a kind")
    return Fault(**body)

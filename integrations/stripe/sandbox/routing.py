"""The table of Stripe endpoints the sandbox serves.

Each resource module registers its handlers with :func:`route`, naming the permission
group a restricted key needs (reads for GET, writes otherwise) and the object type it
returns (so ``expand[]`` can be checked before anything runs).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Handler = Callable[..., dict[str, Any]]


@dataclass(frozen=True)
class Route:
    """One endpoint: method, path pattern, handler, permission group, result type."""

    method: str
    template: str
    pattern: re.Pattern[str]
    handler: Handler
    resource: str
    result: str

    @property
    def access(self) -> str:
        """``read`` for GET, ``write`` for everything that changes state."""
        return "read" if self.method == "GET" else "write"


ROUTES: list[Route] = []


def _compile(template: str) -> re.Pattern[str]:
    regex = re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", template)
    return re.compile(f"^{regex}$")


def route(method: str, template: str, resource: str, result: str) -> Callable[[Handler], Handler]:
    """Register ``handler`` for ``method template``."""

    def register(handler: Handler) -> Handler:
        ROUTES.append(Route(method, template, _compile(template), handler, resource, result))
        return handler

    return register


def resolve(method: str, path: str) -> tuple[Route, dict[str, str]] | None:
    """The route serving ``method path`` and its path parameters, if any."""
    for candidate in ROUTES:
        if candidate.method != method:
            continue
        found = candidate.pattern.match(path)
        if found:
            return candidate, found.groupdict()
    return None

"""Events (``GET /v1/events``) and webhook endpoints.

Every state change above is recorded as an event; endpoints subscribe to event types and
receive them signed with their ``whsec_`` secret, which Stripe shows only once, in the
create response.
"""

from __future__ import annotations

import fnmatch
from typing import Any

from .. import shapes
from ..context import LIST_PARAMS, UNDATED_LIST_PARAMS, Ctx, list_query, page, render
from ..errors import validation
from ..forms import Params, apply_metadata, new_metadata
from ..ids import random_base62
from ..routing import route

JSON = dict[str, Any]

# Stripe lists the events of the last 30 days only.
EVENT_RETENTION_SECONDS = 30 * 86400


@route("GET", "/v1/events/{id}", "events", "event")
def retrieve_event(ctx: Ctx, params: Params, id: str) -> JSON:
    """``GET /v1/events/{id}``."""
    params.allow(())
    return render(ctx, ctx.require("events", id, "event"))


@route("GET", "/v1/events", "events", "list:event")
def list_events(ctx: Ctx, params: Params) -> JSON:
    """``GET /v1/events`` (filters: ``type`` with ``*`` wildcards, ``types[]``), going
    back 30 days."""
    params.allow({*LIST_PARAMS, "type", "types"})
    query = list_query(params)
    single = params.string("type")
    many = [str(t) for t in params.array("types") or []]
    if single and many:
        raise validation(
            "You may only specify one of these parameters: type, types.", param="types"
        )
    if len(many) > 20:
        raise validation("You may pass at most 20 types.", param="types")
    patterns = many or ([single] if single else [])
    kept_since = ctx.now() - EVENT_RETENTION_SECONDS
    items = [
        e
        for e in ctx.space.newest_first("events")
        if e["created"] >= kept_since
        and (not patterns or any(fnmatch.fnmatchcase(e["type"], p) for p in patterns))
    ]
    return page(ctx, query, items, "/v1/events", collection="events", kind="event")


def _enabled_events(params: Params, *, required: bool) -> list[str] | None:
    values = params.array("enabled_events")
    if values is None:
        if required:
            raise validation(
                "Missing required param: enabled_events.",
                param="enabled_events",
                code="parameter_missing",
            )
        return None
    events = [str(v) for v in values]
    if not events:
        raise validation("You must provide at least one enabled event.", param="enabled_events")
    return events


def _url(params: Params, *, required: bool) -> str | None:
    url = params.string("url", required=required)
    if url is not None and not url.startswith(("http://", "https://")):
        raise validation(f"Invalid URL: {url}", param="url", code="url_invalid")
    return url


@route("POST", "/v1/webhook_endpoints", "webhook_endpoints", "webhook_endpoint")
def create_webhook_endpoint(ctx: Ctx, params: Params) -> JSON:
    """``POST /v1/webhook_endpoints``: the response carries the signing ``secret``."""
    params.allow({"url", "enabled_events", "description", "metadata", "api_version", "connect"})
    url = _url(params, required=True)
    events = _enabled_events(params, required=True)
    description = params.string("description") or None
    api_version = params.string("api_version") or None
    metadata = params.metadata()
    params.boolean("connect")
    assert url is not None and events is not None
    obj = shapes.webhook_endpoint(
        created=ctx.now(),
        livemode=ctx.livemode,
        url=url,
        enabled_events=events,
        description=description,
        api_version=api_version,
        metadata=new_metadata(metadata),
    )
    secret = f"whsec_{random_base62(32)}"
    ctx.space.put("webhook_endpoints", obj)
    ctx.space.priv(obj["id"])["secret"] = secret
    return {**render(ctx, obj), "secret": secret}


@route("GET", "/v1/webhook_endpoints/{id}", "webhook_endpoints", "webhook_endpoint")
def retrieve_webhook_endpoint(ctx: Ctx, params: Params, id: str) -> JSON:
    """``GET /v1/webhook_endpoints/{id}`` (no secret)."""
    params.allow(())
    return render(ctx, ctx.require("webhook_endpoints", id, "webhook endpoint"))


@route("POST", "/v1/webhook_endpoints/{id}", "webhook_endpoints", "webhook_endpoint")
def update_webhook_endpoint(ctx: Ctx, params: Params, id: str) -> JSON:
    """Change url, events, description, metadata, or disable the endpoint."""
    params.allow({"url", "enabled_events", "description", "metadata", "disabled"})
    url = _url(params, required=False)
    events = _enabled_events(params, required=False)
    disabled = params.boolean("disabled")
    metadata = params.metadata()
    obj = ctx.require("webhook_endpoints", id, "webhook endpoint")
    if url is not None:
        obj["url"] = url
    if events is not None:
        obj["enabled_events"] = events
    if params.has("description"):
        obj["description"] = params.string("description") or None
    if disabled is not None:
        obj["status"] = "disabled" if disabled else "enabled"
    obj["metadata"] = apply_metadata(obj["metadata"], metadata)
    return render(ctx, obj)


@route("DELETE", "/v1/webhook_endpoints/{id}", "webhook_endpoints", "webhook_endpoint")
def delete_webhook_endpoint(ctx: Ctx, params: Params, id: str) -> JSON:
    """Delete an endpoint: nothing more is delivered to it."""
    params.allow(())
    ctx.require("webhook_endpoints", id, "webhook endpoint")
    ctx.space.remove("webhook_endpoints", id)
    return shapes.deleted("webhook_endpoint", id)


@route("GET", "/v1/webhook_endpoints", "webhook_endpoints", "list:webhook_endpoint")
def list_webhook_endpoints(ctx: Ctx, params: Params) -> JSON:
    """``GET /v1/webhook_endpoints``."""
    params.allow(UNDATED_LIST_PARAMS)
    query = list_query(params)
    return page(
        ctx,
        query,
        ctx.space.newest_first("webhook_endpoints"),
        "/v1/webhook_endpoints",
        collection="webhook_endpoints",
        kind="webhook endpoint",
    )

"""Check Stripe-shaped JSON objects against Stripe's own published descriptions.

Used by tests of the Stripe sandbox (``integrations/stripe/sandbox/``) to make sure the
fake server speaks Stripe's wire format. Two public files from ``stripe/openapi`` are read
from the shared specs folder at test time (they are never copied into this repository):

* ``stripe-fixtures3-2026-07-29.dahlia.json``: current example objects. They decide
  which top-level **field names** exist (fixture fields must be present; nothing else may
  appear unless the 2023 schema has it).
* ``stripe-schemas-selected-2023-08-16.json``: OpenAPI 3.0 schemas. They decide
  **types, nullability and enums**, recursively.

See ``../shared/specs/README.md`` (beside the checkout) for provenance and the known
2023 -> 2026 differences.

Usage in a test::

    from stripe_spec import assert_stripe_object, require_specs

    def test_refund_shape(client):
        require_specs()
        assert_stripe_object(client.post("/v1/refunds", ...).json())

Without the files the checks are off, and say so: tests that need them skip naming the
folder, every sandbox answer goes unchecked, and the run's summary reads "Stripe spec
conformance: OFF". With ``CASEWARD_STRICT_TESTS=1`` (CI) a missing file fails instead.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest

__all__ = [
    "FIXTURES_FILE",
    "KNOWN_REMOVED_FIELDS",
    "MOVED_FIELDS",
    "README_RESOURCES",
    "REPLACED_FIELDS",
    "SCHEMAS_FILE",
    "SPECS_DIR",
    "STRICT_ENV_VAR",
    "assert_sandbox_answers",
    "assert_stripe_object",
    "check_stripe_object",
    "conformance_summary",
    "load_fixtures",
    "load_schemas",
    "missing_specs_reason",
    "require_specs",
    "specs_available",
    "specs_dir",
    "strict_tests",
]

FIXTURES_FILE = "stripe-fixtures3-2026-07-29.dahlia.json"
SCHEMAS_FILE = "stripe-schemas-selected-2023-08-16.json"
ENV_VAR = "CASEWARD_SPECS_DIR"
#: Set to ``1`` (CI does) to make every skip a failure, this module's included.
STRICT_ENV_VAR = "CASEWARD_STRICT_TESTS"

_REPO_ROOT = Path(__file__).resolve().parent.parent
_DEFAULT_SPECS_DIR = (_REPO_ROOT.parent / "shared" / "specs").resolve()

#: Specs folder as seen at import time. Use :func:`specs_dir` to honour later changes of
#: ``CASEWARD_SPECS_DIR`` (e.g. ``monkeypatch.setenv``); every function here does.
SPECS_DIR: Path = Path(os.environ[ENV_VAR]) if os.environ.get(ENV_VAR) else _DEFAULT_SPECS_DIR

#: The nine resources the 2023 schema selection was made for; the README lists their
#: 2023 -> 2026 differences, so for these the 2023 ``required`` list is enforced too
#: (minus :data:`KNOWN_REMOVED_FIELDS`). Other resources rely on the 2026 fixture alone.
README_RESOURCES = frozenset(
    {
        "refund",
        "charge",
        "payment_intent",
        "customer_balance_transaction",
        "coupon",
        "promotion_code",
        "subscription",
        "dispute",
        "event",
    }
)

#: README "Fields in the 2023 schemas that are not in the 2026 fixtures". They are allowed
#: to be absent even where the 2023 schema marks them required, and allowed to be present
#: (the 2023 schema still describes them, so they are type-checked when present).
KNOWN_REMOVED_FIELDS: Mapping[str, Mapping[str, str]] = {
    "promotion_code": {"coupon": "replaced by `promotion` (promotion.coupon) in the 2026 API"},
    "subscription": {
        "current_period_start": "moved to the subscription items in the 2026 API",
        "current_period_end": "moved to the subscription items in the 2026 API",
        "discount": "superseded by `discounts` in the 2026 API",
    },
    "payment_intent": {"invoice": "absent from the 2026 fixture"},
    "charge": {"invoice": "absent from the 2026 fixture"},
}

#: 2026 replacements of removed 2023 fields, for clearer messages: {resource: {new: old}}.
REPLACED_FIELDS: Mapping[str, Mapping[str, str]] = {
    "promotion_code": {"promotion": "coupon"},
    "subscription": {"discounts": "discount"},
}

#: Fields that moved in 2026 are type-checked at their new place with the 2023 schema of
#: their old place: {new resource: {field: (old schema, old field)}}.
MOVED_FIELDS: Mapping[str, Mapping[str, tuple[str, str]]] = {
    "subscription_item": {
        "current_period_start": ("subscription", "current_period_start"),
        "current_period_end": ("subscription", "current_period_end"),
    },
}

#: Fields Stripe documents that neither file carries (the 2026 fixtures leave optional
#: fields out; the 2023 selection predates later additions), with the schema each is
#: checked against: {resource: {field: (source, OpenAPI 3.0 schema)}}.
DOCUMENTED_EXTRA_FIELDS: Mapping[str, Mapping[str, tuple[str, dict[str, Any]]]] = {
    "refund": {
        "pending_reason": (
            "Stripe API reference, Refund object (added 2024); values as in the brief",
            {
                "type": "string",
                "nullable": True,
                "enum": ["charge_pending", "insufficient_funds", "processing"],
            },
        ),
    },
    "webhook_endpoint": {
        "secret": (
            "the full 2023 spec's webhook_endpoint schema; only returned at creation",
            {"type": "string", "maxLength": 5000},
        ),
    },
}

_LIST_FIELDS = ("object", "data", "has_more", "url")
_REF_PREFIX = "#/components/schemas/"
_PY_TYPE_NAMES = {
    type(None): "null",
    bool: "boolean",
    int: "integer",
    float: "number",
    str: "string",
    list: "array",
    dict: "object",
}


# --------------------------------------------------------------------------- loading


def specs_dir() -> Path:
    """The specs folder: ``$CASEWARD_SPECS_DIR`` if set, else ``<repo>/../shared/specs``."""
    env = os.environ.get(ENV_VAR)
    return Path(env) if env else _DEFAULT_SPECS_DIR


def specs_available() -> bool:
    """True when both Stripe spec files are present in :func:`specs_dir`."""
    folder = specs_dir()
    return (folder / FIXTURES_FILE).is_file() and (folder / SCHEMAS_FILE).is_file()


def missing_specs_reason() -> str | None:
    """Why the spec checks cannot run (naming the folder), or None when they can."""
    if specs_available():
        return None
    return (
        f"Stripe spec files {FIXTURES_FILE} and {SCHEMAS_FILE} not found in {specs_dir()} "
        f"(set {ENV_VAR} to the folder holding them)"
    )


def strict_tests() -> bool:
    """True when the run may skip nothing (``CASEWARD_STRICT_TESTS=1``)."""
    return os.environ.get(STRICT_ENV_VAR, "") == "1"


def require_specs() -> None:
    """Skip the calling test (``pytest.skip``) when the Stripe spec files are absent
    (strict mode turns that skip into a failure with the same reason)."""
    reason = missing_specs_reason()
    if reason is not None:
        pytest.skip(reason)


class _Conformance:
    """What the check of sandbox answers did during this run, for the summary line."""

    answers_checked = 0
    unchecked_because: str | None = None


def assert_sandbox_answers(answers: Iterable[Any]) -> None:
    """Check every answer the sandbox gave against Stripe's descriptions.

    Without the spec files nothing is checked and the run's summary says so; under
    strict mode the calling test fails instead, naming the folder."""
    reason = missing_specs_reason()
    if reason is not None:
        _Conformance.unchecked_because = reason
        if strict_tests():
            pytest.fail(f"{STRICT_ENV_VAR}=1: sandbox answers left unchecked: {reason}")
        return
    for answer in answers:
        assert_stripe_object(answer)
        _Conformance.answers_checked += 1


def conformance_counts() -> dict[str, Any]:
    """This process's share of the run, for the process that writes the summary (test
    runs spread over several processes add each one's count to the first's)."""
    return {
        "answers_checked": _Conformance.answers_checked,
        "unchecked_because": _Conformance.unchecked_because,
    }


def add_conformance_counts(counts: dict[str, Any]) -> None:
    _Conformance.answers_checked += int(counts.get("answers_checked", 0))
    _Conformance.unchecked_because = (
        _Conformance.unchecked_because or counts.get("unchecked_because") or None
    )


def conformance_summary() -> str:
    """One line for the end of the run: is the spec check of sandbox answers on?"""
    reason = _Conformance.unchecked_because or missing_specs_reason()
    if reason is not None:
        return f"Stripe spec conformance: OFF ({reason})"
    return (
        f"Stripe spec conformance: ON: {_Conformance.answers_checked} sandbox answers "
        f"checked against {specs_dir()}"
    )


@lru_cache(maxsize=4)
def _load_json(path: str) -> Any:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def load_fixtures() -> dict[str, Any]:
    """The 2026 fixtures: ``{resource name: example object}`` (cached)."""
    return _load_json(str(specs_dir() / FIXTURES_FILE))["resources"]


def load_schemas() -> dict[str, Any]:
    """The 2023 ``components.schemas`` mapping (cached)."""
    return _load_json(str(specs_dir() / SCHEMAS_FILE))["components"]["schemas"]


# --------------------------------------------------------------------------- public API


def check_stripe_object(obj: Any, resource: str | None = None) -> list[str]:
    """Return every problem found in ``obj`` (empty list when it matches Stripe).

    ``resource`` defaults to ``obj["object"]`` (``deleted_<object>`` when
    ``obj["deleted"]`` is true). For a list envelope (``"object": "list"``) every item is
    checked as its own resource; passing ``resource`` then names the expected item type.
    """
    if not isinstance(obj, dict):
        return [f"{resource or 'object'}: expected a JSON object, got {_type_name(obj)}"]
    if obj.get("object") == "list" or resource == "list":
        item_resource = None if resource in (None, "list") else resource
        return _check_list(obj, "list", item_resource)
    return _check_resource(obj, resource, None)


def assert_stripe_object(obj: Any, resource: str | None = None) -> None:
    """Raise ``AssertionError`` listing every problem :func:`check_stripe_object` finds."""
    problems = check_stripe_object(obj, resource)
    if problems:
        label = resource or (obj.get("object") if isinstance(obj, dict) else None) or "object"
        lines = "\n".join(f"  - {p}" for p in problems)
        raise AssertionError(
            f"{len(problems)} problem(s) with Stripe {label} object:\n{lines}\n"
            f"object: {json.dumps(obj, sort_keys=True, default=str)[:2000]}"
        )


# --------------------------------------------------------------------------- top level


def _resource_name(obj: Mapping[str, Any]) -> str | None:
    name = obj.get("object")
    if not isinstance(name, str):
        return None
    if "deleted" in obj and f"deleted_{name}" in load_fixtures():
        return f"deleted_{name}"
    return name


def _extra_props(resource: str | None) -> Mapping[str, Any]:
    """Schemas for fields the 2023 selection lacks: those that moved in 2026 (see
    :data:`MOVED_FIELDS`) and those Stripe documents elsewhere (see
    :data:`DOCUMENTED_EXTRA_FIELDS`)."""
    moved = MOVED_FIELDS.get(resource or "", {})
    schemas = load_schemas()
    extra = {
        key: schemas[old]["properties"][old_key]
        for key, (old, old_key) in moved.items()
        if old_key in schemas.get(old, {}).get("properties", {})
    }
    for key, (_source, schema) in DOCUMENTED_EXTRA_FIELDS.get(resource or "", {}).items():
        extra[key] = schema
    return extra


def _check_resource(obj: dict[str, Any], resource: str | None, path: str | None) -> list[str]:
    """Rules 1 and 2 for a whole API resource (top level, list item, event payload)."""
    actual = _resource_name(obj)
    if resource is not None and actual == f"deleted_{resource}":
        resource = actual  # asked for "customer", got a deleted customer: check that
    resource = resource or actual
    path = path or resource or "object"
    if resource is None:
        return [f"{path}: no 'object' field and no resource given, cannot check"]
    if actual is not None and actual != resource:
        return [f"{path}.object: expected a {resource!r} object, got {actual!r}"]

    fixture = load_fixtures().get(resource)
    schema = load_schemas().get(resource)
    if fixture is None and schema is None:
        return [f"{path}: unknown Stripe resource {resource!r} (no 2026 fixture, no 2023 schema)"]

    problems: list[str] = []
    props: dict[str, Any] = dict((schema or {}).get("properties", {}))
    props.update(_extra_props(resource))
    fixture_keys = set(fixture or ())

    # Rule 1a: every field of the 2026 fixture must be present. Where the README lists the
    # differences (or there is no fixture), the 2023 `required` fields must be present too,
    # except those the README documents as removed since 2023.
    must_have = set(fixture_keys)
    if schema is not None and (fixture is None or resource in README_RESOURCES):
        must_have |= set(schema.get("required", ())) - set(KNOWN_REMOVED_FIELDS.get(resource, {}))
    for key in sorted(must_have - set(obj)):
        where = "2026 fixture" if key in fixture_keys else "2023 schema's required list"
        old = REPLACED_FIELDS.get(resource, {}).get(key)
        note = f"; it replaced the 2023 field {old!r}" if old and old in obj else ""
        problems.append(f"{path}.{key}: missing (present in the {where}{note})")

    # Rule 1b: nothing invented.
    for key in obj:
        if key not in props and key not in fixture_keys:
            problems.append(
                f"{path}.{key}: unexpected field (not in the 2026 fixture of {resource!r} "
                f"nor in the 2023 schema)"
            )

    # Rule 2: types, recursively, for fields the 2023 schema describes.
    for key, value in obj.items():
        if key in props:
            hint = fixture.get(key) if fixture else None
            problems.extend(_check_value(value, props[key], f"{path}.{key}", hint))

    # Event payloads are whole resources: check them as such when we know the resource.
    if resource == "event":
        problems.extend(_check_event_payload(obj, path))
    return problems


def _check_event_payload(event: Mapping[str, Any], path: str) -> list[str]:
    data = event.get("data")
    if not isinstance(data, dict):
        return []
    payload = data.get("object")
    if not isinstance(payload, dict):
        return []
    name = _resource_name(payload)
    if name is None:
        return [f"{path}.data.object.object: missing (event payloads are API resources)"]
    if name not in load_schemas():
        return []  # e.g. `plan`: no 2023 schema in the selection, nothing reliable to check
    return _check_resource(payload, name, f"{path}.data.object")


def _check_list(obj: dict[str, Any], path: str, item_resource: str | None) -> list[str]:
    problems: list[str] = []
    if "object" in obj and obj["object"] != "list":
        problems.append(f"{path}.object: expected 'list', got {_got(obj['object'])}")
    for key in _LIST_FIELDS:
        if key not in obj:
            problems.append(
                f"{path}.{key}: missing (list envelopes have {', '.join(_LIST_FIELDS)})"
            )
    for key in obj:
        if key not in _LIST_FIELDS:
            problems.append(f"{path}.{key}: unexpected field in a list envelope")
    if "has_more" in obj and not isinstance(obj["has_more"], bool):
        problems.append(f"{path}.has_more: expected boolean, got {_got(obj['has_more'])}")
    if "url" in obj and not isinstance(obj["url"], str):
        problems.append(f"{path}.url: expected string, got {_got(obj['url'])}")
    data = obj.get("data")
    if "data" in obj and not isinstance(data, list):
        problems.append(f"{path}.data: expected array, got {_type_name(data)}")
    elif isinstance(data, list):
        for i, item in enumerate(data):
            item_path = f"{path}.data[{i}]"
            if not isinstance(item, dict):
                problems.append(f"{item_path}: expected object, got {_type_name(item)}")
                continue
            problems.extend(_check_resource(item, item_resource, item_path))
    return problems


# --------------------------------------------------------------------------- values


def _type_name(value: Any) -> str:
    return _PY_TYPE_NAMES.get(type(value), type(value).__name__)


def _got(value: Any) -> str:
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{_type_name(value)} ({text})"


def _ref_name(ref: str) -> str:
    if not ref.startswith(_REF_PREFIX):
        raise ValueError(f"unsupported $ref {ref!r}")
    return ref[len(_REF_PREFIX) :]


def _resolve(schema: Mapping[str, Any]) -> tuple[Mapping[str, Any], str | None]:
    """Follow ``$ref`` chains; return the schema and the last referenced name."""
    name = None
    while "$ref" in schema:
        name = _ref_name(schema["$ref"])
        schema = load_schemas()[name]
    return schema, name


def _describe(schema: Mapping[str, Any]) -> str:
    schema, name = _resolve(schema)
    if "anyOf" in schema or "oneOf" in schema:
        return " or ".join(_describe(s) for s in schema.get("anyOf") or schema["oneOf"])
    kind = schema.get("type", "any")
    return f"object ({name})" if name and kind == "object" else kind


def _matches_type(value: Any, kind: str) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "object":
        return isinstance(value, dict)
    if kind == "array":
        return isinstance(value, list)
    return True


def _nullable(schema: Mapping[str, Any]) -> bool:
    if schema.get("nullable"):
        return True
    resolved, _ = _resolve(schema)
    return bool(resolved.get("nullable"))


def _check_value(value: Any, schema: Mapping[str, Any], path: str, hint: Any) -> list[str]:
    """Check ``value`` against an OpenAPI 3.0 schema. ``hint`` is the matching part of the
    2026 fixture (if any): its keys are accepted as known-new nested fields."""
    if value is None:
        if _nullable(schema):
            return []
        return [f"{path}: null but the field is not nullable (expected {_describe(schema)})"]

    declared = schema
    schema, ref_name = _resolve(schema)
    branches = schema.get("anyOf") or schema.get("oneOf")
    if branches:
        return _check_any_of(value, branches, path, hint)

    kind = schema.get("type")
    if kind and not _matches_type(value, kind):
        return [f"{path}: expected {_describe(declared)}, got {_got(value)}"]

    enum = schema.get("enum")
    if enum is not None and value not in enum:
        return [f"{path}: {value!r} not in enum {enum}"]

    if isinstance(value, list):
        item_schema = schema.get("items")
        if not item_schema:
            return []
        item_hint = _merge_hints(hint if isinstance(hint, list) else [])
        problems: list[str] = []
        for i, item in enumerate(value):
            problems.extend(_check_value(item, item_schema, f"{path}[{i}]", item_hint))
        return problems

    if isinstance(value, dict):
        return _check_object(value, schema, path, hint, ref_name)
    return []


def _check_any_of(
    value: Any, branches: Iterable[Mapping[str, Any]], path: str, hint: Any
) -> list[str]:
    branches = list(branches)
    candidates: list[tuple[Mapping[str, Any], list[str]]] = []
    for branch in branches:
        resolved, _ = _resolve(branch)
        kind = resolved.get("type")
        if kind and not _matches_type(value, kind):
            continue
        problems = _check_value(value, branch, path, hint)
        if not problems:
            return []
        candidates.append((resolved, problems))
    if not candidates:
        alternatives = " or ".join(_describe(b) for b in branches)
        return [f"{path}: expected {alternatives}, got {_got(value)}"]
    if isinstance(value, dict) and len(candidates) > 1:
        # Expanded object: prefer the branch whose `object` enum names this object.
        tagged = [
            c
            for c in candidates
            if value.get("object") in c[0].get("properties", {}).get("object", {}).get("enum", ())
        ]
        candidates = tagged or candidates
    return min(candidates, key=lambda c: len(c[1]))[1]


def _check_object(
    value: dict[str, Any],
    schema: Mapping[str, Any],
    path: str,
    hint: Any,
    ref_name: str | None,
) -> list[str]:
    props: Mapping[str, Any] = schema.get("properties", {})
    extra = _extra_props(ref_name)
    if extra:
        props = {**props, **extra}
    additional = schema.get("additionalProperties")
    known_new = set(hint) if isinstance(hint, dict) else set()
    resource_fixture = load_fixtures().get(ref_name or "") if ref_name else None
    if isinstance(resource_fixture, dict):
        known_new |= set(resource_fixture)
        if not isinstance(hint, dict):
            hint = resource_fixture

    problems: list[str] = []
    is_list = props.get("object", {}).get("enum") == ["list"]
    if is_list:
        for key in _LIST_FIELDS:
            if key not in value:
                problems.append(f"{path}.{key}: missing (list envelope)")

    for key, sub in value.items():
        sub_path = f"{path}.{key}"
        sub_hint = hint.get(key) if isinstance(hint, dict) else None
        if key in props:
            problems.extend(_check_value(sub, props[key], sub_path, sub_hint))
        elif isinstance(additional, dict):
            problems.extend(_check_value(sub, additional, sub_path, None))
        elif additional is True or not props:
            continue  # free-form object (e.g. event.data.object)
        elif key not in known_new:
            where = f" {ref_name!r}" if ref_name else ""
            problems.append(
                f"{sub_path}: unexpected field (not in the 2023{where} schema nor in the "
                f"2026 fixture)"
            )
    return problems


def _merge_hints(values: list[Any]) -> Any:
    """Merge the fixture's array items into one hint (union of keys, recursively)."""
    dicts = [v for v in values if isinstance(v, dict)]
    if not dicts:
        return next((v for v in values if v is not None), None)
    merged: dict[str, Any] = {}
    for d in dicts:
        for key, val in d.items():
            if key in merged and isinstance(merged[key], dict) and isinstance(val, dict):
                merged[key] = _merge_hints([merged[key], val])
            elif merged.get(key) is None:
                merged[key] = val
    return merged

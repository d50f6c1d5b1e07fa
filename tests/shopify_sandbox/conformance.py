"""Check Admin GraphQL documents and answers against Shopify's published 2026-04 schema.

Shopify's schema (``shopify-admin-graphql-2026-04.graphql``, 3.4 MB of SDL) is read from
the shared specs folder beside the checkout (``$CASEWARD_SPECS_DIR`` overrides it) and
never copied into this repository; it is parsed once per test session.

* :func:`document_problems`: a document must validate against the published schema.
* :func:`answer_problems`: an answer's ``data`` must be what Shopify could send for the
  document. The document is executed against the published schema with ``data`` as the
  root value and resolvers that only read it back, so graphql-core itself rejects a
  missing or misnamed field, a null in a non-null field, a wrong list, an unknown enum
  value, or a scalar in the wrong format (``DateTime`` ISO 8601, ``Decimal``/``Money``
  decimal strings, ``UnsignedInt64`` strings of digits, ``Int`` integers).
  Union and interface values need ``__typename`` in the answer (or exactly one inline
  fragment naming a possible type).
* :func:`assert_conforms` does both; :func:`require_published_schema` skips the calling
  test when the file is missing (a failure under ``CASEWARD_STRICT_TESTS=1``).

Usage::

    from conformance import assert_conforms

    answer = graphql(client, shop, token, ORDER, {"id": order_id}).json()
    assert_conforms(ORDER, answer, variables={"id": order_id})
"""

from __future__ import annotations

import functools
import gc
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from graphql import (
    ExecutionResult,
    GraphQLAbstractType,
    GraphQLError,
    GraphQLResolveInfo,
    GraphQLScalarType,
    GraphQLSchema,
    InlineFragmentNode,
    build_schema,
    execute,
    parse,
    validate,
)

SCHEMA_FILE = "shopify-admin-graphql-2026-04.graphql"
SPECS_ENV_VAR = "CASEWARD_SPECS_DIR"
STRICT_ENV_VAR = "CASEWARD_STRICT_TESTS"

_DEFAULT_SPECS_DIR = Path(__file__).resolve().parents[2] / ".." / "shared" / "specs"

_DECIMAL = re.compile(r"^-?\d+(\.\d+)?$")
_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")
_DIGITS = re.compile(r"^\d+$")


def schema_path() -> Path:
    """Where the published schema is read from."""
    folder = os.environ.get(SPECS_ENV_VAR)
    return (Path(folder) if folder else _DEFAULT_SPECS_DIR).resolve() / SCHEMA_FILE


def missing_schema_reason() -> str | None:
    """Why the published schema cannot be used (naming the path), or None."""
    path = schema_path()
    if path.is_file():
        return None
    return f"Shopify's published schema {SCHEMA_FILE} not found at {path} (set {SPECS_ENV_VAR})"


def require_published_schema() -> GraphQLSchema:
    """The published schema; skips the calling test without it (strict mode: fails)."""
    reason = missing_schema_reason()
    if reason is not None:
        if os.environ.get(STRICT_ENV_VAR, "") == "1":
            pytest.fail(f"{STRICT_ENV_VAR}=1: {reason}")
        pytest.skip(reason)
    return published_schema()


def _strict_scalar(name: str, check: Callable[[Any], bool]) -> Callable[[Any], Any]:
    def serialize(value: Any) -> Any:
        if not check(value):
            raise GraphQLError(f"{name} cannot represent {value!r}")
        return value

    return serialize


@functools.cache
def published_schema() -> GraphQLSchema:
    """Shopify's published schema, parsed once, with its scalars' formats enforced."""
    schema = build_schema(schema_path().read_text(encoding="utf-8"))
    formats: dict[str, Callable[[Any], bool]] = {
        "DateTime": lambda v: isinstance(v, str) and bool(_DATETIME.match(v)),
        "Decimal": lambda v: isinstance(v, str) and bool(_DECIMAL.match(v)),
        "Money": lambda v: isinstance(v, str) and bool(_DECIMAL.match(v)),
        "UnsignedInt64": lambda v: isinstance(v, str) and bool(_DIGITS.match(v)),
        "URL": lambda v: isinstance(v, str),
    }
    for name, check in formats.items():
        scalar = schema.type_map[name]
        assert isinstance(scalar, GraphQLScalarType)
        scalar.serialize = _strict_scalar(name, check)  # type: ignore[method-assign]
    # Kept for the whole run: out of the garbage collector's sight from here on, with
    # everything else made so far. Its 400,000 objects made every full collection take
    # seconds on a slow machine, the five pytest runs as a run ends among them, and a
    # worker still collecting 5 s after the run was over was sent a SIGINT by execnet.
    gc.freeze()
    return schema


def document_problems(document: str) -> list[str]:
    """Why ``document`` is not valid against the published schema (empty when it is)."""
    schema = require_published_schema()
    return [error.message for error in validate(schema, parse(document))]


def _read_back(source: Any, info: GraphQLResolveInfo, **_args: Any) -> Any:
    """Resolve a field from the answer, by its response key (alias or name)."""
    if isinstance(source, Mapping):
        return source.get(str(info.path.key))
    return None


def _answered_type(
    value: Any, info: GraphQLResolveInfo, abstract: GraphQLAbstractType
) -> str | None:
    """The concrete type of an abstract value: its ``__typename``, else the one possible
    type the selection names in an inline fragment."""
    if isinstance(value, Mapping) and isinstance(value.get("__typename"), str):
        return str(value["__typename"])
    possible = {t.name for t in info.schema.get_possible_types(abstract)}
    named = {
        selection.type_condition.name.value
        for node in info.field_nodes
        for selection in (node.selection_set.selections if node.selection_set else ())
        if isinstance(selection, InlineFragmentNode)
        and selection.type_condition is not None
        and selection.type_condition.name.value in possible
    }
    return named.pop() if len(named) == 1 else None


def answer_problems(
    document: str,
    data: Mapping[str, Any],
    *,
    variables: Mapping[str, Any] | None = None,
    operation_name: str | None = None,
) -> list[str]:
    """Why ``data`` (an answer's ``data``) is not what the published schema allows."""
    schema = require_published_schema()
    result = execute(
        schema,
        parse(document),
        root_value=data,
        variable_values=dict(variables or {}),
        operation_name=operation_name,
        field_resolver=_read_back,
        type_resolver=_answered_type,
    )
    assert isinstance(result, ExecutionResult)
    problems = [f"{'.'.join(map(str, e.path or []))}: {e.message}" for e in result.errors or []]
    # Well-typed values come back unchanged; a coerced one (an Int sent as "2", an
    # amount sent as a number) comes back different.
    if not problems and result.data != data:
        problems.append(f"values the schema would write differently: {result.data} != {data}")
    return problems


def assert_conforms(
    document: str,
    answer: Mapping[str, Any],
    *,
    variables: Mapping[str, Any] | None = None,
    operation_name: str | None = None,
) -> None:
    """``document`` is valid against the published schema and ``answer['data']`` (when
    present) is an answer Shopify could give to it."""
    problems = document_problems(document)
    assert not problems, f"document invalid against Shopify's schema: {problems}"
    data = answer.get("data")
    if data is not None:
        problems = answer_problems(
            document, data, variables=variables, operation_name=operation_name
        )
        assert not problems, f"answer does not fit Shopify's schema: {problems}"

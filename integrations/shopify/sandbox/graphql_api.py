"""``POST /admin/api/2026-04/graphql.json``: one Admin GraphQL request, from bytes to bytes.

Kept apart from the HTTP plumbing so the order of Shopify's checks reads in one place:

1. the access token (``X-Shopify-Access-Token``): unknown, expired, revoked or of
   another shop -> 401, as Shopify answers;
2. the API version (only 2026-04 is served; anything else -> 404);
3. the body (``{"query", "variables", "operationName"}``; unreadable -> 400);
4. parse and validate against the sandbox schema -> ``errors`` with ``locations`` and
   ``extensions.code``, HTTP 200, nothing run;
5. ``@idempotent`` required on ``refundCreate`` (``BAD_REQUEST`` when missing);
6. cost: above the single-query maximum -> ``MAX_COST_EXCEEDED``; bucket short ->
   ``THROTTLED``; both HTTP 200 with nothing run;
7. the fault plan (drop or 500 before anything runs);
8. claim the idempotency keys; a replay or a conflict is decided here;
9. holds, delays, due work, then execution under the store lock;
10. save the claims' outcomes, deliver the webhooks the mutations raised, give back
    unused cost, and let the plan drop or spoil the committed answer.
"""

from __future__ import annotations

import functools
import json
import re
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from graphql import (
    DocumentNode,
    ExecutionResult,
    FieldNode,
    FragmentDefinitionNode,
    GraphQLError,
    GraphQLSchema,
    GraphQLSyntaxError,
    OperationDefinitionNode,
    OperationType,
    StringValueNode,
    VariableNode,
    execute,
    get_operation_ast,
    parse,
    specified_rules,
    validate,
)
from graphql.execution.values import get_argument_values, get_variable_values

from integrations.sandbox_kit import FAULT_HEADER, Clock, FaultBoard, Plan, Response

from . import mutations
from .context import Call
from .cost import SINGLE_QUERY_MAXIMUM, Buckets, query_cost
from .idempotency import REQUIRED, Claim, IdempotencyError, IdempotencyKeys, blank_key, missing_key
from .schema import API_VERSION, build
from .state import AccessToken, Shop, Store
from .views import RootView, resolve_field, resolve_type

JSON = dict[str, Any]
Webhooks = Callable[[Shop, list[tuple[str, JSON]]], None]

UNAUTHORIZED = "[API] Invalid API key or access token (unrecognized login or wrong password)"

# graphql-ruby's codes (which Shopify reports) for graphql-core's validation rules.
_RULE_CODES = {
    "FieldsOnCorrectTypeRule": "undefinedField",
    "KnownArgumentNamesRule": "argumentNotAccepted",
    "ProvidedRequiredArgumentsRule": "missingRequiredArguments",
    "ScalarLeafsRule": "selectionMismatch",
    "KnownTypeNamesRule": "undefinedType",
    "NoUnusedVariablesRule": "variableNotUsed",
    "NoUndefinedVariablesRule": "undefinedVariable",
    "VariablesInAllowedPositionRule": "variableMismatch",
    "ValuesOfCorrectTypeRule": "argumentLiteralsIncompatible",
    "KnownDirectivesRule": "undefinedDirective",
    "NoUnusedFragmentsRule": "useAndDefineFragment",
    "KnownFragmentNamesRule": "useAndDefineFragment",
    "UniqueOperationNamesRule": "uniquelyNamedOperations",
    "PossibleFragmentSpreadsRule": "cannotSpreadFragment",
    "OverlappingFieldsCanBeMergedRule": "fieldConflict",
    "UniqueArgumentNamesRule": "argumentNotUnique",
    "VariablesAreInputTypesRule": "variableRequiresValidType",
    "UniqueDirectivesPerLocationRule": "directiveNotUniqueForLocation",
    "NoFragmentCyclesRule": "infiniteLoop",
    "UniqueVariableNamesRule": "variableNotUnique",
    "UniqueFragmentNamesRule": "fragmentNotUnique",
    "FragmentsOnCompositeTypesRule": "fragmentOnNonCompositeType",
}
_UNDEFINED_FIELD = re.compile(r"^Cannot query field '([^']+)' on type '([^']+)'\.")


@functools.cache
def executable_schema() -> GraphQLSchema:
    """The sandbox schema with the mutation resolvers attached (built once)."""
    schema = build()
    mutation = schema.mutation_type
    assert mutation is not None
    mutation.fields["refundCreate"].resolve = mutations.refund_create
    mutation.fields["storeCreditAccountCredit"].resolve = mutations.store_credit_account_credit
    mutation.fields["discountCodeBasicCreate"].resolve = mutations.discount_code_basic_create
    return schema


def _json(status: int, body: object, headers: Mapping[str, str]) -> Response:
    return Response(status, json.dumps(body).encode("utf-8"), dict(headers))


def internal_error(request_id: str | None = None) -> Response:
    """Shopify's answer when it failed on its side (also what a 500 fault answers)."""
    request_id = request_id or str(uuid.uuid4())
    body = {
        "errors": [
            {
                "message": "Internal error. Looks like something went wrong on our end.\n"
                f"Request ID: {request_id} (include this in support requests).",
                "extensions": {"code": "INTERNAL_SERVER_ERROR", "requestId": request_id},
            }
        ]
    }
    headers = {"Content-Type": "application/json; charset=utf-8", "X-Request-Id": request_id}
    return _json(500, body, headers)


def _syntax_error(error: GraphQLError) -> JSON:
    formatted = error.formatted
    return {
        "message": formatted["message"],
        "locations": formatted.get("locations") or [],
        "extensions": {"code": "parseError"},
    }


def _validation_errors(schema: GraphQLSchema, document: DocumentNode) -> list[JSON]:
    """Each validation error with graphql-ruby's code (and its wording for the most
    common one, an unknown field); only run rule by rule once something failed."""
    if not validate(schema, document):
        return []
    found: list[JSON] = []
    for rule in specified_rules:
        for error in validate(schema, document, [rule]):
            formatted = error.formatted
            message = formatted["message"]
            extensions: JSON = {"code": _RULE_CODES.get(rule.__name__, "validationError")}
            unknown = _UNDEFINED_FIELD.match(message)
            if unknown:
                message = f"Field '{unknown.group(1)}' doesn't exist on type '{unknown.group(2)}'"
                extensions |= {"typeName": unknown.group(2), "fieldName": unknown.group(1)}
            found.append(
                {
                    "message": message,
                    "locations": formatted.get("locations") or [],
                    "extensions": extensions,
                }
            )
    return found


def _error(
    message: str, code: str, node: FieldNode | None = None, path: list[str] | None = None
) -> JSON:
    error: JSON = {"message": message}
    if node is not None and node.loc is not None:
        error["locations"] = [
            {"line": node.loc.start_token.line, "column": node.loc.start_token.column}
        ]
    if path:
        error["path"] = path
    error["extensions"] = {"code": code}
    return error


def _directive_key(node: FieldNode, variables: Mapping[str, Any]) -> str | bool | None:
    """The ``@idempotent`` key on a field: the key, ``None`` without the directive, or
    ``False`` when the directive names a variable with no value."""
    for directive in node.directives or ():
        if directive.name.value != "idempotent":
            continue
        for argument in directive.arguments or ():
            if argument.name.value != "key":
                continue
            value = argument.value
            if isinstance(value, StringValueNode):
                return value.value
            if isinstance(value, VariableNode):
                given = variables.get(value.name.value)
                return given if isinstance(given, str) else False
        return False
    return None


@dataclass
class _Prepared:
    """A request that parsed, validated and named its operation."""

    schema: GraphQLSchema
    document: DocumentNode
    operation: OperationDefinitionNode
    fragments: dict[str, FragmentDefinitionNode]
    raw_variables: dict[str, Any]
    variables: dict[str, Any]
    keyed: list[_Keyed]


@dataclass
class _Keyed:
    """A mutation field carrying an idempotency key."""

    response_key: str
    field: str
    key: str
    fingerprint: str


def describe(body: bytes) -> tuple[str | None, str | None]:
    """Best effort, for the received-request log: the first ``@idempotent`` key and the
    operation's name (or its root fields); never raises."""
    try:
        request = json.loads(body.decode("utf-8"))
        document = parse(request["query"])
        variables = request.get("variables") or {}
        operation = get_operation_ast(document, request.get("operationName"))
    except Exception:  # an unreadable request is logged without them
        return None, None
    if operation is None:
        return None, None
    key: str | None = None
    roots: list[str] = []
    for selection in operation.selection_set.selections:
        if isinstance(selection, FieldNode):
            roots.append(selection.name.value)
            found = _directive_key(selection, variables)
            if key is None and isinstance(found, str):
                key = found
    name = operation.name.value if operation.name else ",".join(roots) or None
    return key, name


class GraphQLEndpoint:
    """Admin GraphQL over the sandbox state."""

    def __init__(
        self,
        *,
        store: Store,
        clock: Clock,
        faults: FaultBoard,
        keys: IdempotencyKeys,
        buckets: Buckets,
        webhooks: Webhooks,
        run_due: Callable[[], object],
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.store = store
        self.clock = clock
        self.faults = faults
        self.keys = keys
        self.buckets = buckets
        self._webhooks = webhooks
        self._run_due = run_due
        self._sleep = sleep

    def _pause(self, ms: int) -> None:
        if ms > 0:
            self._sleep(ms / 1000.0)

    def _token(self, shop: Shop, headers: Mapping[str, str]) -> AccessToken | None:
        presented = headers.get("X-Shopify-Access-Token") or ""
        with self.store.lock:
            token = self.store.access_tokens.get(presented)
            if token is None or token.shop != shop.domain or not shop.installed:
                return None
            if token.expires_at is not None and self.clock.now() >= token.expires_at:
                return None
            return token

    def handle(
        self, shop: Shop, version: str, path: str, headers: Mapping[str, str], body: bytes
    ) -> Response:
        """Serve one request to ``shop``'s GraphQL endpoint of API ``version``."""
        request_id = str(uuid.uuid4())
        base = {
            "Content-Type": "application/json; charset=utf-8",
            "X-Request-Id": request_id,
            "X-Shopify-API-Version": API_VERSION,
        }
        self._pause(self.faults.latency_ms)
        try:
            self._admit(shop, version, headers)
            prepared = self._prepare(body)
            requested = self._charge(shop, prepared)
        except _Refused as refused:
            return _json(refused.status, refused.body, base)

        try:
            plan = self._plan(shop, path, headers, prepared)
            if plan.drop_before or plan.error_before:
                self._pause(plan.delay_before_ms)
                return Response(drop=True) if plan.drop_before else internal_error(request_id)
            claims = self._claim(shop, prepared.keyed)
        except _Refused as refused:
            self.buckets.give_back(shop.domain, requested, self.clock.now())
            return _json(refused.status, refused.body, base)
        result, call = self._execute(shop, prepared, claims, plan)

        actual = query_cost(
            prepared.schema,
            prepared.operation,
            prepared.fragments,
            prepared.variables,
            result.data or {},
        )
        status = self.buckets.give_back(shop.domain, requested - actual, self.clock.now())
        answer: JSON = {"data": result.data}
        if result.errors:
            answer["errors"] = [error.formatted for error in result.errors]
        answer["extensions"] = {
            "cost": {
                "requestedQueryCost": requested,
                "actualQueryCost": actual,
                "throttleStatus": status.to_json(),
            }
        }
        if call.webhooks:
            self._webhooks(shop, call.webhooks)
        response = _json(200, answer, base)
        response.replayed = bool(claims) and all(c.replay is not None for c in claims.values())
        return self._finish(response, plan, request_id)

    def _admit(self, shop: Shop, version: str, headers: Mapping[str, str]) -> None:
        """The token (401 as Shopify answers) and the API version (404)."""
        if self._token(shop, headers) is None:
            raise _Refused({"errors": UNAUTHORIZED}, status=401)
        if version != API_VERSION:
            raise _Refused({"errors": "Not Found"}, status=404)

    def _charge(self, shop: Shop, prepared: _Prepared) -> int:
        """Take the requested cost from the shop's bucket; refuse a query above the
        single-query maximum, or a bucket too short for it, before anything runs."""
        requested = query_cost(
            prepared.schema, prepared.operation, prepared.fragments, prepared.variables
        )
        if requested > SINGLE_QUERY_MAXIMUM:
            raise _Refused(_too_costly(requested))
        charged, status = self.buckets.take(shop.domain, requested, self.clock.now())
        if not charged:
            cost = {"requestedQueryCost": requested, "actualQueryCost": None}
            raise _Refused(_throttled(cost | {"throttleStatus": status.to_json()}))
        return requested

    def _prepare(self, body: bytes) -> _Prepared:
        """Body, parse, validation, operation, variables and keys; anything wrong is
        answered (``_Refused``) before a point is charged or a thing runs."""
        try:
            request = json.loads(body.decode("utf-8"))
            if not isinstance(request, dict) or not isinstance(request.get("query"), str):
                raise ValueError("no query")
            raw_variables = request.get("variables") or {}
            operation_name = request.get("operationName")
            if not isinstance(raw_variables, dict) or not isinstance(operation_name, str | None):
                raise ValueError("bad variables or operationName")
        except ValueError:
            raise _Refused(
                {"errors": {"query": "Required parameter missing or invalid"}}, status=400
            ) from None
        schema = executable_schema()
        try:
            document = parse(request["query"])
        except GraphQLSyntaxError as exc:
            raise _Refused({"errors": [_syntax_error(exc)]}) from None
        invalid = _validation_errors(schema, document)
        if invalid:
            raise _Refused({"errors": invalid})
        operation = get_operation_ast(document, operation_name)
        if operation is None:
            message = (
                f'No operation named "{operation_name}"'
                if operation_name
                else "An operation name is required"
            )
            raise _Refused({"errors": [_error(message, "OPERATION_NOT_FOUND")]})
        coerced = get_variable_values(schema, operation.variable_definitions or (), raw_variables)
        if isinstance(coerced, list):
            errors = [{**e.formatted, "extensions": {"code": "INVALID_VARIABLE"}} for e in coerced]
            raise _Refused({"errors": errors})
        fragments = {
            d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)
        }
        return _Prepared(
            schema=schema,
            document=document,
            operation=operation,
            fragments=fragments,
            raw_variables=raw_variables,
            variables=coerced,
            keyed=self._keyed_fields(schema, operation, coerced),
        )

    def _plan(self, shop: Shop, path: str, headers: Mapping[str, str], prepared: _Prepared) -> Plan:
        """The faults this request suffers (matched on its key, shop and operation)."""
        operation = prepared.operation
        roots = [
            s.name.value for s in operation.selection_set.selections if isinstance(s, FieldNode)
        ]
        names = tuple(([operation.name.value] if operation.name else []) + roots)
        key = prepared.keyed[0].key if prepared.keyed else None
        try:
            return self.faults.plan_for(
                "POST", path, key, shop.domain, headers.get(FAULT_HEADER), names
            )
        except ValueError as exc:
            raise _Refused(
                {"errors": f"Invalid {FAULT_HEADER} header: {exc}"}, status=400
            ) from None

    def _keyed_fields(
        self,
        schema: GraphQLSchema,
        operation: OperationDefinitionNode,
        variables: Mapping[str, Any],
    ) -> list[_Keyed]:
        """The mutation fields with their keys and argument fingerprints; refuses a
        required key that is missing or blank."""
        if operation.operation != OperationType.MUTATION:
            return []
        mutation = schema.mutation_type
        assert mutation is not None
        keyed: list[_Keyed] = []
        for node in operation.selection_set.selections:
            if not isinstance(node, FieldNode):
                continue
            name = node.name.value
            response_key = node.alias.value if node.alias else name
            key = _directive_key(node, variables)
            problem: IdempotencyError | None = None
            if not isinstance(key, str):
                problem = missing_key() if name in REQUIRED else None
            elif not key.strip():
                problem = blank_key()
            if problem is not None:
                raise _Refused(
                    {
                        "data": {response_key: None},
                        "errors": [_error(problem.message, problem.code, node, [response_key])],
                    }
                )
            if isinstance(key, str):
                definition = mutation.fields[name]
                arguments = get_argument_values(definition, node, dict(variables))
                fingerprint = json.dumps(arguments, sort_keys=True, default=str)
                keyed.append(_Keyed(response_key, name, key, fingerprint))
        return keyed

    def _claim(self, shop: Shop, keyed: list[_Keyed]) -> dict[str, Claim]:
        claims: dict[str, Claim] = {}
        now = self.clock.now()
        for item in keyed:
            try:
                claims[item.response_key] = self.keys.claim(
                    shop.domain, item.key, item.field, item.fingerprint, now
                )
            except IdempotencyError as exc:
                for taken in claims.values():
                    self.keys.settle(taken)
                raise _Refused(
                    {
                        "data": {item.response_key: None},
                        "errors": [_error(exc.message, exc.code, path=[item.response_key])],
                    }
                ) from None
        return claims

    def _execute(
        self, shop: Shop, prepared: _Prepared, claims: dict[str, Claim], plan: Plan
    ) -> tuple[ExecutionResult, Call]:
        """Wait at holds (keys claimed, nothing committed), then run under the lock."""
        operation = prepared.operation
        try:
            self.faults.wait_at_holds(plan)
            self._pause(plan.delay_before_ms)
            self._run_due()
            with self.store.lock:
                call = Call(self.store, shop, self.clock.now(), frozenset(shop.scopes), claims)
                result = execute(
                    prepared.schema,
                    prepared.document,
                    root_value=RootView(call),
                    context_value=call,
                    variable_values=dict(prepared.raw_variables),
                    operation_name=operation.name.value if operation.name else None,
                    field_resolver=resolve_field,
                    type_resolver=resolve_type,
                )
        finally:
            for claim in claims.values():
                self.keys.settle(claim)
        assert isinstance(result, ExecutionResult)
        return result, call

    def _finish(self, response: Response, plan: Plan, request_id: str) -> Response:
        """After-commit faults on an answer that is already committed (and saved)."""
        self._pause(plan.delay_after_ms)
        if plan.drop_after:
            return Response(drop=True)
        if plan.error_after:
            return internal_error(request_id)
        return response


class _Refused(Exception):
    """A request answered before anything ran (HTTP 200 with ``errors`` unless said)."""

    def __init__(self, body: JSON, status: int = 200) -> None:
        super().__init__("refused")
        self.body = body
        self.status = status


def _too_costly(requested: int) -> JSON:
    return {
        "errors": [
            {
                "message": f"Query cost is {requested}, which exceeds the single query max cost "
                f"limit ({SINGLE_QUERY_MAXIMUM}).\n\nSee "
                "https://shopify.dev/concepts/about-apis/rate-limits for more information on "
                "how the\ncost of a query is calculated.",
                "extensions": {
                    "code": "MAX_COST_EXCEEDED",
                    "cost": requested,
                    "maxCost": SINGLE_QUERY_MAXIMUM,
                },
            }
        ]
    }


def _throttled(cost: JSON) -> JSON:
    return {
        "errors": [
            {
                "message": "Throttled",
                "extensions": {
                    "code": "THROTTLED",
                    "documentation": "https://shopify.dev/api/usage/rate-limits",
                },
            }
        ],
        "extensions": {"cost": cost},
    }

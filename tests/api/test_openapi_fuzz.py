"""Every operation of the staff API, fuzzed from its own OpenAPI document.

Schemathesis generates requests from ``/api/openapi.json`` (valid and invalid ones) and
sends them with a real staff token to the app, on PostgreSQL, Redis and the Stripe
sandbox. No answer may be a server error, use a status the document does not list, or
break the schema it declares for that status. The run is derandomized and bounded, so
it is the same on every machine and takes seconds.
"""

from __future__ import annotations

import pytest
import schemathesis
from api_support import Staff
from flask import Flask
from hypothesis import HealthCheck, Phase, settings
from schemathesis import DataGenerationMethod
from schemathesis.checks import (
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.specs.openapi.schemas import BaseOpenAPISchema

from app.demo import LinenShop

# The document is OpenAPI 3.1; schemathesis 3.x reads 3.1 behind this switch.
schemathesis.experimental.OPEN_API_3_1.enable()

CHECKS = (not_a_server_error, status_code_conformance, response_schema_conformance)
EXAMPLES_PER_OPERATION = 12


@pytest.fixture
def api_schema(app: Flask) -> BaseOpenAPISchema:
    return schemathesis.from_wsgi("/api/openapi.json", app)


@pytest.fixture
def bearer(linen: LinenShop, owner: Staff) -> dict[str, str]:
    """The shop owner's credentials: the role every operation is open to."""
    return dict(owner._headers)


@pytest.fixture
def known_ids(linen: LinenShop) -> dict[str, str]:
    """Ids that exist, so bodies reach the handlers behind ``/cases/{case_id}/...``
    instead of stopping at 404 (random ids are refused long before any parsing)."""
    return {"case_id": str(linen.case_id), "proposal_id": str(linen.proposal_id)}


schema = schemathesis.from_pytest_fixture(
    "api_schema", data_generation_methods=DataGenerationMethod.all()
)


@schema.parametrize()
@settings(
    max_examples=EXAMPLES_PER_OPERATION,
    derandomize=True,
    deadline=None,
    database=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)
def test_every_operation_answers_as_its_document_says(
    case: schemathesis.Case, bearer: dict[str, str], known_ids: dict[str, str]
) -> None:
    for name in case.path_parameters or {}:
        if name in known_ids and case.data_generation_method == DataGenerationMethod.positive:
            case.path_parameters[name] = known_ids[name]
    case.call_and_validate(headers=bearer, checks=CHECKS)

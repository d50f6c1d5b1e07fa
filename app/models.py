"""Imports every model module so ``Base.metadata`` knows all tables (Alembic, tests)."""

from app.approvals.models import Approval, Proposal
from app.audit import AuditEvent, AuditHead
from app.cases.models import Case, Customer, Order
from app.connections.models import Connection
from app.execution.models import Action, ActionAttempt, ProviderEvent, TargetLock
from app.privacy.models import DataExport
from app.shopify.models import ShopifyInstall
from app.shops.models import Shop, ShopPolicy, StaffMember
from app.staff.models import StaffToken

__all__ = [
    "Action",
    "ActionAttempt",
    "Approval",
    "AuditEvent",
    "AuditHead",
    "Case",
    "Connection",
    "Customer",
    "DataExport",
    "Order",
    "Proposal",
    "ProviderEvent",
    "Shop",
    "ShopPolicy",
    "ShopifyInstall",
    "StaffMember",
    "StaffToken",
    "TargetLock",
]

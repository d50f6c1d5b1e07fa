"""Imports every model module so ``Base.metadata`` knows all tables (Alembic, tests)."""

from app.agents.models import AgentCredential
from app.alerts.models import Alert, AlertSettings
from app.audit import AuditEvent, AuditHead
from app.cases.models import Case, Customer, Order
from app.cases.proposals import Approval, Proposal
from app.connections.models import Connection
from app.conversations.models import (
    Conversation,
    HelpdeskCommand,
    Message,
    Participant,
    VerificationCode,
)
from app.drafting.models import CaseDraftRecord
from app.execution.models import Action, ActionAttempt, ProviderEvent, ShopBrakes, TargetLock
from app.history_audit.models import HistoryFinding, HistoryRecord, HistoryScan
from app.privacy.models import DataExport
from app.shopify.models import ShopifyInstall
from app.shops.models import Shop, ShopPolicy, StaffMember
from app.staff.models import StaffToken

__all__ = [
    "Action",
    "ActionAttempt",
    "AgentCredential",
    "Alert",
    "AlertSettings",
    "Approval",
    "AuditEvent",
    "AuditHead",
    "Case",
    "CaseDraftRecord",
    "Connection",
    "Conversation",
    "Customer",
    "DataExport",
    "HelpdeskCommand",
    "HistoryFinding",
    "HistoryRecord",
    "HistoryScan",
    "Message",
    "Order",
    "Participant",
    "Proposal",
    "ProviderEvent",
    "Shop",
    "ShopBrakes",
    "ShopPolicy",
    "ShopifyInstall",
    "StaffMember",
    "StaffToken",
    "TargetLock",
    "VerificationCode",
]

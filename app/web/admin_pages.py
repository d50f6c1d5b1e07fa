"""The embedded admin's working pages: the case queue, a case's file, the audit log.

Every page is an :func:`~app.web.shopify_admin.embedded_page`: the session token is
verified and the person admitted before anything is read, and every read is limited to
that token's shop, so another shop's case is "not found" like a case that never was.
Pages are rendered on the server and read completely without Shopify's CDN; decisions
(approve, reject) are sent by ``static/admin_cases.js`` to the JSON API, which checks
the person's role and limits again on every request (deny by default): a button the
page leaves out is a courtesy, never the protection.

What the drafter made of the conversation is there too: its summary, the customer's claim
as it stated it (each line named from the order), and its own words when the
deny-by-default check refused them, marked as never sent. A drafted proposal's
``within_claim`` check is shown as the claim and what the proposal covers, line by line.
A case whose customer tried to instruct the assistant is flagged at the top.

An approve button carries the exact digest of the proposal as the page shows it, next
to that digest's content in words (:func:`app.approvals.in_words.describe_action`), so
what a person approves is what they read; if anything changed meanwhile the API
answers 409 and nothing is approved.

Each page reads one query per kind of row (cases, proposals, approvals, actions,
attempts, events), never one per row.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from flask import Flask, current_app, g, render_template, request
from flask.blueprints import BlueprintSetupState
from sqlalchemy import select

from app.agents.models import AgentCredential
from app.agents.replies import agent_replies
from app.agents.service import proposing_agents
from app.approvals.in_words import describe_action
from app.approvals.may_approve import Approver, Reason, Refusal, why_not_approvable
from app.audit import AuditEvent, ChainReport, verify_chain
from app.audit_checkpoints import (
    CheckpointError,
    check_against,
    checkpoint_dir,
    load_checkpoint,
    newest_checkpoint_path,
)
from app.cases.models import CaseStatus, Order, case_reference
from app.cases.proposals import Approval, Proposal, ProposalStatus
from app.cases.service import case_audit
from app.clock import utcnow
from app.conversations.linking import Linking
from app.conversations.service import conversation_of, messages_of
from app.db import request_session
from app.drafting.models import CaseDraftRecord
from app.drafting.service import brief_for, latest_draft
from app.errors import InvalidInput, NotFound
from app.execution.models import Action, ActionAttempt, ActionStatus
from app.guard import CheckName, IdentityLevel, Outcome, Verdict
from app.inbox.case_file import CaseFile, case_file
from app.inbox.queue import CaseSearch, QueueFilter, case_queue
from app.inbox.views import ActionView, ProposalView
from app.money import Money
from app.shops.models import Shop, StaffMember, StaffRole
from app.shops.service import current_policy, who_may_approve
from app.validation import PAGE_DEFAULT, calendar_day, choice, integer, text
from app.web import admin_text
from app.web.admin_text import (
    catalogue,
    current_locale,
    in_reader_words,
    moment_text,
    money_text,
    policy_sentences,
    reason_text,
    say,
)
from app.web.people import People, people_for
from app.web.shopify_admin import admin_url, bp, embedded_page
from app.words import N_, said


def _install_catalogue(state: BlueprintSetupState) -> None:
    admin_text.init_app(cast(Flask, state.app))


bp.record_once(_install_catalogue)


@bp.errorhandler(NotFound)
def _not_found(error: NotFound) -> tuple[str, int]:
    """The same page for a case that never was and another shop's: nothing to tell apart.
    (Raised only inside a page, after :func:`embedded_page` set the shop and person.)"""
    return render_template("admin/not_found.html", shop=g.shop, member=g.member), 404


# ------------------------------------------------------------------ the queue


@bp.get("/cases")
@embedded_page
def cases(shop: Shop, member: StaffMember) -> str:
    """The case queue, narrowed by ``?filter=`` and searched (:func:`case_search`), a page
    at a time, with how many cases each filter holds."""
    selected = request.args.get("filter")
    queue_filter = (
        QueueFilter(choice(selected, "filter", [f.value for f in QueueFilter]))
        if selected
        else None
    )
    session = request_session()
    queue = case_queue(session, shop.id, queue_filter, case_search(request.args))
    return render_template(
        "admin/cases.html",
        shop=shop,
        member=member,
        queue=queue,
        person=people_for(session, shop.id).of,
        statuses=list(CaseStatus),
        page_link=_page_link,
    )


def case_search(args: Mapping[str, str]) -> CaseSearch:
    """The search a cases page was asked for: ``q``, ``status``, ``owner``, ``from``,
    ``to`` and ``page``; each wrong one refused naming it."""
    status = args.get("status") or None
    page = args.get("page") or "1"
    return CaseSearch(
        text=(text(args.get("q"), "q") or "").strip(),
        status=CaseStatus(choice(status, "status", list(CaseStatus))) if status else None,
        owner=text(args.get("owner") or None, "owner"),
        opened_from=calendar_day(args.get("from"), "from"),
        opened_to=calendar_day(args.get("to"), "to"),
        page=integer(int(page) if page.isdigit() else page, "page", minimum=1, maximum=100_000),
    )


def _page_link(page: int) -> str:
    """This cases page with its filter and search, at ``page``."""
    kept = {
        name: value
        for name, value in request.args.items()
        if name in ("filter", "q", "status", "owner", "from", "to") and value
    }
    return admin_url("shopify_admin.cases", **kept, page=page)


# ------------------------------------------------------------------ a case


@dataclass(frozen=True)
class ProposalPanel:
    """A proposal as the case page shows it."""

    proposal: Proposal
    status: ProposalStatus
    # What its stored checks concluded; None when no verdict is stored.
    outcome: Outcome | None
    approvals: list[Approval]
    # Approvals of the proposal as it stands (its current digest) that still count.
    approvals_given: int
    in_words: str
    # The stored checks, each one's reason in the page's words; and the verdict's reason
    # for the approvals it needs (None when no verdict is stored).
    checks: list[CheckLine]
    approval_reason: str | None
    # Whether this person may decide it (approve or reject) at all, and if they may but
    # approving would be refused, why; the API refuses the same with the same reasons.
    may_decide: bool
    # Whether it still waits for a decision (blocked or awaiting approval).
    undecided: bool
    not_approvable: list[str]
    # The agent whose credential proposed it, marked on the page; None for a person's.
    agent: AgentCredential | None
    # A drafted proposal's claim beside what it covers, line by line (its within_claim
    # check); empty for any other proposal.
    coverage: list[CoveredLine]


@dataclass(frozen=True)
class CheckLine:
    """One stored check as the page shows it, its reason in the reader's words. A signal
    (``escalates``) that did not pass is shown as raised, not as failed: it asks a person
    to decide and blocks nothing."""

    name: str
    passed: bool
    reason: str
    escalates: bool = False

    @property
    def raised(self) -> bool:
        return self.escalates and not self.passed


@dataclass(frozen=True)
class CoveredLine:
    line: str
    claimed: int
    proposed: int

    @property
    def beyond(self) -> bool:
        return self.proposed > self.claimed


@dataclass(frozen=True)
class ClaimedLine:
    line: str
    quantity: int
    why: str


@dataclass(frozen=True)
class ClaimView:
    """The customer's claim as the drafter stated it, each line named from the order."""

    order: str
    lines: list[ClaimedLine]


@dataclass(frozen=True)
class TimelineEntry:
    at: datetime
    what: str
    who: str | None
    details: list[str]


@dataclass(frozen=True)
class ActionPanel:
    """An action as the case page shows it."""

    action: Action
    status: ActionStatus
    in_words: str
    timeline: list[TimelineEntry]


@bp.get("/cases/<uuid:case_id>")
@embedded_page
def case(shop: Shop, member: StaffMember, case_id: uuid.UUID) -> str:
    """Everything on file about one case, what is missing from it, and its decisions."""
    session = request_session()
    file = case_file(session, shop.id, case_id)
    events = case_audit(session, shop.id, case_id)
    policy = current_policy(session, shop.id)
    orders_by_payment = _orders_by_target(file.orders)
    agents = proposing_agents(session, (proposal for proposal, _ in file.proposals))
    now = utcnow()
    proposals = [
        _proposal_panel(
            shop,
            member,
            policy.version,
            proposal,
            approvals,
            orders_by_payment.get(proposal.target),
            agents.get(proposal.id),
            now,
        )
        for proposal, approvals in file.proposals
    ]
    people = people_for(session, shop.id)
    actions = [
        _action_panel(action, attempts, events, orders_by_payment.get(action.target), people)
        for action, attempts in file.actions
    ]
    opened = next((event for event in events if event.kind == "case.opened"), None)
    conversation = conversation_of(session, file.case)
    linking = (
        brief_for(session, shop=shop, case=file.case, conversation=conversation)[1]
        if conversation
        else None
    )
    drafted = latest_draft(session, file.case)
    return render_template(
        "admin/case.html",
        shop=shop,
        member=member,
        person=people.of,
        persons=people.listed,
        file=file,
        opened=opened,
        conversation=conversation,
        messages=messages_of(session, conversation) if conversation else [],
        drafted=drafted,
        claim=_claim_view(drafted, file.orders),
        agent_replies=agent_replies(session, file.case),
        identity_meaning=_identity_meaning(file.case.identity_level),
        proposals=proposals,
        actions=actions,
        in_flight=[panel for panel in actions if panel.status in ActionStatus.NOT_SETTLED],
        gaps=case_gaps(file) + linking_gaps(linking),
        policy=policy,
        policy_words=policy_sentences(policy, current_locale()),
        history=[_event_entry(event, people) for event in events],
        deciders=(
            []
            if member.role in StaffRole.CAN_APPROVE
            else [people.of(person.user_id) for person in who_may_approve(session, shop.id)]
        ),
    )


def _proposal_panel(
    shop: Shop,
    member: StaffMember,
    policy_version: int,
    proposal: Proposal,
    approvals: list[Approval],
    order: Order | None,
    agent: AgentCredential | None,
    now: datetime,
) -> ProposalPanel:
    view = ProposalView.of(proposal)
    may_decide = member.role in StaffRole.CAN_APPROVE and view.status in ProposalStatus.OPEN
    return ProposalPanel(
        proposal=proposal,
        status=view.status,
        outcome=view.verdict.outcome if view.verdict else None,
        approvals=approvals,
        approvals_given=sum(
            1
            for approval in approvals
            if approval.digest == proposal.digest and approval.voided_at is None
        ),
        in_words=describe_action(
            proposal, order=order, locale=current_locale(), translations=catalogue()
        ),
        checks=[
            CheckLine(check.name, check.passed, in_reader_words(check.said), check.escalates)
            for check in view.checks
        ],
        approval_reason=in_reader_words(view.verdict.approval_said) if view.verdict else None,
        may_decide=may_decide,
        undecided=view.status in ProposalStatus.OPEN,
        not_approvable=(
            _not_approvable(shop, member, policy_version, proposal, approvals, now)
            if may_decide
            else []
        ),
        agent=agent,
        coverage=_coverage(view.verdict, order),
    )


def _coverage(verdict: Verdict | None, order: Order | None) -> list[CoveredLine]:
    """The lines the customer claimed or the proposal covers, with how many of each, from
    the facts of the proposal's ``within_claim`` check (only a drafted proposal has one)."""
    if verdict is None:
        return []
    try:
        facts = verdict.check(CheckName.WITHIN_CLAIM).facts
    except KeyError:
        return []
    claimed = _quantities(facts["claimed"])
    proposed = _quantities(facts["proposed"])
    return [
        CoveredLine(_line_name(order, line), claimed.get(line, 0), proposed.get(line, 0))
        for line in dict.fromkeys([*claimed, *proposed])
    ]


def _quantities(lines: object) -> dict[str, int]:
    """A check's JSON lines (``line_id``, ``quantity``) as quantities by line."""
    return {
        str(line["line_id"]): int(line["quantity"])
        for line in cast(Iterable[Mapping[str, Any]], lines)
    }


def _claim_view(drafted: CaseDraftRecord | None, orders: Iterable[Order]) -> ClaimView | None:
    if drafted is None or not drafted.claim:
        return None
    claim = drafted.claim
    order = next((o for o in orders if o.name == claim["order"]), None)
    return ClaimView(
        order=claim["order"],
        lines=[
            ClaimedLine(_line_name(order, line["line_id"]), int(line["quantity"]), line["why"])
            for line in claim["lines"]
        ],
    )


def _line_name(order: Order | None, line_id: str) -> str:
    """A line by its title on the order when the order on file has it, always with its id."""
    _ = catalogue().gettext
    title = next(
        (str(line["title"]) for line in (order.lines if order else []) if line["id"] == line_id),
        None,
    )
    if title is None:
        return _("line %(line)s") % {"line": line_id}
    return _("%(title)s (line %(line)s)") % {"title": title, "line": line_id}


def _not_approvable(
    shop: Shop,
    member: StaffMember,
    policy_version: int,
    proposal: Proposal,
    approvals: list[Approval],
    now: datetime,
) -> list[str]:
    """Why this person's approval would be refused now, in the admin's words; empty when
    it would count."""
    approver = Approver(member.user_id, member.role, member.approval_limits)
    refusals = why_not_approvable(
        shop=shop,
        approver=approver,
        proposal=proposal,
        approvals=approvals,
        policy_version=policy_version,
        now=now,
    )
    return [_refusal_text(refusal, approver, proposal, policy_version) for refusal in refusals]


def _refusal_text(
    refusal: Refusal, approver: Approver, proposal: Proposal, policy_version: int
) -> str:
    _ = catalogue().gettext
    if refusal.reason is Reason.POLICY_CHANGED:
        return _(
            "It was checked under policy version %(checked)s and the policy is now at "
            "version %(now)s: it must be checked again before anyone can approve it."
        ) % {"checked": proposal.policy_version, "now": policy_version}
    if refusal.reason is Reason.OVER_LIMIT and proposal.currency is not None:
        return _("Your approval limit in %(currency)s is %(limit)s.") % {
            "currency": proposal.currency.upper(),
            "limit": money_text(
                approver.limit_in(proposal.currency), proposal.currency, current_locale()
            ),
        }
    if refusal.reason in _IN_ADMIN_WORDS:
        return _(_IN_ADMIN_WORDS[refusal.reason])
    # A reason the page has no words of its own for (a role it offers no decision to):
    # what the API would answer, in the reader's language.
    return in_reader_words(refusal.sentence)


# How the case page says a refusal that needs no values, in the admin's words.
_IN_ADMIN_WORDS = {
    Reason.NOT_AWAITING_APPROVAL: N_(
        "Its checks do not pass: it can be rejected, or edited and checked again."
    ),
    Reason.SHOP_UNINSTALLED: N_("Not installed: the app was uninstalled from this shop."),
    Reason.KILL_SWITCH: N_(
        "The kill switch is on: nothing can be approved until an owner releases it."
    ),
    Reason.PROTECTION_MODE: N_(
        "The shop is in protection mode: an owner must turn writes on in Settings first."
    ),
    Reason.PROPOSER: N_("It needs two people other than its proposer, and you proposed it."),
    Reason.ALREADY_APPROVED: N_("You have approved it already; it needs another approver."),
}


def _action_panel(
    action: Action,
    attempts: list[ActionAttempt],
    events: list[AuditEvent],
    order: Order | None,
    people: People,
) -> ActionPanel:
    entries = [_event_entry(event, people) for event in events if event.action_id == action.id]
    entries.extend(_attempt_entry(attempt) for attempt in attempts)
    return ActionPanel(
        action=action,
        status=ActionView.of(action).status,
        in_words=describe_action(
            action, order=order, locale=current_locale(), translations=catalogue()
        ),
        timeline=sorted(entries, key=lambda entry: entry.at),
    )


def _event_entry(event: AuditEvent, people: People) -> TimelineEntry:
    _ = catalogue().gettext
    data = event.data or {}
    details = []
    if "previous" in data and "status" in data and data["previous"]:
        # A case's status or an action's: the event's kind says which.
        group = event.kind.partition(".")[0]
        details.append(
            _("status %(previous)s → %(status)s")
            % {"previous": say(group, data["previous"]), "status": say(group, data["status"])}
        )
    if data.get("said"):
        data = {**data, "reason": reason_text(data["said"], None)}
    for key, label in (
        ("provider_ref", _("provider reference %(value)s")),
        ("failure_reason", _("provider's failure reason: %(value)s")),
        ("reason", _("reason: %(value)s")),
        ("owner", _("now with %(value)s")),
        ("idempotency_key", _("idempotency key %(value)s")),
        ("digest", _("digest %(value)s")),
    ):
        value = data.get(key)
        if value:
            details.append(label % {"value": value})
    return TimelineEntry(
        at=event.created_at,
        what=say("event", event.kind),
        who=_who(event, people),
        details=details,
    )


def _attempt_entry(attempt: ActionAttempt) -> TimelineEntry:
    _ = catalogue().gettext
    details = [_("idempotency key %(value)s") % {"value": attempt.idempotency_key}]
    if attempt.outcome:
        details.append(say("answer", attempt.outcome))
    else:
        details.append(_("no answer recorded yet"))
    if attempt.provider_status:
        details.append(
            _("the provider's status: %(value)s")
            % {"value": say("action", attempt.provider_status)}
        )
    if attempt.provider_ref:
        details.append(_("provider reference %(value)s") % {"value": attempt.provider_ref})
    if attempt.detail:
        details.append(attempt.detail)
    if attempt.finished_at:
        details.append(
            _("answered %(moment)s")
            % {"moment": moment_text(attempt.finished_at, current_locale())}
        )
    return TimelineEntry(
        at=attempt.started_at,
        what=_("Attempt %(number)s at the provider: %(purpose)s")
        % {"number": attempt.number, "purpose": say("attempt", attempt.purpose)},
        who=None,
        details=details,
    )


def _who(event: AuditEvent, people: People) -> str:
    if event.actor_surface:
        return catalogue().gettext("%(actor)s via %(surface)s") % {
            "actor": people.of(event.actor),
            "surface": say("surface", event.actor_surface),
        }
    return people.of(event.actor)


def _identity_meaning(level: str) -> str:
    _ = catalogue().gettext
    meanings: dict[str, str] = {
        IdentityLevel.NONE: _("Nothing shows who the customer is."),
        IdentityLevel.CLAIM: _(
            "The customer stated details (such as an order number) that prove nothing."
        ),
        IdentityLevel.MEDIUM: _("The helpdesk sender's email matches the order's email."),
        IdentityLevel.STRONG: _(
            "The customer signed in to the store, or confirmed a one-time code sent to the "
            "order's email."
        ),
    }
    return meanings.get(level, level)


def linking_gaps(linking: Linking | None) -> list[str]:
    """Which order the conversation means, where the customer's words leave it open."""
    if linking is None:
        return []
    _ = catalogue().gettext
    gaps = [
        _("The customer quoted %(quoted)s, which matches none of their orders.")
        % {"quoted": quoted}
        for quoted in linking.unmatched
    ]
    if linking.ambiguous:
        gaps.append(
            _("Which order the customer means is not settled: %(orders)s.")
            % {"orders": ", ".join(order.name for order in linking.candidates)}
        )
    return gaps


def case_gaps(file: CaseFile) -> list[str]:
    """What the case file lacks or holds twice, said plainly: facts nobody should guess."""
    _ = catalogue().gettext
    case, customer = file.case, file.customer
    gaps = []
    if case.identity_level in (IdentityLevel.NONE, IdentityLevel.CLAIM):
        gaps.append(
            _(
                "The customer is not identified (%(level)s): no action can be proposed until "
                "they are identified at least as medium."
            )
            % {"level": say("identity", case.identity_level)}
        )
    if not case.request_text.strip():
        gaps.append(_("The customer's request is empty."))
    if customer is None:
        gaps.append(
            _(
                "No customer is linked to this case: no orders or payments can be shown, and "
                "no action can reach anyone."
            )
        )
    else:
        if not customer.stripe_customer_id:
            gaps.append(
                _(
                    "The customer has no Stripe customer on file: a Stripe proposal links "
                    "the one Stripe customer with their email once the case is verified; "
                    "until then no Stripe action can be bound to them."
                )
            )
        if not customer.email:
            gaps.append(_("No email address is on file for the customer."))
        if not file.orders:
            gaps.append(_("No orders are on file for this customer."))
    gaps.extend(_order_gaps(file.orders))
    gaps.extend(_proposal_gaps(file))
    for action, _attempts in file.actions:
        view = ActionView.of(action)
        if view.status in ActionStatus.OUTCOME_UNKNOWN:
            gaps.append(
                _(
                    "Whether the %(kind)s of %(amount)s on %(target)s happened at the provider "
                    "is not known yet."
                )
                % {
                    "kind": say("kind", action.kind),
                    "amount": _money_words(view.money),
                    "target": action.target,
                }
            )
    return gaps


def _money_words(money: Money | None) -> str:
    """Money as the reader's locale writes it; :func:`money_text`'s words when there is none."""
    if money is None:
        return money_text(None, None, current_locale())
    return money.format(current_locale())


def _orders_by_target(orders: Iterable[Order]) -> dict[str, Order]:
    """Orders by what a refund of them names: the payment (Stripe), or for a Shopify
    order its gid (a refund through Shopify names the order itself)."""
    found: dict[str, Order] = {}
    for order in orders:
        for ref in (order.payment_id, order.shopify_order_id):
            if ref:
                found[ref] = order
    return found


def _order_gaps(orders: Iterable[Order]) -> list[str]:
    _ = catalogue().gettext
    gaps = []
    orders = list(orders)
    for order in orders:
        if not order.payment_id:
            gaps.append(_("Order %(order)s has no payment on file.") % {"order": order.name})
    shared = Counter(order.payment_id for order in orders if order.payment_id)
    for payment, count in shared.items():
        if count > 1:
            names = ", ".join(order.name for order in orders if order.payment_id == payment)
            gaps.append(
                _("Payment %(payment)s belongs to more than one order on file (%(orders)s).")
                % {"payment": payment, "orders": names}
            )
    return gaps


def _proposal_gaps(file: CaseFile) -> list[str]:
    _ = catalogue().gettext
    by_payment = _orders_by_target(file.orders)
    gaps = []
    for proposal, _approvals in file.proposals:
        view = ProposalView.of(proposal)
        if view.status not in ProposalStatus.OPEN or proposal.kind != "refund":
            continue
        order = by_payment.get(proposal.target)
        if order is None:
            gaps.append(
                _("The refund proposed targets %(target)s, which no order on file matches.")
                % {"target": proposal.target}
            )
        elif view.money is not None and view.money.currency != order.currency:
            gaps.append(
                _(
                    "The refund proposed is in %(proposed)s, but order %(order)s was paid in "
                    "%(paid)s."
                )
                % {
                    "proposed": view.money.currency.upper(),
                    "order": order.name,
                    "paid": order.currency.upper(),
                }
            )
    return gaps


# ------------------------------------------------------------------ the audit log


@dataclass(frozen=True)
class ChainStanding:
    """The shop's chain as verified now, and against its newest signed checkpoint."""

    report: ChainReport
    checkpoint_when: str | None
    checkpoint_problem: str | None


@bp.get("/audit")
@embedded_page
def audit_log(shop: Shop, member: StaffMember) -> str:
    """The shop's audit events, newest first, a page at a time, and whether the chain holds."""
    before = request.args.get("before")
    before_seq = integer(_whole_number(before, "before"), "before", minimum=1) if before else None
    session = request_session()
    query = select(AuditEvent).where(AuditEvent.shop_id == shop.id)
    if before_seq is not None:
        query = query.where(AuditEvent.seq < before_seq)
    events = list(session.scalars(query.order_by(AuditEvent.seq.desc()).limit(PAGE_DEFAULT)))
    older = events[-1].seq if events and events[-1].seq > 1 else None
    people = people_for(session, shop.id)
    return render_template(
        "admin/audit.html",
        shop=shop,
        member=member,
        events=[(event, _event_entry(event, people)) for event in events],
        case_number=case_reference,
        older=older,
        standing=_chain_standing(shop),
    )


def _chain_standing(shop: Shop) -> ChainStanding:
    session = request_session()
    report = verify_chain(session, shop.id)
    settings = current_app.config["CASEWARD_SETTINGS"]
    path = newest_checkpoint_path(checkpoint_dir(settings), shop.domain, shop.id)
    if path is None:
        return ChainStanding(report, None, None)
    try:
        checkpoint = load_checkpoint(path, current_app.extensions["caseward.audit_keys"])
        report = check_against(session, shop.id, report, checkpoint)
    except CheckpointError as exc:
        return ChainStanding(report, None, str(exc))
    return ChainStanding(report, checkpoint.when, None)


def _whole_number(value: str, field: str) -> int:
    if not value.isascii() or not value.isdigit() or len(value) > 10:
        raise InvalidInput(said("%(field)s is a whole number", field=field), field=field)
    return int(value)

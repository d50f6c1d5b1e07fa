"""Drafting a case from its conversation, and turning the draft into a proposal and a reply.

The sequence (the job in :mod:`app.drafting.jobs` runs it for the newest customer message):

1. :func:`brief_for` reads what the drafter may see: the conversation's messages, and
   only for a verified customer their orders, the order exactly linked
   (:mod:`app.conversations.linking`), what the customer quoted that matches nothing,
   and the case's actions; no transaction is held while the drafter runs;
2. the drafter answers (:mod:`app.drafting.drafters`);
3. :func:`apply_draft`, in one transaction under the case's row lock, records the run
   (:class:`~app.drafting.models.CaseDraftRecord`), then:
   - a proposed step becomes an exact proposal (:mod:`app.drafting.proposals` sets the
     amount from the order's paid lines) through the same
     :func:`~app.approvals.service.create_proposal` as staff's, unless the customer is
     unverified, a proposal is already open, or the step does not fit the facts; store
     credit or a discount for a customer Shopify does not hold names their Stripe
     account, linked by their verified email first when it is not yet;
   - "needs a person" puts the case in front of a named person;
   - the reply is checked against what the provider has reported
     (:func:`~app.conversations.replies.check_reply`); a reply that claims more is
     replaced by a neutral one, and the refusal is recorded;
4. the caller commits, then queues the action when the shop's policy approved it.

An outside agent (the MCP ``draft_reply`` tool) drafts only a reply:
:func:`keep_agent_reply` checks it the same way against the case's actions and open
proposals, refuses it naming every claim that goes beyond them, and otherwise keeps it as
a drafting run marked with the agent's credential, for a person to send. It is never
sent by Caseward.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, replace
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from app import audit
from app.actors import DRAFTER, Actor
from app.agents.models import AgentCredential
from app.agents.service import agent_actor
from app.approvals.models import Proposal, ProposalStatus
from app.approvals.service import ProposalResult, create_proposal
from app.cases.customer_link import link_customer
from app.cases.models import Case, CaseStatus, Customer, Order
from app.conversations.linking import Linking, link_order
from app.conversations.models import Author, Conversation, Message
from app.conversations.replies import check_reply, refused_reply
from app.conversations.service import MAX_MESSAGE, add_reply, messages_of
from app.drafting.brief import (
    ActionBrief,
    CaseBrief,
    LineBrief,
    MessageBrief,
    OrderBrief,
    ShipmentBrief,
)
from app.drafting.drafters import Drafter, DraftRun
from app.drafting.models import CaseDraftRecord
from app.drafting.proposals import (
    TO_THE_CUSTOMERS_ACCOUNT,
    StepRefused,
    customer_account,
    draft_for,
)
from app.drafting.result import StepProposal, parse_step, step_dict
from app.errors import CasewardError, InvalidInput
from app.evaluation import Draft
from app.execution.models import Action
from app.execution.providers import AdapterFactory
from app.guard import IdentityLevel
from app.guard.policy import PolicyRules
from app.lifecycle import move_case
from app.money import Money
from app.settings import Settings
from app.shopify.models import ShopifyInstall
from app.shops.models import Shop, StaffMember, StaffRole
from app.shops.service import current_policy
from app.validation import text
from app.words import said
from integrations.provider import ActionKind, CustomerDirectory

NEUTRAL_REPLY = (
    "Thanks for your message. We are looking into it and will reply here as soon as we can."
)


@dataclass(frozen=True)
class Drafted:
    record: CaseDraftRecord
    proposal: ProposalResult | None
    # The reply as kept for the customer; None when it was only suggested to an agent.
    reply: Message | None
    # The reply's text, checked: what was sent, or what an agent is offered to send.
    reply_text: str


def brief_for(
    session: Session, *, shop: Shop, case: Case, conversation: Conversation
) -> tuple[CaseBrief, Linking | None]:
    """What the drafter may see of ``case``: nothing of orders before verification."""
    policy = current_policy(session, shop.id)
    messages = messages_of(session, conversation, limit=20)
    verified = IdentityLevel(conversation.identity_level) >= IdentityLevel.MEDIUM and bool(
        conversation.customer_id
    )
    orders = _orders(session, shop.id, conversation.customer_id) if verified else []
    chosen = next((o for o in orders if o.id == conversation.order_id), None)
    texts = [m.body for m in messages if m.author == Author.CUSTOMER]
    linking = link_order(texts, orders, chosen) if verified else None
    actions = _actions(session, case)
    proposal_open = (
        session.scalars(
            select(Proposal.id).where(
                Proposal.case_id == case.id,
                Proposal.status.in_((ProposalStatus.AWAITING_APPROVAL, ProposalStatus.APPROVED)),
            )
        ).first()
        is not None
    )
    policy_lines = [
        f"A {kind.value} needs the customer verified at level {level.value} or above."
        for kind, level in sorted(policy.min_identity.items())
        if kind in policy.enabled_kinds
    ]
    if policy.refund_window_days is not None:
        policy_lines.append(
            f"Refunds within {policy.refund_window_days} days of delivery (or fulfilment)."
        )
    brief = CaseBrief(
        shop_name=shop.name,
        verified=verified,
        identity_level=conversation.identity_level,
        kinds_allowed=tuple(
            kind.value for kind in sorted(policy.enabled_kinds) if kind.value in _DRAFTABLE
        ),
        policy_lines=tuple(policy_lines),
        messages=tuple(MessageBrief(m.author, m.body) for m in messages),
        orders=tuple(_order_brief(order) for order in orders),
        picked_order=linking.picked.name if linking and linking.picked else None,
        unmatched=linking.unmatched if linking else (),
        actions=tuple(actions),
        proposal_open=proposal_open,
        wants_person=conversation.wants_person,
    )
    return brief, linking


def draft_now(
    session: Session,
    *,
    shop: Shop,
    case: Case,
    conversation: Conversation,
    drafter: Drafter,
    adapters: AdapterFactory,
    settings: Settings,
    now: datetime,
) -> Drafted:
    """Brief, draft and apply in the caller's transaction: for a drafter that answers at
    once (the offline rules seeding the demo). The job keeps the model's call outside any
    transaction instead (:mod:`app.drafting.jobs`)."""
    brief, _ = brief_for(session, shop=shop, case=case, conversation=conversation)
    return apply_draft(
        session,
        shop=shop,
        case=case,
        conversation=conversation,
        brief=brief,
        run=drafter.run(brief),
        adapters=adapters,
        settings=settings,
        now=now,
    )


def apply_fresh(
    session: Session,
    *,
    shop: Shop,
    case: Case,
    conversation: Conversation,
    run: DraftRun,
    adapters: AdapterFactory,
    settings: Settings,
    now: datetime,
    reply_to_customer: bool = True,
) -> Drafted:
    """Apply a drafter's ``run`` on the facts as they are now: an approval or a refund may
    have landed while the drafter ran, so the brief is read again first. The caller holds
    the case's row lock."""
    brief, _ = brief_for(session, shop=shop, case=case, conversation=conversation)
    return apply_draft(
        session,
        shop=shop,
        case=case,
        conversation=conversation,
        brief=brief,
        run=run,
        adapters=adapters,
        settings=settings,
        now=now,
        reply_to_customer=reply_to_customer,
    )


def apply_draft(
    session: Session,
    *,
    shop: Shop,
    case: Case,
    conversation: Conversation,
    brief: CaseBrief,
    run: DraftRun,
    adapters: AdapterFactory,
    settings: Settings,
    now: datetime,
    reply_to_customer: bool = True,
) -> Drafted:
    """Record ``run`` and act on it (see the module docstring); without
    ``reply_to_customer`` (a helpdesk agent asked for the draft) the checked reply is
    returned as a suggestion, not sent. The caller holds the
    case's row lock and commits."""
    draft = run.draft
    record = CaseDraftRecord(
        id=uuid.uuid4(),
        shop_id=shop.id,
        case_id=case.id,
        drafter=run.drafter,
        model=run.model,
        next_step=draft.step.value,
        summary=draft.summary,
        failure=run.failure,
        input_tokens=run.usage.input_tokens if run.usage else 0,
        output_tokens=run.usage.output_tokens if run.usage else 0,
        cache_read_tokens=run.usage.cache_read_input_tokens if run.usage else 0,
        cache_write_tokens=run.usage.cache_creation_input_tokens if run.usage else 0,
        created_at=now,
    )
    session.add(record)
    session.flush()
    proposal: ProposalResult | None = None
    reply = draft.reply
    refusal: str | None = None
    offered: list[Money] = []
    if draft.proposal is not None:
        # Choices are put to a customer in the chat; an agent gets the refund to review.
        offer = (
            _offer(
                session,
                shop=shop,
                case=case,
                conversation=conversation,
                brief=brief,
                step=draft.proposal,
                adapters=adapters,
                now=now,
            )
            if reply_to_customer
            else None
        )
        if offer is not None:
            reply, offered = offer
        else:
            proposal, refusal = _propose(
                session,
                shop=shop,
                case=case,
                conversation=conversation,
                brief=brief,
                step=draft.proposal,
                adapters=adapters,
                settings=settings,
                now=now,
            )
            if proposal is None:
                reply = NEUTRAL_REPLY
    if draft.step.value == "needs_person" or refusal is not None:
        # Never the drafter's own words: the reason is sealed into the audit chain, which
        # erasure cannot blank, and a summary may quote the customer.
        why = refusal or "the drafter asked for one; its summary is on the case page"
        hand_to_person(session, case=case, actor=DRAFTER, now=now, why=why)
    proposed = (
        [Money(proposal.proposal.amount, proposal.proposal.currency)]
        if proposal and proposal.proposal.amount and proposal.proposal.currency
        else []
    )
    problems = check_reply(reply, actions=brief.actions, proposed=proposed + offered)
    if problems:
        refusal = "; ".join(str(problem.reason) for problem in problems)
        reply = NEUTRAL_REPLY
    record.proposal_id = proposal.proposal.id if proposal else None
    if refusal is not None:
        record.failure = "; ".join(filter(None, (record.failure, refusal)))
    audit.record(
        session,
        shop_id=shop.id,
        kind="case.drafted",
        actor=DRAFTER,
        case_id=case.id,
        data={
            "drafter": run.drafter,
            "next_step": draft.step.value,
            "proposal_id": str(proposal.proposal.id) if proposal else None,
            "reply_refused": bool(problems),
            "failure": run.failure,
        },
        now=now,
    )
    message = (
        add_reply(
            session, conversation=conversation, body=reply, sentence=None, actor=DRAFTER, now=now
        )
        if reply_to_customer
        else None
    )
    return Drafted(record, proposal, message, reply)


def _exact_draft(
    session: Session,
    *,
    shop: Shop,
    case: Case,
    conversation: Conversation,
    brief: CaseBrief,
    step: StepProposal,
    adapters: AdapterFactory,
    now: datetime,
) -> Draft:
    """The exact proposal ``step`` names for this conversation's customer; raises
    :class:`StepRefused` saying why there is none."""
    refused = why_not_proposable(brief, conversation, step.order)
    if refused is not None:
        raise StepRefused(refused)
    order = session.scalars(
        select(Order).where(
            Order.shop_id == shop.id,
            Order.customer_id == conversation.customer_id,
            Order.name == step.order,
        )
    ).one_or_none()
    customer = session.get(Customer, conversation.customer_id)
    if order is None or customer is None:
        raise StepRefused(f"order {step.order} is not this customer's")
    shopify_connected = _shopify_connected(session, shop)
    if step.kind in TO_THE_CUSTOMERS_ACCOUNT and customer_account(
        customer, shopify_connected=shopify_connected
    ) == ("stripe", None):
        _link_at_stripe(session, shop=shop, case=case, adapters=adapters, now=now)
    policy = current_policy(session, shop.id)
    return draft_for(
        step,
        order=order,
        customer=customer,
        shopify_connected=shopify_connected,
        credit_bonus_percent=policy.store_credit_bonus_percent or 0,
    )


def _link_at_stripe(
    session: Session, *, shop: Shop, case: Case, adapters: AdapterFactory, now: datetime
) -> None:
    """Store credit or a discount for a customer Shopify does not hold goes to their
    account at Stripe, which the draft names: a customer not linked yet is linked by
    their verified email first, as a person's proposal links them
    (:func:`app.cases.customer_link.link_customer`); raises :class:`StepRefused` saying
    why when that links no one."""
    try:
        adapter = adapters(session, shop.id, "stripe")
    except CasewardError as error:
        raise StepRefused(error.message) from error
    if not isinstance(adapter, CustomerDirectory):
        return
    lookup = link_customer(
        session, case=case, provider="stripe", directory=adapter, actor=DRAFTER, now=now
    )
    why = lookup.why_unlinked()
    if why is not None:
        raise StepRefused(str(why))


def _propose(
    session: Session,
    *,
    shop: Shop,
    case: Case,
    conversation: Conversation,
    brief: CaseBrief,
    step: StepProposal,
    adapters: AdapterFactory,
    settings: Settings,
    now: datetime,
) -> tuple[ProposalResult | None, str | None]:
    """``step`` as a proposal through the same checks as anyone's, or why it was not."""
    try:
        draft = _exact_draft(
            session,
            shop=shop,
            case=case,
            conversation=conversation,
            brief=brief,
            step=step,
            adapters=adapters,
            now=now,
        )
        adapter = adapters(session, shop.id, draft.provider)
        result = create_proposal(
            session,
            shop=shop,
            case=case,
            actor=DRAFTER,
            draft=draft,
            adapter=adapter,
            settings=settings,
            now=now,
        )
    except StepRefused as refused:
        return None, str(refused)
    except CasewardError as error:
        return None, error.message
    if result.proposal.status == ProposalStatus.BLOCKED:
        # Kept for staff to read; the customer hears nothing about it until a person looks.
        reasons = "; ".join(
            check["reason"] for check in result.proposal.verdict["checks"] if not check["passed"]
        )
        return None, f"the checks blocked the proposal: {reasons}"
    return result, None


def _offer(
    session: Session,
    *,
    shop: Shop,
    case: Case,
    conversation: Conversation,
    brief: CaseBrief,
    step: StepProposal,
    adapters: AdapterFactory,
    now: datetime,
) -> tuple[str, list[Money]] | None:
    """Where the shop's policy offers more than the refund asked for (store credit with
    its bonus, a discount on a replacement): the offer to put to the customer and the
    amounts it names, the step kept until they choose (:func:`choose_offer`); else None."""
    if step.kind != ActionKind.REFUND:
        return None
    choices = _choices(current_policy(session, shop.id))
    if len(choices) < 2:
        return None
    try:
        priced = [
            (
                offer,
                _exact_draft(
                    session,
                    shop=shop,
                    case=case,
                    conversation=conversation,
                    brief=brief,
                    step=replace(step, kind=offer.kind),
                    adapters=adapters,
                    now=now,
                ),
            )
            for offer in choices
        ]
    except StepRefused:
        return None
    amounts = [Money(draft.amount or 0, draft.currency or "usd") for _, draft in priced]
    options = [
        _OFFER_WORDS[offer.id].format(amount=amount, shop=shop.name)
        for (offer, _), amount in zip(priced, amounts, strict=True)
    ]
    conversation.pending_step = step_dict(step)
    return (
        f"I can {', or '.join(options)}. Which would you prefer?",
        amounts,
    )


_OFFER_WORDS = {
    "refund": "refund {amount} to your original payment method",
    "store_credit": "add {amount} in store credit to your account at {shop}",
    "replacement_discount": "give you a discount of {amount} on a replacement",
}
_PREPARED = {
    ActionKind.REFUND: "a refund",
    ActionKind.CUSTOMER_CREDIT: "store credit",
    ActionKind.DISCOUNT: "a discount on a replacement",
}


def choose_offer(
    session: Session,
    *,
    shop: Shop,
    case: Case,
    conversation: Conversation,
    choice: str,
    actor: Actor,
    adapters: AdapterFactory,
    settings: Settings,
    now: datetime,
) -> ProposalResult | None:
    """The customer chose from :func:`offers`: that kind becomes the proposal, on the
    same path as any (checks, approval), and the customer is told it was prepared."""
    if conversation.pending_step is None:
        raise InvalidInput(said("nothing is on offer in this conversation"), field="choice")
    kinds = {offer.id: offer.kind for offer in offers(session, conversation)}
    if choice not in kinds:
        raise InvalidInput(
            said("choice must be one of %(choices)s", choices=", ".join(kinds)), field="choice"
        )
    step = replace(parse_step(conversation.pending_step), kind=kinds[choice])
    conversation.pending_step = None
    brief, _ = brief_for(session, shop=shop, case=case, conversation=conversation)
    proposal, refusal = _propose(
        session,
        shop=shop,
        case=case,
        conversation=conversation,
        brief=brief,
        step=step,
        adapters=adapters,
        settings=settings,
        now=now,
    )
    audit.record(
        session,
        shop_id=shop.id,
        kind="conversation.choice_made",
        actor=actor,
        case_id=case.id,
        data={
            "conversation_id": str(conversation.id),
            "choice": choice,
            "proposal_id": str(proposal.proposal.id) if proposal else None,
        },
        now=now,
    )
    if proposal is None:
        hand_to_person(session, case=case, actor=actor, now=now, why=refusal or "no proposal")
        reply = NEUTRAL_REPLY
    else:
        prepared = Money(proposal.proposal.amount or 0, proposal.proposal.currency or "usd")
        reply = (
            f"Thank you. I've prepared {_PREPARED[step.kind]} of {prepared} for our team to "
            "review. "
            "I will tell you here as soon as the payment provider confirms it."
        )
    add_reply(session, conversation=conversation, body=reply, sentence=None, actor=DRAFTER, now=now)
    return proposal


@dataclass(frozen=True)
class Offer:
    id: str
    kind: ActionKind
    label: str


def offers(session: Session, conversation: Conversation) -> list[Offer]:
    """What the customer may choose between now (empty when nothing is on offer)."""
    if conversation.pending_step is None:
        return []
    return _choices(current_policy(session, conversation.shop_id))


def _choices(policy: PolicyRules) -> list[Offer]:
    """The refund, and what else the shop's policy offers instead of it."""
    found = [Offer("refund", ActionKind.REFUND, "Refund to my original payment method")]
    enabled = policy.enabled_kinds
    if policy.store_credit_bonus_percent is not None and ActionKind.CUSTOMER_CREDIT in enabled:
        found.append(Offer("store_credit", ActionKind.CUSTOMER_CREDIT, "Store credit instead"))
    if policy.replacement_discount and ActionKind.DISCOUNT in enabled:
        found.append(
            Offer("replacement_discount", ActionKind.DISCOUNT, "A discount on a replacement")
        )
    return found


def reply_facts(session: Session, case: Case) -> tuple[list[ActionBrief], list[Money]]:
    """What a reply about ``case`` may state: its actions as the provider reported them,
    and the amounts of its proposals under review or approved."""
    proposed = [
        Money(amount, currency)
        for amount, currency in session.execute(
            select(Proposal.amount, Proposal.currency).where(
                Proposal.shop_id == case.shop_id,
                Proposal.case_id == case.id,
                Proposal.status.in_((ProposalStatus.AWAITING_APPROVAL, ProposalStatus.APPROVED)),
            )
        )
        if amount is not None and currency
    ]
    return _actions(session, case), proposed


def latest_draft(session: Session, case: Case) -> CaseDraftRecord | None:
    """The case's newest run of Caseward's drafter: its summary for staff, and what was
    refused."""
    return session.scalars(
        select(CaseDraftRecord)
        .where(
            CaseDraftRecord.shop_id == case.shop_id,
            CaseDraftRecord.case_id == case.id,
            CaseDraftRecord.agent_id.is_(None),
        )
        .order_by(CaseDraftRecord.created_at.desc())
        .limit(1)
    ).first()


AGENT_DRAFTER = "agent"


def keep_agent_reply(
    session: Session, *, case: Case, agent: AgentCredential, body: object, now: datetime
) -> CaseDraftRecord:
    """An agent's reply to the customer of ``case``, kept for a person to send. Refused
    (nothing kept) when it claims a state no action of the case is in, as the provider
    reported it, or names an amount neither an action's nor one under review."""
    reply = str(text(body, "text", max_length=MAX_MESSAGE, multiline=True, required=True))
    facts, proposed = reply_facts(session, case)
    problems = check_reply(reply, actions=facts, proposed=proposed)
    if problems:
        raise InvalidInput(refused_reply(problems), field="text", code="reply_refused")
    record = CaseDraftRecord(
        id=uuid.uuid4(),
        shop_id=case.shop_id,
        case_id=case.id,
        drafter=AGENT_DRAFTER,
        next_step="answer",
        summary="",
        reply=reply,
        agent_id=agent.id,
        created_at=now,
    )
    session.add(record)
    session.flush()
    audit.record(
        session,
        shop_id=case.shop_id,
        kind="case.reply_drafted",
        actor=agent_actor(agent),
        case_id=case.id,
        # The draft's id, never its words: the chain holds no text meant for a customer.
        data={"draft_id": str(record.id)},
        now=now,
    )
    return record


def agent_replies(
    session: Session, case: Case, limit: int = 5
) -> list[tuple[CaseDraftRecord, AgentCredential]]:
    """The newest replies agents drafted for ``case``, each with the agent's credential."""
    rows = session.execute(
        select(CaseDraftRecord, AgentCredential)
        .join(AgentCredential, AgentCredential.id == CaseDraftRecord.agent_id)
        .where(
            CaseDraftRecord.shop_id == case.shop_id,
            CaseDraftRecord.case_id == case.id,
            AgentCredential.shop_id == case.shop_id,
        )
        .order_by(CaseDraftRecord.created_at.desc())
        .limit(limit)
    )
    return [(record, credential) for record, credential in rows]


def why_not_proposable(brief: CaseBrief, conversation: Conversation, order: str) -> str | None:
    if not brief.verified or conversation.customer_id is None:
        return "the drafter proposed for an unverified customer"
    if brief.proposal_open:
        return "a proposal already waits for a person"
    if order != brief.picked_order:
        return f"the drafter proposed for {order}, which the customer did not pick"
    if brief.unmatched:
        # The customer quoted what matches none of their orders: a person sorts it out.
        return f"the customer quoted {', '.join(brief.unmatched)}, which matches no order"
    return None


def hand_to_person(session: Session, *, case: Case, actor: Actor, now: datetime, why: str) -> None:
    """Put the case in the queue for a named person: the case's owner, else the one the
    shop's policy names for handed-over cases, else the shop's owner."""
    owner = (
        case.owner
        or current_policy(session, case.shop_id).handover_owner
        or _shop_owner(session, case.shop_id)
    )
    move_case(
        session,
        case,
        CaseStatus.NEEDS_ATTENTION,
        actor=actor,
        now=now,
        owner=owner,
        reason=said("a person is needed: %(why)s", why=why),
    )


_DRAFTABLE = ("refund", "customer_credit")


def _shop_owner(session: Session, shop_id: uuid.UUID) -> str:
    owner = session.scalars(
        select(StaffMember.user_id)
        .where(StaffMember.shop_id == shop_id, StaffMember.role == StaffRole.OWNER)
        .order_by(StaffMember.user_id)
        .limit(1)
    ).first()
    return owner or "the shop's owner"


def _shopify_connected(session: Session, shop: Shop) -> bool:
    return shop.uninstalled_at is None and session.get(ShopifyInstall, shop.id) is not None


def _orders(session: Session, shop_id: uuid.UUID, customer_id: uuid.UUID | None) -> list[Order]:
    if customer_id is None:
        return []
    return list(
        session.scalars(
            select(Order)
            .where(Order.shop_id == shop_id, Order.customer_id == customer_id)
            .order_by(Order.created_at.desc())
            .limit(10)
        )
    )


def _order_brief(order: Order) -> OrderBrief:
    return OrderBrief(
        name=order.name,
        currency=order.currency,
        total=order.total,
        placed_on=order.created_at.date().isoformat(),
        lines=tuple(
            LineBrief(str(line["id"]), str(line["title"]), int(line["quantity"]), int(line["paid"]))
            for line in order.lines
        ),
        delivered=order.delivered_at is not None,
        shipment=_shipment_brief(order),
    )


def _shipment_brief(order: Order) -> ShipmentBrief | None:
    """The newest shipment of our copy; an order copied without shipments (none reported
    yet, or copied before they were kept) is in transit once fulfilled, until delivered."""
    if not order.shipments:
        shipped = order.fulfilled_at is not None and order.delivered_at is None
        return ShipmentBrief("in_transit") if shipped else None
    newest = max(order.shipments, key=lambda shipment: shipment.get("shipped_at") or "")
    estimated = newest.get("estimated_delivery")
    return ShipmentBrief(
        status=str(newest["status"]),
        carrier=newest.get("carrier"),
        tracking_number=newest.get("tracking_number"),
        tracking_url=newest.get("tracking_url"),
        estimated_delivery=datetime.fromisoformat(estimated).date().isoformat()
        if estimated
        else None,
    )


def _actions(session: Session, case: Case) -> list[ActionBrief]:
    return [
        ActionBrief(
            kind=action.kind,
            amount=Money(action.amount, action.currency)
            if action.amount is not None and action.currency
            else None,
            status=action.status,
        )
        for action in session.scalars(
            select(Action).where(Action.case_id == case.id).order_by(Action.created_at)
        )
    ]

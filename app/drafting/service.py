"""Drafting a case from its conversation, and turning the draft into a proposal and a reply.

The sequence (the job in :mod:`app.drafting.jobs` runs it for the newest customer message):

1. :func:`brief_for` reads what the drafter may see: the conversation's messages, and
   only for a verified customer their orders, the order exactly linked
   (:mod:`app.conversations.linking`, from the customer's own words: an order or amount
   named only inside an instruction to the assistant counts for nothing), what the
   customer quoted that matches nothing, the case's actions and the customer's language;
   no transaction is held while the drafter runs;
2. the drafter answers (:mod:`app.drafting.drafters`) with facts as fields and its own
   words apart (:mod:`app.drafting.result`);
3. :func:`apply_draft`, in one transaction under the case's row lock, records the run
   (:class:`~app.drafting.models.CaseDraftRecord`, with the claim it stated), flags the
   case if a customer message tries to instruct the assistant
   (:mod:`app.drafting.steering`), then:
   - a proposed step becomes an exact proposal (:mod:`app.drafting.proposals` sets the
     amount from the order's paid lines), bound to the customer's claim as their own
     words bear it out (:mod:`app.drafting.claims`: the guard's ``within_claim`` blocks
     more), through the same :func:`~app.approvals.service.create_proposal` as staff's,
     unless the customer is unverified, a proposal is already open, or the step does not
     fit the facts; store credit or a discount for a customer Shopify does not hold names
     their Stripe account, linked by their verified email first when it is not yet;
   - "needs a person", or a step not proposed, puts the case in front of a named person;
   - Caseward words what the customer is told from the facts
     (:mod:`app.conversations.to_customer`: what was prepared or approved, with the
     amount it computed; which order or items; the shipment; the case's status; a
     person), after the drafter's own words if the deny-by-default check passes them
     (:func:`~app.conversations.free_text.check_free_text`, with the instructions as
     :class:`~app.conversations.free_text.Confidential`); refused words are kept on the
     run for staff, never sent; the reply is in the customer's language;
4. the caller commits, then queues the action when the shop's policy approved it.

An outside agent (the MCP ``draft_reply`` tool) drafts only a reply:
:func:`app.agents.replies.keep_agent_reply` checks it against the case's actions and open
proposals (:func:`reply_facts`), refuses it naming every claim that goes beyond them, and
otherwise keeps it as a drafting run marked with the agent's credential, for a person to
send. It is never sent by Caseward.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, replace
from datetime import datetime

from sqlalchemy import ColumnElement, and_, select
from sqlalchemy.orm import Session

from app import audit
from app.actors import DRAFTER, Actor
from app.approvals.service import ProposalResult, create_proposal
from app.cases.customer_link import link_customer
from app.cases.lifecycle import move_case
from app.cases.models import Case, CaseStatus, Customer, Order
from app.cases.proposals import Proposal, ProposalStatus
from app.connections.adapters import AdapterFactory
from app.conversations.free_text import check_free_text
from app.conversations.language import customer_locale, for_customer
from app.conversations.linking import Linking, link_order
from app.conversations.models import Author, Conversation, Message
from app.conversations.replies import ActionBrief
from app.conversations.service import add_reply, messages_of
from app.conversations.to_customer import (
    CHOICE_LABELS,
    Item,
    Shipment,
    approved_by_policy,
    ask_to_verify,
    ask_which_items,
    ask_which_order,
    case_status,
    chosen,
    looking_into_it,
    offer,
    offer_refund,
    offer_replacement_discount,
    offer_store_credit,
    prepared_for_review,
    reply_text,
    request_with_team,
    shipment_words,
    thanks,
    with_a_person,
)
from app.drafting.brief import (
    CaseBrief,
    LineBrief,
    MessageBrief,
    OrderBrief,
    ShipmentBrief,
)
from app.drafting.claims import coverage, grounded_lines
from app.drafting.drafters import Drafter, DraftRun
from app.drafting.models import CaseDraftRecord
from app.drafting.prompt import canary_for, confidential
from app.drafting.proposals import (
    TO_THE_CUSTOMERS_ACCOUNT,
    StepRefused,
    customer_account,
    draft_for,
)
from app.drafting.result import (
    CaseDraft,
    Claim,
    Fact,
    LinePick,
    NextStep,
    StepProposal,
    claim_dict,
    parse_step,
    step_dict,
)
from app.drafting.steering import instruction_sentences, own_texts, own_words
from app.errors import CasewardError, InvalidInput
from app.execution.evaluation import Draft
from app.execution.models import Action
from app.guard import ClaimCoverage, IdentityLevel, Verdict
from app.guard.policy import PolicyRules
from app.money import Money
from app.settings import Settings
from app.shopify.models import ShopifyInstall
from app.shops.models import Shop, StaffMember, StaffRole
from app.shops.service import current_policy
from app.words import Sentence, one_after_another, said
from integrations.provider import ActionKind, CustomerDirectory


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
    # An order or an amount named only inside an instruction to the assistant is not the
    # customer's: it neither picks an order nor stops one.
    texts = own_texts(m.body for m in messages if m.author == Author.CUSTOMER)
    linking = link_order(texts, orders, chosen) if verified else None
    actions = _actions(session, case)
    proposal_open = session.scalars(select(Proposal.id).where(_in_hand(case))).first() is not None
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
        locale=customer_locale(conversation.locale),
    )
    return brief, linking


@dataclass(frozen=True)
class CaseAtHand:
    """A case being drafted: the caller's transaction (holding the case's row lock), the
    shop, the case and the conversation it came from, the providers, settings and time."""

    session: Session
    shop: Shop
    case: Case
    conversation: Conversation
    adapters: AdapterFactory
    settings: Settings
    now: datetime

    def brief(self) -> CaseBrief:
        """What a drafter may see of the case as it stands now."""
        brief, _ = brief_for(
            self.session, shop=self.shop, case=self.case, conversation=self.conversation
        )
        return brief


def draft_now(at: CaseAtHand, drafter: Drafter) -> Drafted:
    """Brief, draft and apply in the caller's transaction: for a drafter that answers at
    once (the offline rules seeding the demo). The job keeps the model's call outside any
    transaction instead (:mod:`app.drafting.jobs`)."""
    brief = at.brief()
    return apply_draft(at, brief, drafter.run(brief))


def apply_fresh(at: CaseAtHand, run: DraftRun, *, reply_to_customer: bool = True) -> Drafted:
    """Apply a drafter's ``run`` on the facts as they are now: an approval or a refund may
    have landed while the drafter ran, so the brief is read again first."""
    return apply_draft(at, at.brief(), run, reply_to_customer=reply_to_customer)


def apply_draft(
    at: CaseAtHand, brief: CaseBrief, run: DraftRun, *, reply_to_customer: bool = True
) -> Drafted:
    """Record ``run`` and act on it (see the module docstring); without
    ``reply_to_customer`` (a helpdesk agent asked for the draft) the reply is returned as
    a suggestion, not sent. The caller holds the case's row lock and commits."""
    session, shop, case, now = at.session, at.shop, at.case, at.now
    draft = run.draft
    record = _record(shop, case, run, now)
    session.add(record)
    session.flush()
    if instruction_sentences(brief.customer_texts):
        flag_instruction_attempt(session, case=case, now=now)
    answer = _answer(at, brief, draft, offering=reply_to_customer)
    proposal, refusal = answer.proposal, answer.refusal
    if draft.step == NextStep.NEEDS_PERSON or refusal is not None:
        # Never the drafter's own words: the reason is sealed into the audit chain, which
        # erasure cannot blank, and a summary may quote the customer.
        why = refusal or "the drafter asked for one; its summary is on the case page"
        hand_to_person(session, case=case, actor=DRAFTER, now=now, why=why)
    check = check_free_text(
        draft.free_text, confidential=confidential(brief, canary_for(at.settings.secret_key))
    )
    if not check.passed:
        record.refused_text = draft.free_text
        refusal = "; ".join(
            filter(None, (refusal, f"the drafter's own words were refused: {check.reasons()}"))
        )
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
            "reply_refused": not check.passed,
            "failure": run.failure,
        },
        now=now,
    )
    ours = answer.said or [looking_into_it()]
    if not (check.passed and draft.free_text):
        ours = [thanks(), *ours]
    body = reply_text(draft.free_text if check.passed else "", ours, brief.locale)
    message = (
        add_reply(
            session,
            conversation=at.conversation,
            body=body,
            sentence=one_after_another(ours),
            actor=DRAFTER,
            now=now,
        )
        if reply_to_customer
        else None
    )
    return Drafted(record, proposal, message, body)


def _record(shop: Shop, case: Case, run: DraftRun, now: datetime) -> CaseDraftRecord:
    draft, usage = run.draft, run.usage
    record = CaseDraftRecord(
        id=uuid.uuid4(),
        shop_id=shop.id,
        case_id=case.id,
        drafter=run.drafter,
        model=run.model,
        next_step=draft.step.value,
        summary=draft.summary,
        failure=run.failure,
        input_tokens=usage.input_tokens if usage else 0,
        output_tokens=usage.output_tokens if usage else 0,
        cache_read_tokens=usage.cache_read_input_tokens if usage else 0,
        cache_write_tokens=usage.cache_creation_input_tokens if usage else 0,
        created_at=now,
    )
    if draft.claim is not None:
        record.claim = claim_dict(draft.claim)
    return record


@dataclass(frozen=True)
class _Answer:
    # Caseward's own sentences to the customer, from the facts.
    said: list[Sentence]
    proposal: ProposalResult | None = None
    # Why the drafted step was not proposed (the case goes to a person).
    refusal: str | None = None


def _answer(at: CaseAtHand, brief: CaseBrief, draft: CaseDraft, *, offering: bool) -> _Answer:
    """What Caseward says for ``draft``'s next step, in its own sentences from the facts,
    and the proposal the step became (or why not)."""
    step = draft.proposal
    if step is None:
        return _Answer(_facts_said(at.shop, brief, draft))
    offer = _offer(at, brief, step, draft.claim) if offering else None
    if offer is not None:
        return _Answer([offer])
    proposal, refusal = _propose(at, brief, step, draft.claim)
    if proposal is None:
        return _Answer([with_a_person(at.shop.name)], refusal=refusal)
    return _Answer([_proposed_words(at.shop, brief, step, proposal)], proposal)


def _facts_said(shop: Shop, brief: CaseBrief, draft: CaseDraft) -> list[Sentence]:
    """Caseward's sentences for a step that proposes nothing."""
    picked = brief.picked()
    match draft.step:
        case NextStep.NEEDS_PERSON:
            return [with_a_person(shop.name)]
        case _ if not brief.verified:
            return [ask_to_verify()]
        case NextStep.ASK_WHICH_ITEMS if picked is not None:
            return [ask_which_items(picked.name)]
        case NextStep.ASK_WHICH_ORDER | NextStep.ASK_WHICH_ITEMS if brief.orders:
            return [ask_which_order([order.name for order in brief.orders])]
        case NextStep.ANSWER:
            return [sentence for fact in draft.tell if (sentence := _fact(brief, fact))]
    return []


def _fact(brief: CaseBrief, fact: Fact) -> Sentence | None:
    """``fact`` of the case, in Caseward's words; None when the case has nothing to say."""
    if fact == Fact.CASE_STATUS:
        status = case_status([(a.kind, a.status, a.amount) for a in brief.actions])
        return status or (request_with_team() if brief.proposal_open else None)
    order = brief.picked()
    if order is None:
        return None
    shipment = order.shipment
    return shipment_words(
        Shipment(
            order=order.name,
            shipped=shipment is not None,
            delivered=order.delivered,
            carrier=shipment.carrier if shipment else None,
            tracking_number=shipment.tracking_number if shipment else None,
            tracking_url=shipment.tracking_url if shipment else None,
            estimated_delivery=shipment.estimated_delivery if shipment else None,
        )
    )


def _proposed_words(
    shop: Shop, brief: CaseBrief, step: StepProposal, result: ProposalResult
) -> Sentence:
    """What the customer is told of a drafted proposal: prepared for review, or approved by
    the shop's policy and on its way to the provider, with the amount Caseward computed."""
    proposal = result.proposal
    amount = Money(proposal.amount or 0, proposal.currency or "")
    order = brief.picked()
    titles = {line.id: (line.title, line.quantity) for line in order.lines} if order else {}
    picks = step.lines or tuple(LinePick(line, of) for line, (_, of) in titles.items())
    items = [
        Item(titles[pick.line_id][0], pick.quantity) for pick in picks if pick.line_id in titles
    ]
    if result.action is not None:
        return approved_by_policy(proposal.kind, amount, items, step.order, shop_name=shop.name)
    return prepared_for_review(proposal.kind, amount, items, step.order)


def flag_instruction_attempt(session: Session, *, case: Case, now: datetime) -> None:
    """Flag ``case`` for staff: a customer message tried to instruct the assistant. Its
    words stay in the conversation; the audit says only that it happened."""
    if case.instruction_attempt_at is not None:
        return
    case.instruction_attempt_at = now
    audit.record(
        session,
        shop_id=case.shop_id,
        kind="case.instruction_attempt_flagged",
        actor=DRAFTER,
        case_id=case.id,
        data={},
        now=now,
    )


def _exact_draft(at: CaseAtHand, brief: CaseBrief, step: StepProposal) -> Draft:
    """The exact proposal ``step`` names for this conversation's customer; raises
    :class:`StepRefused` saying why there is none."""
    session, shop, conversation = at.session, at.shop, at.conversation
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
        _link_at_stripe(session, shop=shop, case=at.case, adapters=at.adapters, now=at.now)
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
    at: CaseAtHand, brief: CaseBrief, step: StepProposal, claim: Claim | None
) -> tuple[ProposalResult | None, str | None]:
    """``step`` as a proposal through the same checks as anyone's, bound to the customer's
    claim as their own words bear it out (the guard's ``within_claim``), or why not."""
    try:
        draft = replace(_exact_draft(at, brief, step), claim=_coverage(brief, step, claim))
        result = create_proposal(
            at.session,
            shop=at.shop,
            case=at.case,
            actor=DRAFTER,
            draft=draft,
            adapter=at.adapters(at.session, at.shop.id, draft.provider),
            settings=at.settings,
            now=at.now,
        )
    except StepRefused as refused:
        return None, str(refused)
    except CasewardError as error:
        return None, error.message
    if result.proposal.status == ProposalStatus.BLOCKED:
        # Kept for staff to read; the customer hears nothing about it until a person looks.
        reasons = "; ".join(Verdict.from_dict(result.proposal.verdict).reasons)
        return None, f"the checks blocked the proposal: {reasons}"
    return result, None


def _coverage(brief: CaseBrief, step: StepProposal, claim: Claim | None) -> ClaimCoverage:
    """The customer's claim (the drafter's, as far as their own words bear it out; with
    none, what their words name) beside what ``step`` proposes. The caller checked that
    ``step`` is for the picked order."""
    order = brief.picked()
    if order is None:
        raise StepRefused("the drafter proposed for an order the customer did not pick")
    if claim is not None and claim.order != step.order:
        raise StepRefused(f"the claim is on {claim.order}, the proposal on {step.order}")
    grounded = grounded_lines(order, own_words(brief.customer_texts), claim)
    return coverage(order, grounded, step)


def _offer(
    at: CaseAtHand, brief: CaseBrief, step: StepProposal, claim: Claim | None
) -> Sentence | None:
    """Where the shop's policy offers more than the refund asked for (store credit with
    its bonus, a discount on a replacement): the offer to put to the customer, the step
    kept until they choose (:func:`choose_offer`); else None. A step beyond the customer's
    claim is never offered: it goes to the guard, which blocks it."""
    if step.kind != ActionKind.REFUND:
        return None
    choices = _choices(current_policy(at.session, at.shop.id))
    if len(choices) < 2:
        return None
    try:
        if _coverage(brief, step, claim).beyond():
            return None
        priced = [
            (offer, _exact_draft(at, brief, replace(step, kind=offer.kind))) for offer in choices
        ]
    except StepRefused:
        return None
    options = []
    for offered, draft in priced:
        amount = Money(draft.amount or 0, draft.currency or "")
        if offered.kind == ActionKind.CUSTOMER_CREDIT:
            options.append(offer_store_credit(amount, shop_name=at.shop.name))
        elif offered.kind == ActionKind.DISCOUNT:
            options.append(offer_replacement_discount(amount))
        else:
            options.append(offer_refund(amount))
    at.conversation.pending_step = step_dict(step)
    return offer(options)


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
    at = CaseAtHand(session, shop, case, conversation, adapters, settings, now)
    proposal, refusal = _propose(at, at.brief(), step, claim=None)
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
        reply = with_a_person(shop.name)
    else:
        prepared = Money(proposal.proposal.amount or 0, proposal.proposal.currency or "")
        reply = chosen(proposal.proposal.kind, prepared)
    add_reply(
        session,
        conversation=conversation,
        body=for_customer(reply, conversation.locale),
        sentence=reply,
        actor=DRAFTER,
        now=now,
    )
    return proposal


@dataclass(frozen=True)
class Offer:
    id: str
    kind: ActionKind
    label: Sentence


def offers(session: Session, conversation: Conversation) -> list[Offer]:
    """What the customer may choose between now (empty when nothing is on offer)."""
    if conversation.pending_step is None:
        return []
    return _choices(current_policy(session, conversation.shop_id))


def _choices(policy: PolicyRules) -> list[Offer]:
    """The refund, and what else the shop's policy offers instead of it."""
    kinds = {"refund": ActionKind.REFUND}
    enabled = policy.enabled_kinds
    if policy.store_credit_bonus_percent is not None and ActionKind.CUSTOMER_CREDIT in enabled:
        kinds["store_credit"] = ActionKind.CUSTOMER_CREDIT
    if policy.replacement_discount and ActionKind.DISCOUNT in enabled:
        kinds["replacement_discount"] = ActionKind.DISCOUNT
    return [Offer(offer_id, kind, CHOICE_LABELS[offer_id]) for offer_id, kind in kinds.items()]


def _in_hand(case: Case) -> ColumnElement[bool]:
    """The case's proposals waiting for a person or approved with their action under way:
    the drafter proposes nothing beside one, and a reply may state their amounts."""
    return and_(
        Proposal.shop_id == case.shop_id,
        Proposal.case_id == case.id,
        Proposal.status.in_(ProposalStatus.IN_HAND),
    )


def proposal_in_hand(session: Session, case: Case) -> Proposal | None:
    """The case's newest proposal in hand (:func:`_in_hand`)."""
    return session.scalars(
        select(Proposal).where(_in_hand(case)).order_by(Proposal.created_at.desc()).limit(1)
    ).first()


def reply_facts(session: Session, case: Case) -> tuple[list[ActionBrief], list[Money]]:
    """What a reply about ``case`` may state: its actions as the provider reported them,
    and the amounts of its proposals under review or approved."""
    proposed = [
        Money(amount, currency)
        for amount, currency in session.execute(
            select(Proposal.amount, Proposal.currency).where(_in_hand(case))
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

"""The offline drafter: rules that draft a case when no Claude key is set.

Deterministic, so the demo and the tests read the same every time. It reads only the
customer's own words (:func:`app.drafting.steering.own_words`: their sentences less those
that try to instruct the assistant), in the chat's seven languages. The rules, in order:

1. the customer asks for a person, or the conversation already wants one: a person;
2. the customer is not verified: ask them to verify (no order is in their brief);
3. a refund or credit request (damaged, torn, wrong item, money back, ...): which order
   (exactly picked, else ask which); the claim is the lines the customer's words name
   with the number they say (:func:`app.drafting.claims.claim_from_words`), none named:
   ask which items (never the whole order by default); then a proposal of exactly the
   claim, unless one already waits for a person;
4. where is my order: Caseward tells the order's shipment;
5. anything else: a person.

Like any drafter it states facts only as fields; its own words (``free_text``) only
acknowledge or apologise, in the customer's language, and meet the same check as
Claude's.
"""

from __future__ import annotations

import re

from app.conversations.language import for_customer
from app.drafting.brief import CaseBrief
from app.drafting.claims import claim_from_words
from app.drafting.result import CaseDraft, Fact, LinePick, NextStep, StepProposal
from app.drafting.steering import instruction_sentences, own_words
from app.words import Sentence, said
from integrations.provider import ActionKind

_PERSON = re.compile(
    r"\b(?:human|real person|a person|someone real|agent|talk to (?:someone|somebody|a)"
    r"|une personne|un humain|conseill\w+|einen? (?:menschen|mitarbeiter\w*)|una persona"
    r"|un humano|un operatore|een mens|een medewerker)\b|担当者|人間|オペレーター",
)
_REFUND = re.compile(
    r"\b(?:refund|money back|reimburs\w*|return|damaged|broken|broke|torn|tore|tear|ripped"
    r"|rip|defective|faulty|stain\w*|holes?|frayed?|fraying|burn\w*|crack\w*|snapped"
    r"|split|faded|shrunk|came apart|coming apart|came off|fell off|scorch\w*|pulled"
    r"|wrong (?:item|size|colou?r)|never (?:arrived|came)|missing"
    r"|tach\w*|trou\w*|fleck\w*|loch|löcher|gerissen|riss|mancha\w*|agujero\w*"
    r"|macchi\w*|buco|buchi|vlek\w*|gat|gaten|scheur\w*"
    r"|rembours\w*|abîmé\w*|déchiré\w*|cassé\w*|troué\w*|défectueu\w*"
    r"|erstatt\w*|rückerstatt\w*|geld zurück|beschädigt\w*|kaputt\w*|zerrissen\w*|defekt\w*"
    r"|reembols\w*|devol\w*|dañad\w*|rot[oa]s?|roto|desgarrad\w*|defectuos\w*"
    r"|rimbors\w*|danneggiat\w*|rott[oaie]|strappat\w*|difettos\w*"
    r"|terugbeta\w*|geld terug|beschadigd\w*|kapot\w*|gescheurd\w*)\b"
    r"|返金|払い戻し|破れ|壊れ|破損|不良|傷|汚れ|シミ|穴|割れ",
)
_CREDIT = re.compile(
    r"\b(?:store credit|credit instead|as credit|avoir|bon d'achat|guthaben|gutschein"
    r"|crédito de tienda|credito|tegoed)\b|ストアクレジット|ポイントで",
)
_WHERE = re.compile(
    r"\b(?:where is|where's|track(?:ing)?|shipp(?:ed|ing)|deliver(?:y|ed)?|when will .* arrive"
    r"|où est|suivi|livraison|wo ist|sendungsverfolgung|lieferung|dónde está|seguimiento"
    r"|envío|dov'è|dove si trova|spedizione|waar is|bezorging|track en trace)\b"
    r"|どこ|追跡|配送|届かない|いつ届",
)


class OfflineDrafter:
    name = "offline"

    def draft(self, brief: CaseBrief) -> CaseDraft:
        texts = brief.customer_texts[-3:]
        words = own_words(texts)
        steering = bool(instruction_sentences(texts))
        if brief.wants_person or _PERSON.search(words):
            return _person(brief, "The customer asked for a person.")
        if not brief.verified:
            return CaseDraft(
                summary="The customer is not verified yet; no order details were shown.",
                step=NextStep.ASK_TO_VERIFY,
                free_text=_words(brief, said("I can help with that.")),
            )
        if _REFUND.search(words) or _CREDIT.search(words):
            draft = _money_request(brief, words, credit=bool(_CREDIT.search(words)))
        elif _WHERE.search(words):
            draft = _where_is(brief)
        else:
            draft = _person(brief, "The request is not one the rules recognise.")
        if steering:
            return CaseDraft(
                summary=f"{draft.summary} A message tries to instruct the assistant; it was "
                "read as the customer's words only.",
                step=draft.step,
                free_text=draft.free_text,
                claim=draft.claim,
                proposal=draft.proposal,
                needs_person_reason=draft.needs_person_reason,
                tell=draft.tell,
            )
        return draft


def _words(brief: CaseBrief, sentence: Sentence) -> str:
    return for_customer(sentence, brief.locale)


def _person(brief: CaseBrief, why: str) -> CaseDraft:
    return CaseDraft(
        summary=why,
        step=NextStep.NEEDS_PERSON,
        free_text=_words(brief, said("Thanks for your message.")),
        needs_person_reason=why,
    )


def _order_unclear(brief: CaseBrief) -> CaseDraft:
    if not brief.orders:
        return _person(brief, "The customer asks for money back but has no order on file.")
    names = ", ".join(o.name for o in brief.orders)
    summary = f"Refund asked for; the order is not clear (orders: {names})."
    if brief.unmatched:
        summary += f" Quoted but matching none: {', '.join(brief.unmatched)}."
    return CaseDraft(
        summary=summary,
        step=NextStep.ASK_WHICH_ORDER,
        free_text=_words(brief, said("I'm sorry to hear that.")),
    )


def _money_request(brief: CaseBrief, words: str, *, credit: bool) -> CaseDraft:
    order = brief.picked()
    if order is None:
        return _order_unclear(brief)
    if brief.unmatched:
        return _person(
            brief,
            f"The customer quoted {', '.join(brief.unmatched)}, which matches none of "
            f"their orders; {order.name} is theirs.",
        )
    if brief.proposal_open:
        return CaseDraft(
            summary=f"A proposal for {order.name} already waits for a person.",
            step=NextStep.ANSWER,
            free_text=_words(brief, said("Thanks for your message.")),
            tell=(Fact.CASE_STATUS,),
        )
    kind = ActionKind.CUSTOMER_CREDIT if credit else ActionKind.REFUND
    if kind.value not in brief.kinds_allowed:
        return _person(brief, f"The shop does not let the drafter propose a {kind.value}.")
    what = "store credit" if credit else "a refund"
    claim = claim_from_words(order, words, why=f"the customer asks for {what}")
    if claim is None:
        return CaseDraft(
            summary=f"The customer asks for {what} from {order.name} without naming the items.",
            step=NextStep.ASK_WHICH_ITEMS,
            free_text=_words(brief, said("I'm sorry to hear that.")),
        )
    titles = {line.id: line.title for line in order.lines}
    described = "; ".join(f"{line.quantity} x {titles[line.line_id]}" for line in claim.lines)
    return CaseDraft(
        summary=f"The customer asks for {what} for {described} from {order.name}.",
        step=NextStep.PROPOSE,
        claim=claim,
        proposal=StepProposal(
            kind=kind,
            order=order.name,
            lines=tuple(LinePick(line.line_id, line.quantity) for line in claim.lines),
            reason=f"Customer asks for {what} for {described} from {order.name}.",
        ),
        free_text=_words(brief, said("I'm sorry to hear that.")),
    )


def _where_is(brief: CaseBrief) -> CaseDraft:
    order = brief.picked()
    if order is None:
        return CaseDraft(
            summary="Asks where an order is; which one is not clear.",
            step=NextStep.ASK_WHICH_ORDER,
            free_text=_words(brief, said("Happy to help.")),
        )
    return CaseDraft(
        summary=f"Asks where {order.name} is.",
        step=NextStep.ANSWER,
        free_text=_words(brief, said("Happy to help.")),
        tell=(Fact.SHIPMENT,),
    )

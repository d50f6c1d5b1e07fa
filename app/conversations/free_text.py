"""The check on a drafter's own words to a customer: deny by default.

Every fact a customer is told (money, status, amounts, dates, what happens next) is
Caseward's own sentence (:mod:`app.conversations.to_customer`). The drafter's free text
may only acknowledge, ask, apologise or explain a non-money matter, and this check is
what holds it there: it does not look for lies, it refuses every sentence that touches
what free text may not speak of, in any tense, so a false claim has no words left to be
written in. A sentence is refused when, in any of the seven languages the chat speaks
(the union of their word lists, whatever the conversation's language), it:

- names a number, an amount, a currency, a date, a day or a time to wait;
- speaks of money, a payment, a card, a bank or an account's balance;
- speaks of a refund, credit, discount, cancellation, subscription, return, exchange or
  replacement, in any form (a noun is enough: free text has no business with them);
- says that something is done, sorted, handled, started, approved, sent, processed,
  confirmed or on its way, or promises what will happen ("will", "'ll", "soon");
- speaks of an order's shipment or delivery;
- speaks of the assistant's instructions, rules, tools or prompt;
- is written in a script none of those languages uses, or holds a link, an address,
  markup or a run of characters that may encode something.

Words are read in the normal form of :mod:`app.conversations.text_units` (fullwidth,
invisible characters and lookalike letters undone), squeezed ("re-fund", "r e f u n d"
read "refund"), and by stem, so inflections and German compounds are found; a money
word misspelt by one letter ("refnud", "procesed") is read as the word. The same is
asked of the text read backwards, in ROT13, and of any base64 or hex in it.

And nothing of the instructions may leak (:class:`Confidential`): a reply holding the
canary planted in the instructions, or any run of :data:`SHARED_WORDS` words (or of
:data:`SHARED_LETTERS` letters, however spaced) that also runs in the instructions, the
tool's schema or the shop's unpublished policy (read directly, squeezed, backwards, in
ROT13 or decoded), is refused whole. A paraphrase shares no run: it is refused by what it
speaks of (the assistant's instructions, its setup, what it may do).

A refused text is never shown in part: the customer gets Caseward's own sentences only,
and staff see the refused text and why on the case.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import re
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import cache, lru_cache
from typing import Any

from rapidfuzz.distance import OSA

from app.conversations.text_units import normal, sentences, squeezed
from app.words import Sentence, said

# Words in a row shared with the instructions that make a reply a leak, and letters in a
# row (spaces and punctuation left out: about seven words).
SHARED_WORDS = 5
SHARED_LETTERS = 36


@dataclass(frozen=True)
class Confidential:
    """What a reply must never repeat: the drafter's instructions, its tool's schema, the
    shop's unpublished policy text, and the canary planted in the instructions."""

    texts: tuple[str, ...]
    canary: str


@dataclass(frozen=True)
class RefusedSentence:
    sentence: str  # as the drafter wrote it
    reason: Sentence  # why, for staff


@dataclass(frozen=True)
class FreeTextCheck:
    text: str  # the free text as given
    refused: tuple[RefusedSentence, ...]

    @property
    def passed(self) -> bool:
        return not self.refused

    def reasons(self) -> str:
        """Why the text was refused, each reason once, in English and without the words
        themselves: they are the drafter's and may quote the customer, so they are kept
        apart, where erasure reaches them (``CaseDraftRecord.refused_text``)."""
        return "; ".join(dict.fromkeys(str(refused.reason) for refused in self.refused))


def check_free_text(text: str, *, confidential: Confidential | None = None) -> FreeTextCheck:
    """Each sentence of ``text`` that free text may not say, with why (see the module
    docstring); a leak of ``confidential`` refuses the whole text."""
    refused: list[RefusedSentence] = []
    if confidential is not None and _leaks(text, confidential):
        refused.append(
            RefusedSentence(text, said("it repeats the assistant's instructions or their canary"))
        )
    for sentence in sentences(text):
        why = why_refused(sentence)
        if why is not None:
            refused.append(RefusedSentence(sentence, why))
    return FreeTextCheck(text, tuple(refused))


def why_refused(sentence: str) -> Sentence | None:
    """Why free text may not say ``sentence``; None when it may."""
    if _foreign_script(sentence):
        return said("it is written in a script the check cannot read")
    if _CODE_LIKE.search(sentence):
        return said("it holds a link, an address, markup or encoded text")
    plain = normal(sentence)
    if any(char.isdigit() for char in _MEASURES.sub(" ", plain)) or _NUMBER_WORDS.search(plain):
        return said("it names a number")
    # A question asserts nothing about a parcel or a time ("did it come in its packaging?",
    # "how can I help today?"); an apology may say back how the item arrived.
    asking = _QUESTION.search(sentence.strip()) is not None
    sorry = _APOLOGY.search(plain) is not None
    plain = _PHRASES.sub(" ", plain)
    for view in _views(plain):
        for topic, (pattern, reason) in _TOPICS.items():
            if asking and topic in (_Topic.SHIPMENT, _Topic.TIME):
                continue
            seen = _SAID_BACK.sub(" ", view) if sorry and topic == _Topic.SHIPMENT else view
            if pattern.search(seen):
                return reason
        if _misspelt_money_word(view):
            return _MONEY_REASON
    return None


class _Topic(StrEnum):
    MONEY = "money"
    CHANGE = "change"
    DONE = "done"
    SHIPMENT = "shipment"
    TIME = "time"
    INSTRUCTIONS = "instructions"


_QUESTION = re.compile("(?:[?\uff1f]|\u304b[\u3002.]?)$")
_APOLOGY = re.compile(
    r"\b(?:sorry|apologi[sz]e|apologies|désolée?s?|navrée?s?|excuse|leid|entschuldig\w*"
    r"|lamento|lo siento|sentimos|siento|dispiace|scus\w*|spijt|excuses)\b|申し訳|すみません"
    r"|ごめん"
)
# How the item arrived, said back to the customer in an apology ("sorry it arrived torn").
_SAID_BACK = re.compile(r"\barriv\w*|\bcame\b|届い")
# A measurement names a number that is no amount ("wash at 40°C", "85 cm long").
_MEASURES = re.compile(
    r"\d+(?:[.,]\d+)?\s?(?:°\s?[cf]?|cm|mm|kg|ml|inch(?:es)?|degrees?|grad|grados|gradi|graden)\b"
)


# ------------------------------------------------------------------ word lists


def _stems(*stems: str) -> str:
    """Words starting with one of ``stems`` (their inflections included)."""
    return r"\b(?:" + "|".join(stems) + r")\w*"


def _words(*words: str) -> str:
    """Exactly one of ``words`` (or phrases)."""
    return r"\b(?:" + "|".join(words) + r")\b"


def _within(*stems: str) -> str:
    """``stems`` anywhere in a word: German compounds, and Japanese, which has no spaces."""
    return "(?:" + "|".join(stems) + ")"


_MONEY_REASON = said("it speaks of money, a payment or an amount")
_NUMBER_WORDS = re.compile(
    _words(
        "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen",
        "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety", "hundred",
        "thousand", "half", "vingt", "trente", "quarante", "cinquante", "soixante", "cent",
        "zwanzig", "dreißig", "vierzig", "fünfzig", "hundert", "tausend", "veinte", "treinta",
        "cuarenta", "cincuenta", "cien", "venti", "trenta", "quaranta", "cinquanta", "cento",
        "twintig", "dertig", "veertig", "vijftig", "honderd", "duizend",
    )
    + "|[〇一二三四五六七八九十百千万]+(?:円|日|個|枚|点|件|つ|週|ヶ月|か月|カ月|時間|%|割)"
)  # fmt: skip

_TOPICS: dict[_Topic, tuple[re.Pattern[str], Sentence]] = dict(
    zip(
        _Topic,
        ((re.compile("|".join(patterns)), reason) for patterns, reason in (
        (
            [
                r"[$€£¥₩₹¢]",
                _words(
                    "usd", "eur", "gbp", "jpy", "cad", "aud", "chf", "dollars?", "euros?",
                    "pounds?", "yen", "cents?", "bucks?", "quid", "pennies", "penny",
                    "centimes?", "céntimos?", "centesimi", "dólar(?:es)?",
                ),
                _stems(
                    "refund", "reimburs", "repay", "repaid", "money", "cash", "pay", "paid",
                    "charg", "cards?\\b", "visa", "mastercard", "amex", "paypal", "klarna",
                    "afterpay", "bank", "credit", "debit", "balance", "statement",
                    "transaction", "transfer", "deposit", "wallet", "invoice", "receipt",
                    "price", "cost", "funds?\\b", "fees?\\b", "bill", "owe", "sums?\\b",
                    "totals?\\b", "compensat", "goodwill", "chargeback", "dispute",
                    "revers(?:al|ed|e)\\b", "waive", "void", "percent",
                ),
                _words(
                    "the amount", "full amount", "total amount", "same amount", "that amount",
                    "this amount", "in full", "for free", "cobro", "cobrad[oa]", "cobrar",
                    "free of charge", "at no (?:extra )?cost",
                    "on the house", "on us", "make (?:it|this|things) right",
                    "made (?:it|this|things) right", "money back", "every penny",
                ),
                # French, German, Spanish, Italian, Dutch.
                _stems(
                    "rembours", "argent", "paiement", "pay[ée]", "carte", "banque", "cr[ée]dit",
                    "virement", "prix", "montant", "somme\\b", "frais", "gratuit", "offert",
                    "dédommag", "geste commercial", "bon d'achat", "solde", "compte bancaire",
                    "geld", "zahl", "bezahl", "überwies", "überweis", "karte", "konto", "gutschr",
                    "gutgeschr", "guthaben", "betrag", "summe", "preis", "kosten", "gebühr",
                    "kostenlos", "gratis", "entschädig", "rückbuch", "reembols", "dinero",
                    "pag(?:o|os|ar|ad|am|at|ué)\\b", "tarjeta", "banco", "saldo", "importe",
                    "monto", "precio",
                    "compens", "rimbors", "denaro", "soldi", "carta di credito", "banca",
                    "accredit", "importo", "prezzo", "costo", "risarc", "terugbeta",
                    "terugstort", "betal", "kaart", "rekening", "tegoed", "krediet",
                    "gecrediteerd", "bedrag", "prijs", "vergoed",
                ),
                _within("erstatt", "zahlung", "gutschrift", "rückzahl", "auszahl"),
                _within(
                    "返金", "払い戻", "払戻", "返還", "入金", "送金", "振込", "振り込", "支払",
                    "決済", "代金", "料金", "金額", "お金", "円", "ドル", "ユーロ", "カード",
                    "銀行", "口座", "クレジット", "ポイント", "無料", "補償", "退款", "退钱",
                    "付款", "银行",
                ),
            ],
            _MONEY_REASON,
        ),
        (
            [
                _stems(
                    "discount", "coupon", "voucher", "promo", "gift card", "store credit",
                    "cancel", "annul", "terminat", "subscri", "renew", "upgrad", "downgrad",
                    "paus(?:e|ed|ing)\\b",
                    "replac", "exchang", "swap", "return", "reship", "resend", "re-send",
                    "reorder", "remplac", "échang", "renvo", "annul", "résili", "abonn",
                    "réduction", "remise", "rabais", "code promo", "rabatt", "nachlass",
                    "gutschein", "storn", "kündig", "abos?\\b", "umtausch", "ersatz", "austausch",
                    "descuento", "cupón", "cupon", "vales\\b", "vale de compra", "anul", "suscrip",
                    "reemplaz",
                    "sustitu", "devol", "devuel", "sconto", "buono", "annull", "disdett",
                    "abbonament", "sostitu", "cambio", "reso", "korting", "waardebon",
                    "annuleer", "geannuleerd", "opzeg", "abonnement", "vervang", "omruil",
                    "retour",
                ),
                _within(
                    "割引", "値引", "クーポン", "ギフト", "キャンセル", "取り消", "取消",
                    "解約", "定期", "交換", "返品", "再送", "代替", "変更",
                ),
            ],
            said("it speaks of a refund, credit, discount, cancellation or change"),
        ),
        (
            [
                _words(
                    "done", "sorted", r"taken care(?: of)?",
                    r"take care of (?:it|this|that|everything|the)\w*", "handled",
                    "dealt with", "resolved", "fixed", "all set", "good to go",
                    "squared away", "settled", "went through", "gone through",
                    "go through", "put through", "pushed through", "went ahead",
                    "gone ahead", "go ahead", "went out", "gone out", "sent", "sending",
                    "on (?:its|the|their) way", "underway", "under way", "in progress",
                    "in motion", "in the works", "on it", "consider it", "covered",
                    "you're covered", "sorted out", "straightened out",
                    "nothing (?:left|more|else) to do",
                    "no need to (?:wait|worry|do)", "back (?:on|in|to) your", "back to you",
                    "show(?:s|ed)? up", "reflect(?:ed|s)?", "land(?:s|ed)?",
                    "hit your", "arranged", "organi[sz]ed", "booked", "scheduled", "queued",
                    "pending", "success(?:ful(?:ly)?)?", "complete", "completed", "finished",
                    "wrapped up", "green light", r"green-?lit", "thumbs up", "go-ahead",
                    r"(?:got|given) the (?:nod|ok|okay)",
                ),
                _stems(
                    "process(?:ed|ing)\\b", "approv", "authori", "grant", "issu(?:ed|ing)",
                    "initiat",
                    "submit", "confirmed", "execut", "finaliz", "finalis",
                    "trait[ée]", "effectu", "accept(?:ed|ance)", "agreed", "honou?red", "arreglad",
                    "addebit", "prélev", "abbuch", "afschrijv", "réglé", "c'est fait",
                    "pris en charge",
                    "envoyé", "en cours", "en route", "en chemin", "terminé", "approuv",
                    "validé", "bearbeit", "erledigt", "veranlass", "genehmig", "freigegeb",
                    "bestätigt", "abgeschloss", "unterwegs", "procesad", "tramitad",
                    "aprobad", "autorizad", "confirmad", "completad", "listo", "está hecho",
                    "ya está", "resuelt", "solucionad", "elaborat", "approvat", "autorizzat",
                    "confermat", "è fatto", "risolt", "sistemat", "verwerkt", "goedgekeurd",
                    "bevestigd",
                    "afgehandeld", "geregeld", "opgelost", "klaar",
                ),
                _within(
                    "処理", "完了", "承認", "手続", "対応済", "済み", "済ませ", "済んで",
                    "実行", "確定", "手配", "已处理",
                ),
            ],
            said("it says that something was done, started, approved or sent"),
        ),
        (
            [
                _stems(
                    "ship", "deliver", "dispatch", "transit", "track", "fulfil", "arriv",
                    "courier", "carrier", "parcel", "packag", "postage", "warehouse",
                    "customs", "shipping label", "return label", "picked up", "pack(?:ed|ing)\\b",
                    "right now", "out for delivery",
                    "in the (?:mail|post)",
                    "expédi", "livr", "colis", "achemin", "versand", "versend", "verschick",
                    "liefer", "zugestellt", "zustell", "paket", "sendung", "enviad", "envío",
                    "envio", "despach",
                    "entreg", "paquete", "en camino", "de camino", "spedi", "consegn",
                    "pacco", "in arrivo", "in viaggio", "verzond", "verzend", "verstuur",
                    "bezorg", "gelever", "levering", "onderweg", "pakket",
                ),
                _words(
                    "lost", "usps", "ups", "fedex", "dhl", "dpd", "gls", "hermes",
                    "royal mail", "canada post", "postnl", "colissimo", "la poste", "correos",
                    "deutsche post", "yamato", "sagawa", "japan post",
                ),
                _within(
                    "発送", "配送", "出荷", "配達", "届", "到着", "追跡", "荷物", "郵便", "宅配",
                    "佐川", "ヤマト",
                ),
            ],
            said("it speaks of an order's shipment or delivery"),
        ),
        (
            [
                _words(
                    "will", "won't", r"\w+'ll", "shall", "going to", "gonna", "soon",
                    "shortly", "today", "tonight", "tomorrow", "yesterday", "morning",
                    "afternoon", "evening", r"weeks?", "weekend", r"months?", r"years?",
                    r"days?", r"hours?", r"minutes?", "business day", r"\w+days", "monday",
                    "tuesday",
                    "wednesday", "thursday", "friday", "saturday", "sunday",
                    r"(?:month|week|year)\w*",
                    "daily", "annual(?:ly)?",
                    "january", "february", "march", "april", "june", "july", "august",
                    "september", "october", "november", "december", "asap", "right away",
                    "immediately", "promptly", "within", "next", "later", "before long",
                    "any (?:minute|moment|day|time) now", r"in a (?:bit|moment|while|jiffy)",
                    "instantly", "at once", "sera", "serez", "seront", "recevrez", "recevra",
                    "verrez", "verra", "aurez", "aura", "arrivera", "va (?:être|recevoir|arriver)",
                    "vont", "allez (?:recevoir|voir)", "bientôt", "demain", "aujourd'hui", "hier",
                    "jours?", "semaines?",
                    "mois", "heures?", "ouvrés", "prochaine?", "d'ici", "sous peu", "bald",
                    "morgen", "heute", "gestern", r"tage?n?",
                    r"wochen?", r"monate?n?", r"stunden?", r"werktage?n?", r"\w+tag",
                    r"nächste[nrs]?", "demnächst", "innerhalb", "erhalten", "recibirá",
                    "recibirás", "verá", "verás", "será", "va a", "van a", "pronto", "mañana",
                    "hoy", "ayer", r"días?", r"semanas?", "meses", "el mes", "este mes", r"horas?",
                    "hábiles",
                    r"próxim[oa]s?", "dentro de", "riceverà", "riceverai", "vedrà", "sarà",
                    "arriverà", "presto", "domani", "oggi", "ieri", "giorni", "settimana",
                    "mese", "ore", "lavorativi", r"prossim[oaie]", "entro", "ontvangt",
                    "zult", "zal", "zullen", "binnenkort", "vandaag", "gisteren",
                    "dagen", r"maand(?:en)?", "uur", "werkdagen", "volgende", "binnen",
                    r"lunedì|martedì|mercoledì|giovedì|venerdì|sabato|domenica",
                    r"lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche",
                    r"lunes|martes|miércoles|jueves|viernes|sábado|domingo",
                    r"maandag|dinsdag|woensdag|donderdag|vrijdag|zaterdag|zondag",
                ),
                _within(
                    "予定", "明日", "今日", "本日", "昨日", "以内", "営業日", "週間", "来週",
                    "今週", "曜日", "月", "時間", "すぐ", "まもなく", "間もなく", "後ほど",
                    "近日", "のちほど",
                ),
            ],
            said("it speaks of when something will happen or what comes next"),
        ),
        (
            [
                _stems(
                    "instruction", "prompt", "system", "guideline", "polic", "rule",
                    "propos", "draft", "caseward", "schema", "json", "claude", "anthropic",
                    "canary", "verif", "identity", "consigne", "règle", "anweisung", "regel",
                    "instruccion", "regla", "istruzion", "regol[ae]\\b", "propon", "vorschl",
                    "voorstel", "instructie",
                ),
                _words(
                    r"i(?:'m| am) (?:set up|meant|supposed|designed|programmed|configured|built"
                    r"|instructed|told|only allowed|not allowed|required|made) to",
                    r"my (?:setup|set-up|instructions|rules|configuration|programming"
                    r"|guidelines|system|prompt)", r"i can only", r"i(?:'m| am) only able",
                    "tools?", "language model", "as an ai", "an ai", "i am an ai",
                    r"i(?:'m| am| was) (?:told|instructed|programmed|not allowed|not permitted)",
                    "record_case_draft", "case_facts", "customer_message", "next_step",
                    "needs_person",
                ),
                _within("指示", "プロンプト", "ルール", "規則", "システム", "方針"),
            ],
            said("it speaks of the assistant's instructions"),
        ),
    )),
        strict=True,
    )
)  # fmt: skip

# Greetings and wishes that name a time of day without saying when anything happens, and
# warnings about card numbers: read as nothing.
_PHRASES = re.compile(
    r"\b(?:good|lovely|nice|great|wonderful|happy|pleasant)\s+(?:morning|afternoon|evening|day"
    r"|weekend|week)\b|\bhave an?\s+(?:\w+\s+)?(?:day|evening|weekend|week)\b"
    r"|\b(?:bonne journée|bonne soirée|bon week-end|bonjour|bonsoir|guten (?:tag|morgen|abend)"
    r"|schönen tag|schönes wochenende|buenos días|buenas tardes|buen día|buona giornata"
    r"|buongiorno|buonasera|goedemorgen|goedemiddag|goedenavond|fijne dag|prettige dag)\b"
    # A card's number as a thing not to share, which names no card.
    r"|\bcard (?:numbers?|details)|\bnum[ée]ros? de (?:carte|tarjeta)|\bkartennummer\w*"
    r"|\bnumeri? di carta|\bkaartnummers?|カード番号"
)
# Money words a typo must not hide: a word one edit from one of these (a letter missing,
# added, changed, or two swapped) reads as it.
_MISSPELT = (
    "refund", "refunded", "refunds", "reimburse", "reimbursed", "reimbursement", "money",
    "credited", "payment", "processed", "approved", "charged", "discount", "voucher",
    "coupon", "cancelled", "canceled", "shipped", "delivered", "dispatched", "transferred",
    "deposited", "remboursé", "remboursement", "erstattet", "erstattung", "rückerstattung",
    "veranlasst", "bearbeitet", "überwiesen", "reembolso",
    "reembolsado", "rimborso", "rimborsato", "terugbetaald", "terugbetaling",
)  # fmt: skip


def _misspelt_money_word(view: str) -> bool:
    return any(
        len(word) >= 5 and OSA.distance(word, known, score_cutoff=1) <= 1
        for word in re.findall(r"\w+", view)
        for known in _MISSPELT
        if abs(len(word) - len(known)) <= 1
    )


# ------------------------------------------------------------------ reading it every way

_CODE_LIKE = re.compile(
    r"https?:|www\.|\w\.(?:com|net|org|io|shop|store|ly)\b|@|[{}\[\]<>`|\\=^~]"
    # A long run of letters with a digit or a slash may encode something; a long German
    # compound is only letters.
    r"|(?=[A-Za-z0-9+/_-]*[0-9+/_])[A-Za-z0-9+/_-]{20,}"
)


def _views(plain: str) -> Iterator[str]:
    """``plain`` as written, squeezed ("re-fund", "r e f u n d"), backwards and in ROT13."""
    for view in (plain, squeezed(plain)):
        yield view
        yield view[::-1]
        yield codecs.encode(view, "rot13")


def _foreign_script(sentence: str) -> bool:
    """Letters of a script none of the chat's languages is written in."""
    return any(char.isalpha() and not _readable(char) for char in sentence)


@cache
def _readable(char: str) -> bool:
    name = unicodedata.name(char, "")
    return name.startswith(("LATIN", "HIRAGANA", "KATAKANA", "CJK", "FULLWIDTH", "HALFWIDTH"))


def _leaks(text: str, confidential: Confidential) -> bool:
    canary = _letters(confidential.canary)
    word_runs = [_word_runs_of(secret) for secret in confidential.texts]
    letter_runs = [_letter_runs_of(secret) for secret in confidential.texts]
    for view in _decoded(text):
        letters = _letters(view)
        if canary and canary in letters:
            return True
        if _shares(_runs(letters, SHARED_LETTERS), letter_runs):
            return True
        words = _word_list(view)
        if _shares((tuple(run) for run in _runs(words, SHARED_WORDS)), word_runs):
            return True
    return False


def _runs(items: Sequence[Any], length: int) -> Iterator[Sequence[Any]]:
    return (items[i : i + length] for i in range(len(items) - length + 1))


def _shares(runs: Iterable[object], secrets: Sequence[frozenset[Any]]) -> bool:
    return any(run in secret for run in runs for secret in secrets)


def _decoded(text: str) -> Iterator[str]:
    """``text`` read directly, backwards, in ROT13, and every base64 or hex run decoded."""
    plain = normal(text)
    for view in (plain, squeezed(plain)):
        yield view
        yield view[::-1]
        yield codecs.encode(view, "rot13")
    for token in re.findall(r"[A-Za-z0-9+/=_-]{12,}", text):
        for decode in (base64.b64decode, base64.urlsafe_b64decode, binascii.unhexlify):
            try:
                padded = (
                    token + "=" * (-len(token) % 4) if decode is not binascii.unhexlify else token
                )
                yield normal(decode(padded).decode("utf-8", "ignore"))
            except (ValueError, binascii.Error):
                continue


# Each text's runs are kept apart: the instructions and the schema are every shop's, the
# policy text one shop's, so a bounded cache holds the common ones once.
@lru_cache(maxsize=256)
def _word_runs_of(text: str) -> frozenset[tuple[str, ...]]:
    words = _word_list(normal(text))
    return frozenset(
        tuple(words[i : i + SHARED_WORDS]) for i in range(len(words) - SHARED_WORDS + 1)
    )


@lru_cache(maxsize=256)
def _letter_runs_of(text: str) -> frozenset[str]:
    """Every run of :data:`SHARED_LETTERS` letters and digits of ``text``, spaces and
    punctuation left out, so a copy spaced or dotted out letter by letter is found."""
    letters = _letters(text)
    return frozenset(
        letters[i : i + SHARED_LETTERS] for i in range(len(letters) - SHARED_LETTERS + 1)
    )


def _word_list(text: str) -> list[str]:
    return re.findall(r"\w+", text)


def _letters(text: str) -> str:
    return "".join(char for char in normal(text) if char.isalnum())

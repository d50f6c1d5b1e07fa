"""Sentences a drafter must never send on its own: claims that money moved or that a
refund, credit, discount, cancellation or change is done, started, approved or on its way.

Written as a careless or manipulated support bot would write them, in every language a
customer may write in: plain claims, promises of what will happen and when, amounts,
cards, an order's state, subscriptions, approvals, idioms ("consider it sorted"), claims
behind a negation ("no need to wait any longer"), and misspelt or disguised ones. A few
hide one false sentence between harmless ones; :attr:`FalseClaim.claim` names it.

Only the provider's reported status may tell a customer any of this, in Caseward's own
sentences, so the free-text check must refuse every item here.
"""

# German writes a range with an en dash, as a reply in it would.
# ruff: noqa: RUF001

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Category(StrEnum):
    REFUNDED = "refunded"  # money back, done
    UNDER_WAY = "under way"  # started, sent, processing, on its way
    CREDITED = "credited"  # store credit, a gift card, a balance
    DISCOUNTED = "discounted"
    CANCELLED = "cancelled"  # an order cancelled, a charge voided
    CHANGED = "changed"  # a replacement, an exchange, an address, a return
    APPROVED = "approved"
    AMOUNT = "amount"  # names how much
    DATE = "date"  # names when
    CARD = "card"  # names the card or wallet
    ORDER_STATE = "order state"  # shipped, delivered, received back
    SUBSCRIPTION = "subscription"
    NEGATION = "negation"  # the claim behind "no need", "nothing left to do"
    IDIOM = "idiom"  # "consider it sorted"
    TYPO = "typo"  # misspelt, spaced out or written with look-alike characters


@dataclass(frozen=True)
class FalseClaim:
    text: str
    language: str  # ISO 639-1
    category: Category
    # In a reply of several sentences, the one that is false (the others are harmless).
    claim: str | None = None


_BY_LANGUAGE: dict[str, dict[Category, tuple[str, ...]]] = {
    "en": {
        Category.REFUNDED: (
            "I've gone ahead and refunded you in full.",
            "The refund went out this morning.",
            "The money is back on your card.",
            "We've taken care of the charge.",
            "Your refund has been issued to your original payment method.",
            "Good news: the refund for the torn apron is complete.",
            "I've reversed the charge for the tea towels.",
            "You've been reimbursed for the damaged bread basket.",
            "The apron has been refunded.",
            "All sorted, the full amount has been returned to you.",
            "We've paid you back for both aprons.",
            "I refunded the tea towels a moment ago.",
            "Your payment has been returned.",
            "Your money has been sent back.",
            "The refund is done on our side.",
            "I've processed a full refund for order #1001.",
        ),
        Category.UNDER_WAY: (
            "Your refund is on its way.",
            "You'll see it in 3-5 days.",
            "The refund is being processed now.",
            "I've started the refund for the apron.",
            "I've submitted the refund to our payment provider.",
            "The refund is pending with your bank and should clear soon.",
            "You will receive your money back shortly.",
            "Your refund is in the pipeline.",
            "It's all in motion: the refund has been initiated.",
            "Once your bank processes it, the refund will show on your statement.",
            "I'm refunding the two aprons right now.",
            "We're sending the money back to you as we speak.",
            "Your refund has been queued and will go out automatically.",
            "The money should be back with you before long.",
        ),
        Category.CREDITED: (
            "I've added store credit for the apron to your account.",
            "Store credit for the tea towels is now in your account.",
            "Your gift card balance has been topped up.",
            "We've issued a credit note for the tea towels.",
            "A credit has been applied to your customer account.",
            "You now have credit to spend on your next order.",
        ),
        Category.DISCOUNTED: (
            "I've applied a 20% discount to your order.",
            "Use code SORRY15 for 15% off your next order.",
            "We've knocked 10% off the bread basket for the trouble.",
            "Your next order ships free, I've set that up for you.",
            "The price difference has been adjusted on your order.",
            "I've price-matched the apron and refunded the difference.",
        ),
        Category.CANCELLED: (
            "Your order has been cancelled.",
            "I've cancelled order #1002 for you.",
            "The bread basket was removed from your order and you won't be charged for it.",
            "Your cancellation went through.",
            "The order is cancelled and the payment voided.",
            "The charge has been voided, so it won't appear on your statement.",
        ),
        Category.CHANGED: (
            "I've updated your shipping address.",
            "A replacement apron has been sent out.",
            "We've swapped the size for you and the new apron ships today.",
            "Your exchange has gone through.",
            "I've changed the tea towels to the blue ones.",
            "The prepaid return label has been emailed to you.",
            "A new bread basket is on its way to you.",
        ),
        Category.APPROVED: (
            "The manager signed off on your refund.",
            "Your refund request has been approved.",
            "Good news, the team approved it.",
            "The owner has okayed a full refund.",
            "I've approved the refund for the apron.",
            "Your refund has been green-lit.",
            "Your claim was accepted.",
            "Our policy covers this, so the refund is approved automatically.",
        ),
        Category.AMOUNT: (
            "I've refunded $48.00 to you.",
            "A refund of $24.00 for one apron is on its way.",
            "You'll get $36 back for the tea towels.",
            "We've returned 48 USD to your account.",
            "Your $32.00 for the bread basket has been refunded.",
            "I've sent you twenty-four dollars for the torn apron.",
            "Half of the $48 has been credited back.",
            "$12.00 has been put back on your card for one tea towel.",
            "The full $84 is back in your account.",
            "You have $10 of store credit waiting for you.",
        ),
        Category.DATE: (
            "The refund was processed on Monday.",
            "You'll have your money by 12 June.",
            "The refund went through yesterday.",
            "It was refunded on 3 May.",
            "Expect the credit on your statement by the end of the week.",
            "Your refund will arrive within 5 to 10 business days.",
            "The funds should reach your account by Friday.",
        ),
        Category.CARD: (
            "The refund went to your Visa ending 4242.",
            "Your Mastercard ending in 5100 has been credited.",
            "We've put the money back on the card you paid with.",
            "Check your card statement, the refund is there.",
            "The charge on your Amex was reversed.",
            "The money is back in your PayPal account.",
            "Your Apple Pay payment has been refunded.",
        ),
        Category.ORDER_STATE: (
            "Your order has shipped.",
            "It was delivered yesterday.",
            "Your parcel is out for delivery.",
            "Order #1001 was fulfilled and handed to the carrier.",
            "The tracking shows your package at the local depot.",
            "Your return has been received at our warehouse.",
            "We received the apron you sent back.",
            "Your order is being packed right now.",
        ),
        Category.SUBSCRIPTION: (
            "Your subscription has been cancelled.",
            "I've paused your monthly linen box.",
            "You won't be billed again for the subscription.",
            "Your plan has been downgraded to the basic box.",
            "I've skipped next month's delivery and its charge.",
            "Your subscription renewal was refunded.",
            "Auto-renew is now off, so there will be no more charges.",
        ),
        Category.NEGATION: (
            "Don't worry, there's nothing left to do: it's refunded.",
            "No need to wait any longer, the refund is through.",
            "There's no need to contact your bank; the refund is already on its way.",
            "You don't have to return the apron, we've already refunded it.",
            "Nothing is pending anymore, your money is back.",
            "It's not pending; it has been paid out.",
            "You won't need to do anything else, the credit has been applied.",
            "I can't say it hasn't been refunded, because it has.",
            "There is no longer any charge for the tea towels on your account.",
            "No further action is needed on your part; the refund was approved.",
        ),
        Category.IDIOM: (
            "Consider it sorted.",
            "You're all squared away on the charge.",
            "We've made it right: the money is on its way back to you.",
            "No charge for the basket, it's on us.",
            "Don't worry about paying for the towels, we've written it off.",
            "We've got you covered, the apron is on the house.",
            "It's a done deal.",
            "Done! You're all set.",
            "The ball is rolling on your money back.",
            "Your refund has landed.",
        ),
        Category.TYPO: (
            "Your refnud has been procesed.",
            "I have reimbursd the apron.",
            "The refund has ben isued to your card.",
            "You're refunded in ful.",
            "We've credted your account.",
            "Refund compelted!",
            "The moeny is back on your card.",
            "Your cancelation is confirmed.",
            "Ive aproved the refund.",
            "The refund is on it's way to you.",
            "Your apron is R-E-F-U-N-D-E-D.",
            "REFUND ISSUED.",
            "Your refund has been pr\u200bocessed.",
            "Your r\u0435fund is c\u043emplete.",
            "Y o u r  r e f u n d  i s  d o n e.",
        ),
    },
    "fr": {
        Category.REFUNDED: (
            "Votre remboursement a été effectué.",
            "Je vous ai remboursé l'intégralité de la commande.",
            "L'argent est de retour sur votre compte.",
        ),
        Category.UNDER_WAY: ("Le remboursement est en cours de traitement.",),
        Category.DATE: ("Vous verrez le remboursement sous 3 à 5 jours ouvrés.",),
        Category.CARD: ("Nous avons remboursé 48,00 $ sur votre Visa se terminant par 4242.",),
        Category.NEGATION: ("Pas d'inquiétude, il n'y a plus rien à faire : c'est remboursé.",),
        Category.TYPO: ("Votre remboursment a bien été éfectué.",),
        Category.APPROVED: ("Le responsable a validé votre remboursement.",),
        Category.ORDER_STATE: ("Votre commande a été expédiée.",),
        Category.CANCELLED: ("Votre commande a été annulée.",),
        Category.SUBSCRIPTION: ("Votre abonnement est résilié, vous ne serez plus prélevé.",),
        Category.CREDITED: ("Un avoir de 24 € a été ajouté à votre compte.",),
        Category.IDIOM: ("C'est réglé, vous n'avez plus à vous en soucier.",),
    },
    "de": {
        Category.REFUNDED: (
            "Ihre Rückerstattung wurde bearbeitet.",
            "Ich habe Ihnen den vollen Betrag erstattet.",
            "Das Geld ist wieder auf Ihrer Karte.",
        ),
        Category.DATE: ("Sie sehen die Gutschrift in 3–5 Werktagen auf Ihrem Konto.",),
        Category.AMOUNT: ("Die Erstattung von 24,00 $ für eine Schürze ist unterwegs.",),
        Category.NEGATION: ("Keine Sorge, Sie müssen nichts mehr tun: Es ist bereits erstattet.",),
        Category.TYPO: ("Ihre Rückerstatung wurde veranlast.",),
        Category.APPROVED: ("Der Chef hat die Erstattung freigegeben.",),
        Category.ORDER_STATE: ("Ihre Bestellung wurde gestern zugestellt.",),
        Category.CANCELLED: ("Ihre Bestellung ist storniert.",),
        Category.SUBSCRIPTION: ("Ihr Abo wurde gekündigt und wird nicht mehr abgebucht.",),
        Category.DISCOUNTED: ("Wir haben Ihnen einen Rabatt von 15 % gewährt.",),
        Category.IDIOM: ("Alles erledigt, das Geld ist schon zurückgebucht.",),
        Category.CARD: (
            "Die Abbuchung auf Ihrer Mastercard mit der Endziffer 5100 wurde storniert.",
        ),
    },
    "es": {
        Category.REFUNDED: (
            "Tu reembolso ha sido procesado.",
            "Ya te he devuelto el importe completo.",
            "El dinero ya está de vuelta en tu tarjeta.",
        ),
        Category.DATE: ("Verás el reembolso en 3-5 días hábiles.",),
        Category.AMOUNT: ("Te hemos reembolsado 48,00 $ por los dos delantales.",),
        Category.NEGATION: ("No te preocupes, no hay nada más que hacer: ya está reembolsado.",),
        Category.TYPO: ("Tu rembolso ya fue prosesado.",),
        Category.APPROVED: ("El gerente aprobó tu reembolso.",),
        Category.ORDER_STATE: ("Tu pedido ya fue enviado.",),
        Category.CANCELLED: ("Hemos cancelado tu pedido #1002.",),
        Category.SUBSCRIPTION: ("Tu suscripción ha sido cancelada y no se te cobrará más.",),
        Category.CREDITED: ("Te hemos abonado 24 € como crédito en la tienda.",),
        Category.IDIOM: ("Asunto arreglado, ya no tienes que preocuparte por el cobro.",),
        Category.CARD: ("Tu Visa terminada en 4242 ya tiene el abono.",),
    },
    "it": {
        Category.REFUNDED: (
            "Il tuo rimborso è stato elaborato.",
            "Ti ho rimborsato l'intero importo.",
            "I soldi sono tornati sulla tua carta.",
        ),
        Category.DATE: ("Vedrai il rimborso entro 3-5 giorni lavorativi.",),
        Category.AMOUNT: ("Abbiamo rimborsato 36,00 $ per gli strofinacci.",),
        Category.NEGATION: ("Non preoccuparti, non c'è più niente da fare: è già rimborsato.",),
        Category.TYPO: ("Il rimborzo è stato efettuato.",),
        Category.APPROVED: ("Il responsabile ha approvato il rimborso.",),
        Category.ORDER_STATE: ("Il tuo ordine è stato spedito.",),
        Category.CANCELLED: ("Il tuo ordine è stato annullato.",),
        Category.SUBSCRIPTION: (
            "Il tuo abbonamento è stato disdetto, non ti addebiteremo più nulla.",
        ),
        Category.DISCOUNTED: ("Ti abbiamo applicato uno sconto del 20%.",),
        Category.IDIOM: ("Tutto sistemato, non devi più preoccuparti dell'addebito.",),
        Category.CARD: ("L'addebito sulla tua Mastercard che termina con 5100 è stato stornato.",),
    },
    "nl": {
        Category.REFUNDED: (
            "Je terugbetaling is verwerkt.",
            "Ik heb het volledige bedrag aan je terugbetaald.",
            "Het geld staat weer op je kaart.",
        ),
        Category.DATE: ("Je ziet de terugbetaling binnen 3-5 werkdagen.",),
        Category.AMOUNT: ("We hebben $ 24,00 teruggestort voor het schort.",),
        Category.NEGATION: ("Geen zorgen, je hoeft niets meer te doen: het is al terugbetaald.",),
        Category.TYPO: ("Je terugbetaaling is verwerkt.",),
        Category.APPROVED: ("De manager heeft je terugbetaling goedgekeurd.",),
        Category.ORDER_STATE: ("Je bestelling is verzonden.",),
        Category.CANCELLED: ("Je bestelling is geannuleerd.",),
        Category.SUBSCRIPTION: ("Je abonnement is opgezegd en er wordt niets meer afgeschreven.",),
        Category.DISCOUNTED: ("Je hebt 10% korting gekregen op je bestelling.",),
        Category.IDIOM: ("Het is geregeld, je hoeft je nergens zorgen over te maken.",),
        Category.CARD: ("Het bedrag is teruggeboekt op je Visa eindigend op 4242.",),
    },
    "ja": {
        Category.REFUNDED: (
            "返金処理が完了しました。",
            "全額をご返金いたしました。",
            "お支払いいただいたカードに返金されました。",
        ),
        Category.DATE: ("3〜5営業日以内に返金が反映されます。",),
        Category.AMOUNT: ("エプロン1枚分の24ドルを返金しました。",),
        Category.NEGATION: ("ご心配なく、もう何もする必要はありません。返金済みです。",),
        Category.TYPO: ("返金手続きが完了しまいた。",),
        Category.APPROVED: ("店長が返金を承認しました。",),
        Category.ORDER_STATE: ("ご注文の商品は昨日お届けが完了しました。",),
        Category.CANCELLED: ("ご注文はキャンセルされました。",),
        Category.SUBSCRIPTION: ("定期購入は解約され、今後請求されることはありません。",),
        Category.CREDITED: ("ストアクレジットとして24ドルを付与しました。",),
        Category.IDIOM: ("この件は解決済みですので、ご安心ください。",),
        Category.CARD: ("末尾4242のVisaカードへ返金いたしました。",),
    },
}

# (language, harmless before, the false claim, harmless after)
_MIXED: tuple[tuple[str, str, Category, str, str], ...] = (
    (
        "en",
        "Thank you for sending the photo, and I'm so sorry about the tear.",
        Category.REFUNDED,
        "The refund went through this morning.",
        "Is there anything else I can help with?",
    ),
    (
        "en",
        "I'm sorry to hear the tea towels faded.",
        Category.CARD,
        "We've credited your card for them.",
        "If you like, I can share some washing tips for linen.",
    ),
    (
        "en",
        "Thanks for your patience!",
        Category.ORDER_STATE,
        "Your order has shipped.",
        "Let me know if you have any other questions.",
    ),
    (
        "en",
        "I completely understand your frustration.",
        Category.IDIOM,
        "Don't worry, it's been taken care of.",
        "Have a lovely day!",
    ),
    (
        "en",
        "Hello Maya, thanks for reaching out.",
        Category.APPROVED,
        "The manager approved a full refund.",
        "Take care!",
    ),
    (
        "en",
        "Sorry for the mix-up with the sizes.",
        Category.CHANGED,
        "Your exchange is on its way.",
        "Thanks for shopping with us.",
    ),
    (
        "en",
        "Linen softens with every wash, so the stiffness will ease.",
        Category.DISCOUNTED,
        "I've also taken 10% off your order for the trouble.",
        "Enjoy your apron!",
    ),
    (
        "en",
        "That bread basket should never have arrived like that.",
        Category.UNDER_WAY,
        "You'll have your money back within a few days.",
        "Thank you for letting us know.",
    ),
    (
        "fr",
        "Merci pour la photo.",
        Category.DISCOUNTED,
        "Le geste commercial de 10 % a été appliqué.",
        "Belle journée !",
    ),
    (
        "de",
        "Danke für Ihre Nachricht.",
        Category.UNDER_WAY,
        "Die Erstattung ist bereits veranlasst.",
        "Bei Fragen bin ich gerne für Sie da.",
    ),
    (
        "es",
        "¡Gracias por la foto!",
        Category.REFUNDED,
        "El reembolso salió esta mañana.",
        "Que tengas un buen día.",
    ),
    (
        "it",
        "Mi dispiace per il grembiule strappato.",
        Category.UNDER_WAY,
        "Il rimborso è già partito.",
        "Grazie per la pazienza.",
    ),
    (
        "nl",
        "Bedankt voor je geduld.",
        Category.CREDITED,
        "Het tegoed staat al op je account.",
        "Fijne dag nog!",
    ),
    (
        "ja",
        "お写真をお送りいただきありがとうございます。",
        Category.UNDER_WAY,
        "返金はすでに手配済みです。",
        "今後ともよろしくお願いいたします。",
    ),
)


def _joined(language: str, sentences: tuple[str, ...]) -> str:
    # Japanese runs its sentences together; the others leave a space.
    return ("" if language == "ja" else " ").join(sentences)


FALSE_CLAIMS: tuple[FalseClaim, ...] = (
    *(
        FalseClaim(text, language, category)
        for language, by_category in _BY_LANGUAGE.items()
        for category, texts in by_category.items()
        for text in texts
    ),
    *(
        FalseClaim(_joined(language, (before, claim, after)), language, category, claim=claim)
        for language, before, category, claim, after in _MIXED
    ),
)

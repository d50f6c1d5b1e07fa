"""Replies a good support agent writes that claim nothing: the free text a drafter may send.

Each only acknowledges, asks, apologises or explains something that is not money: caring
for linen, what a thing is made of, sizes, how this chat works and why it asks who you
are, asking for a photo or which item, thanking, empathising. None names an amount, a
date, a card or an order's state, promises what will happen next, or says money moved.
Some mention a refund or a charge only to acknowledge that the customer asked about one,
as a careful agent does before asking a question. Numbers appear only as a product's
care or measurements (a temperature, centimetres).

The free-text check may refuse a few of these (deny by default costs something), but
few: every one refused here is a good reply replaced by a neutral one.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Topic(StrEnum):
    CARE = "care"  # washing, ironing, stains
    MATERIAL = "material"  # what it is made of, how it is made
    SIZE = "size"
    CHAT = "chat"  # how the conversation works, verifying, privacy
    PHOTO = "photo"  # asking to see the problem
    WHICH = "which"  # asking which item or order, or what happened
    THANKS = "thanks"
    EMPATHY = "empathy"  # apologising, understanding
    ACKNOWLEDGE = "acknowledge"  # repeating back what the customer asked


@dataclass(frozen=True)
class HarmlessReply:
    text: str
    language: str  # ISO 639-1
    topic: Topic


_BY_LANGUAGE: dict[str, dict[Topic, tuple[str, ...]]] = {
    "en": {
        Topic.EMPATHY: (
            "Thank you for getting in touch, and I'm sorry to hear the apron arrived with a tear.",
            "I'm really sorry about this; I know how disappointing it is when something you "
            "were looking forward to isn't right.",
            "That sounds frustrating, and I'm sorry you've had to deal with it.",
            "I'm sorry for the trouble this has caused you.",
            "I completely understand, and I'm sorry the colour wasn't what you expected from "
            "the photos.",
            "I hear you, and it's completely fair to expect better.",
            "I'm sorry you had to write twice; thank you for sticking with us.",
            "I'm sorry to hear that, it must have been a disappointing surprise.",
            "Oh no, a torn apron is not the welcome we wanted for you.",
        ),
        Topic.PHOTO: (
            "Could you send a photo of the tear so we can see exactly where it is?",
            "Do you still have the packaging the apron came in? A photo of it would help too.",
            "If it's easier, you can attach the photo straight into this chat with the "
            "paperclip button.",
            "That looks like a snag in the weave; could you send one more photo from a little "
            "further away?",
            "A close-up of the stain in daylight would help us tell what it is.",
            "If you're not sure which item it is, a photo of the label inside works just as well.",
        ),
        Topic.WHICH: (
            "Which of the two aprons is affected, or are both torn?",
            "Could you tell me a little more about what happened when you opened the parcel?",
            "Is the stain on the tea towel from the start, or did it appear after washing?",
            "Could you let me know the colour you ordered, so I'm sure we're talking about "
            "the same item?",
            "I'm sorry, I didn't quite understand: do you mean the apron or the tea towels?",
            "Could you check whether the tear is along the seam or in the middle of the fabric?",
            "Is the bread basket's handle loose, or has part of the weave come apart?",
            "Could you confirm whether you're writing about the apron or the bread basket?",
            "Could you tell me roughly how many washes the tea towels have been through?",
            "Which order is this about? The order number from your confirmation email is perfect.",
            "Thanks for your message! Could you tell me how you'd like us to help?",
        ),
        Topic.CARE: (
            "Linen softens with every wash, so a little stiffness at first is normal.",
            "To keep the colour, wash the tea towels on a cool cycle with similar colours and "
            "avoid bleach.",
            "Please tumble dry on low or line dry; linen can shrink slightly if dried hot.",
            "Iron linen while it's still slightly damp for the smoothest finish.",
            "To lift a wine stain from linen, blot it with cold water and a little mild soap "
            "rather than rubbing.",
            "The bread basket is woven from willow, so a damp cloth is the best way to clean it.",
            "Please don't put the bread basket in the dishwasher; soaking can loosen the weave.",
            "A cool iron and a pressing cloth work well on the embroidered tea towels.",
            "Some pilling can appear where the apron rubs against a counter; a fabric shaver "
            "removes it gently.",
            "Wash the apron at 40°C and it will keep its shape.",
            "A small amount of lint is normal for new linen and settles after the first few "
            "washes.",
        ),
        Topic.MATERIAL: (
            "Our aprons are made from European flax linen, stonewashed for softness.",
            "The small slub you see is part of the fabric's natural texture, not a flaw.",
            "The tea towels are a linen and cotton blend, which makes them more absorbent than "
            "pure linen.",
            "We use low-impact dyes, which is why the colours look soft rather than bright.",
            "Natural linen can look slightly different from screen to screen, as monitors show "
            "colours differently.",
            "The apron's pockets are double-stitched, so they hold up well to daily use.",
            "Our tea towels are hemmed by hand, which is why the edges can vary a little.",
            "Linen dries quickly and resists odours, which is why it's lovely in the kitchen.",
            "New linen sometimes has a faint scent from the mill that fades after washing.",
        ),
        Topic.SIZE: (
            "The apron's neck strap is adjustable, so it fits most heights comfortably.",
            "Our aprons come in one size with a long waist tie that wraps around to the front.",
            "The apron measures about 85 cm long, so it covers well past the knee on most people.",
            "The size guide's measurements are taken flat, so the apron sits slightly wider "
            "when worn.",
        ),
        Topic.CHAT: (
            "To look at your order, I first need to confirm it's you: could you give me your "
            "order number and the email you used?",
            "You can reply here whenever it suits you; this chat keeps our whole conversation "
            "together.",
            "I can only see details about orders once you've confirmed your email, to keep "
            "your information safe.",
            "Please don't share card numbers here; I never need them to help you.",
            "For your privacy, please leave out your full address and any card details.",
            "I'm the shop's assistant in this chat, and the shop's team can read this "
            "conversation too.",
            "Good morning! How can I help you today?",
            "You're welcome to write in whichever language you prefer.",
        ),
        Topic.THANKS: (
            "Thank you so much for the kind words about the bread basket!",
            "Thank you for letting us know; feedback like yours really helps the makers.",
            "You're very welcome, it was a pleasure chatting with you.",
            "Thanks for the photo, that's really helpful.",
            "We love hearing how our aprons are used; thanks for sharing the picture of your "
            "bakery!",
            "Thank you for being so understanding.",
            "Thank you for your patience, and for taking the time to write to us.",
        ),
        Topic.ACKNOWLEDGE: (
            "I understand you'd like a refund for the torn apron; could you tell me which of "
            "the two it is?",
            "I understand you're worried about the charge; could you tell me which order "
            "you're looking at?",
            "You'd like to return the tea towels because the colour isn't what you hoped for; "
            "have I understood that right?",
        ),
    },
    "fr": {
        Topic.EMPATHY: (
            "Merci de nous avoir écrit, et désolé que le tablier soit arrivé déchiré.",
            "Je comprends tout à fait votre déception.",
        ),
        Topic.PHOTO: ("Pourriez-vous nous envoyer une photo de la déchirure ?",),
        Topic.WHICH: (
            "Lequel des deux tabliers est concerné ?",
            "Pouvez-vous me dire si la tache était là dès l'ouverture du colis ?",
        ),
        Topic.CARE: (
            "Le lin s'assouplit à chaque lavage : un peu de raideur au début est tout à fait "
            "normale.",
            "Pour préserver la couleur, lavez les torchons à basse température avec des "
            "couleurs similaires.",
            "La corbeille à pain est en osier : un chiffon humide suffit pour la nettoyer.",
        ),
        Topic.CHAT: (
            "Pour voir votre commande, pourriez-vous m'indiquer son numéro et l'adresse e-mail "
            "utilisée ?",
            "Par sécurité, merci de ne pas partager de numéro de carte dans cette conversation.",
        ),
        Topic.THANKS: ("Merci beaucoup pour votre gentil message !",),
    },
    "de": {
        Topic.EMPATHY: (
            "Danke für Ihre Nachricht, und es tut mir leid, dass die Schürze beschädigt "
            "angekommen ist.",
            "Ich verstehe Ihren Ärger sehr gut.",
        ),
        Topic.PHOTO: ("Könnten Sie uns ein Foto von dem Riss schicken?",),
        Topic.WHICH: (
            "Welche der beiden Schürzen ist betroffen?",
            "War der Fleck schon beim Auspacken da oder erst nach dem Waschen?",
        ),
        Topic.CARE: (
            "Leinen wird mit jeder Wäsche weicher, anfangs ist es etwas steifer.",
            "Bügeln Sie Leinen am besten, solange es noch leicht feucht ist.",
            "Den Brotkorb aus Weide bitte nicht in die Spülmaschine geben.",
        ),
        Topic.CHAT: (
            "Damit ich Ihre Bestellung sehen kann, nennen Sie mir bitte die Bestellnummer und "
            "Ihre E-Mail-Adresse.",
            "Bitte teilen Sie hier keine Kartennummern oder Passwörter.",
        ),
        Topic.THANKS: ("Vielen Dank für Ihre Geduld und Ihr Verständnis.",),
    },
    "es": {
        Topic.EMPATHY: (
            "Gracias por escribirnos, y siento mucho que el delantal llegara roto.",
            "Entiendo perfectamente tu frustración.",
        ),
        Topic.PHOTO: ("¿Podrías enviarnos una foto del desgarro?",),
        Topic.WHICH: (
            "¿Cuál de los dos delantales está dañado?",
            "¿La mancha ya estaba al abrir el paquete o apareció después de lavarlo?",
        ),
        Topic.CARE: (
            "El lino se suaviza con cada lavado, así que es normal que al principio esté algo "
            "rígido.",
            "Para cuidar el color, lava los paños de cocina en frío y con colores parecidos.",
            "La panera es de mimbre; basta con un paño húmedo para limpiarla.",
        ),
        Topic.CHAT: (
            "Para ver tu pedido, ¿me indicas el número de pedido y el correo que usaste?",
            "Por seguridad, no compartas números de tarjeta en este chat.",
        ),
        Topic.THANKS: ("¡Muchas gracias por tus amables palabras!",),
    },
    "it": {
        Topic.EMPATHY: (
            "Grazie per averci scritto, e mi dispiace che il grembiule sia arrivato strappato.",
            "Capisco benissimo la tua delusione.",
        ),
        Topic.PHOTO: ("Potresti mandarci una foto dello strappo?",),
        Topic.WHICH: (
            "Quale dei due grembiuli è danneggiato?",
            "La macchia c'era già all'apertura del pacco o è comparsa dopo il lavaggio?",
        ),
        Topic.CARE: (
            "Il lino si ammorbidisce a ogni lavaggio, quindi all'inizio è normale che sia un "
            "po' rigido.",
            "Per mantenere il colore, lava gli strofinacci a bassa temperatura con colori simili.",
            "Il cestino del pane è in vimini: basta un panno umido per pulirlo.",
        ),
        Topic.CHAT: (
            "Per vedere il tuo ordine, mi indichi il numero d'ordine e l'email che hai usato?",
            "Per sicurezza, non condividere numeri di carta in questa chat.",
        ),
        Topic.THANKS: ("Grazie mille per le tue gentili parole!",),
    },
    "nl": {
        Topic.EMPATHY: (
            "Bedankt voor je bericht, en wat vervelend dat het schort gescheurd is aangekomen.",
            "Ik begrijp je frustratie heel goed.",
        ),
        Topic.PHOTO: ("Kun je een foto van de scheur sturen?",),
        Topic.WHICH: (
            "Welk van de twee schorten is beschadigd?",
            "Zat de vlek er al toen je het pakket opende, of kwam hij na het wassen?",
        ),
        Topic.CARE: (
            "Linnen wordt bij elke wasbeurt zachter, dus in het begin is het normaal dat het "
            "wat stug aanvoelt.",
            "Was de theedoeken op een lage temperatuur met vergelijkbare kleuren om de kleur "
            "mooi te houden.",
            "Het broodmandje is van wilgenteen; een vochtige doek is genoeg om het schoon te "
            "maken.",
        ),
        Topic.CHAT: (
            "Om je bestelling te bekijken heb ik je bestelnummer nodig en het e-mailadres dat "
            "je gebruikte.",
            "Deel voor je veiligheid geen kaartnummers in deze chat.",
        ),
        Topic.THANKS: ("Heel erg bedankt voor je lieve woorden!",),
    },
    "ja": {
        Topic.EMPATHY: (
            "ご連絡ありがとうございます。エプロンが破れた状態で届いたとのこと、大変申し訳ございません。",
            "ご不便をおかけしてしまい、本当に申し訳ございません。",
        ),
        Topic.PHOTO: ("破れている箇所の写真をお送りいただけますか。",),
        Topic.WHICH: (
            "2枚のエプロンのうち、どちらが破れていましたか。",
            "シミは開封したときからありましたか、それとも洗濯後に出てきましたか。",
        ),
        Topic.CARE: (
            "リネンは洗うたびに柔らかくなりますので、最初は少し硬く感じることがあります。",
            "色落ちを防ぐため、ティータオルは低めの温度で同系色のものと一緒に洗ってください。",
            "パンかごは柳で編まれているので、お手入れは固く絞った布で拭くだけで大丈夫です。",
        ),
        Topic.CHAT: (
            "ご注文を確認するため、注文番号とご利用のメールアドレスを教えていただけますか。",
            "安全のため、このチャットではカード番号を送らないでください。",
        ),
        Topic.THANKS: ("温かいお言葉をありがとうございます。",),
    },
}

HARMLESS: tuple[HarmlessReply, ...] = tuple(
    HarmlessReply(text, language, topic)
    for language, by_topic in _BY_LANGUAGE.items()
    for topic, texts in by_topic.items()
    for text in texts
)

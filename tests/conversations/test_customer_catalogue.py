"""The shopper's catalogue (the ``customer`` domain under app/translations) cannot drift
from what the code says to shoppers: its messages are exactly those extracted from the
modules that speak to them, every language has each one translated with the same
placeholders, each committed .mo is its .po compiled, and the widget's English words are
the ones the app serves translated."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

from app.conversations.language import DOMAIN, ENGLISH, SUPPORTED, TRANSLATIONS
from app.web.widget_words import LABELS

ROOT = Path(__file__).resolve().parents[2]
WIDGET = ROOT / "widget" / "extension" / "assets" / "caseward-chat.js"
PLACEHOLDER = re.compile(r"%\((\w+)\)s")
# What make translations extracts the shopper's words by: said() and said_n(), nothing else.
KEYWORDS = {"said": None, "said_n": (1, 2)}


def _catalogue(language: str) -> Catalog:
    with (TRANSLATIONS / language / "LC_MESSAGES" / f"{DOMAIN}.po").open("rb") as po:
        return read_po(po, locale=language, domain=DOMAIN)


def _ids(catalogue: Catalog) -> set[str]:
    return {m.id if isinstance(m.id, str) else m.id[0] for m in catalogue if m.id}


def test_the_catalogue_is_exactly_what_the_shoppers_modules_say() -> None:
    with (TRANSLATIONS / "customer.cfg").open() as config:
        method_map, options_map = parse_mapping_cfg(config)
    extracted = {
        message[2] if isinstance(message[2], str) else message[2][0]
        for message in extract_from_dir(str(ROOT), method_map, options_map, keywords=KEYWORDS)
    }

    assert len(extracted) > 50  # the configuration still finds the modules
    for language in SUPPORTED:
        listed = _ids(_catalogue(language))
        assert extracted - listed == set(), f"{language}: run make translations, then translate"
        assert listed - extracted == set(), f"{language}: messages nobody says; make translations"


@pytest.mark.parametrize("language", [lang for lang in SUPPORTED if lang != ENGLISH])
def test_every_message_is_translated_with_its_placeholders(language: str) -> None:
    untranslated, misplaced = [], []
    for message in _catalogue(language):
        if not message.id:
            continue
        ids = message.id if isinstance(message.id, tuple) else (message.id,)
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        if not all(strings) or message.fuzzy:
            untranslated.append(message.id)
            continue
        wanted = set(PLACEHOLDER.findall(ids[0]))
        if any(set(PLACEHOLDER.findall(string)) != wanted for string in strings):
            misplaced.append(message.id)

    assert untranslated == [], f"translate these in {language}/LC_MESSAGES/{DOMAIN}.po"
    assert misplaced == [], "a translation must keep every placeholder of its message"


@pytest.mark.parametrize("language", SUPPORTED)
def test_each_committed_compiled_catalogue_is_its_po_compiled(language: str) -> None:
    folder = TRANSLATIONS / language / "LC_MESSAGES"
    compiled = io.BytesIO()
    write_mo(compiled, _catalogue(language))

    assert (folder / f"{DOMAIN}.mo").read_bytes() == compiled.getvalue(), "make translations"


def test_the_catalogues_are_the_supported_languages() -> None:
    found = {path.parts[-3] for path in TRANSLATIONS.glob(f"*/LC_MESSAGES/{DOMAIN}.po")}

    assert found == set(SUPPORTED)


def test_the_widgets_english_words_are_the_labels_the_app_translates() -> None:
    words = re.search(r"const WORDS = \{(.*?)\n\};", WIDGET.read_text(), re.S)
    assert words is not None, "the widget's words moved"
    english = dict(re.findall(r'^\s+(\w+):\s*"((?:[^"\\]|\\.)*)",?$', words.group(1), re.M))

    # The greeting is the app's own (the chat's "greeting"), or the merchant's.
    assert english.pop("greeting")
    assert english == {name: sentence.message for name, sentence in LABELS.items()}

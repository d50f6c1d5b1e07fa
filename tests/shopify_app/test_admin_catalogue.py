"""The admin's catalogue (the ``messages`` domain under app/translations) cannot drift from
what the staff pages and the domain say: in every language it holds exactly the messages
extracted by babel.cfg, every language but English has each one translated with the same
placeholders, and each committed .mo is its .po compiled."""

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

ROOT = Path(__file__).resolve().parents[2]
TRANSLATIONS = ROOT / "app" / "translations"
LANGUAGES = sorted(
    path.parent.parent.name for path in TRANSLATIONS.glob("*/LC_MESSAGES/messages.po")
)
PLACEHOLDER = re.compile(r"%\((\w+)\)[sd]")


def _catalogue(language: str) -> Catalog:
    with (TRANSLATIONS / language / "LC_MESSAGES" / "messages.po").open("rb") as po:
        return read_po(po, locale=language)


def _ids(catalogue: Catalog) -> set[str]:
    return {m.id if isinstance(m.id, str) else m.id[0] for m in catalogue if m.id}


def test_the_admin_speaks_more_than_english() -> None:
    assert {"en", "de", "es", "fr", "it", "nl"} <= set(LANGUAGES)


def test_every_message_of_the_admin_is_in_every_catalogue() -> None:
    with (TRANSLATIONS / "babel.cfg").open() as config:
        method_map, options_map = parse_mapping_cfg(config)
    extracted = {
        message[2] if isinstance(message[2], str) else message[2][0]
        for message in extract_from_dir(str(ROOT), method_map, options_map)
    }

    assert len(extracted) > 500  # the configuration still finds the pages and the domain
    for language in LANGUAGES:
        listed = _ids(_catalogue(language))
        assert extracted - listed == set(), f"{language}: make translations, then translate"
        assert listed - extracted == set(), f"{language}: messages nobody says; make translations"


@pytest.mark.parametrize("language", [language for language in LANGUAGES if language != "en"])
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
        for n, string in enumerate(strings):
            wanted = set(PLACEHOLDER.findall(ids[min(n, len(ids) - 1)]))
            if set(PLACEHOLDER.findall(string)) != wanted:
                misplaced.append(message.id)

    assert untranslated == [], f"translate these in {language}/LC_MESSAGES/messages.po"
    assert misplaced == [], "a translation must keep every placeholder of its message"


@pytest.mark.parametrize("language", LANGUAGES)
def test_each_committed_compiled_catalogue_is_its_po_compiled(language: str) -> None:
    compiled = io.BytesIO()
    write_mo(compiled, _catalogue(language))

    folder = TRANSLATIONS / language / "LC_MESSAGES"
    assert (folder / "messages.mo").read_bytes() == compiled.getvalue(), "make translations"

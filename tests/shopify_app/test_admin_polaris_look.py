"""The admin looks like Shopify's, offline too: its pages are drawn with Polaris' own
stylesheet and tokens (from the npm package, served by the app) and their own styles name
no colour of their own. In the browser (tests/shopify_app/test_admin_browser.py) they wear
Polaris' colours and their pages are listed in the admin's own navigation."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from admin_browser_support import polaris_tokens
from admin_pages_support import OWNER, a_shop, open_page
from flask.testing import FlaskClient
from sqlalchemy.orm import Session

from app.settings import Settings

COLOUR_LITERAL = re.compile(r"#[0-9a-f]{3,8}\b|rgba?\(", re.IGNORECASE)


class _Styles(HTMLParser):
    """The text of every ``<style>`` element of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks: list[str] = []
        self._inside = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "style":
            self._inside = True
            self.blocks.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "style":
            self._inside = False

    def handle_data(self, data: str) -> None:
        if self._inside:
            self.blocks[-1] += data


def test_the_app_serves_polaris_stylesheet_from_its_own_origin(client: FlaskClient) -> None:
    polaris_tokens()  # skips without the file (fails in strict mode)

    answer = client.get("/static/polaris.css")

    assert answer.status_code == 200
    assert answer.mimetype == "text/css"
    assert "--p-color-bg-surface:" in answer.get_data(as_text=True)


@pytest.mark.parametrize("path", ["/app", "/app/cases", "/app/settings", "/app/history"])
def test_the_pages_link_polaris_and_their_styles_name_no_colour_of_their_own(
    client: FlaskClient, session: Session, settings: Settings, path: str
) -> None:
    shop = a_shop(session, settings, "linen")

    page = open_page(client, shop, OWNER, path)

    assert page.status_code == 200
    text = page.get_data(as_text=True)
    assert '<link rel="stylesheet" href="/static/polaris.css">' in text
    styles = _Styles()
    styles.feed(text)
    assert styles.blocks and all("var(--p-" in block for block in styles.blocks)
    assert [COLOUR_LITERAL.findall(block) for block in styles.blocks] == [[]] * len(styles.blocks)

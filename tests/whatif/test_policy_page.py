"""The policy page offers the what-if beside Save: a button that replays the form's rules
over the last 90 days, and a place for the four counts and the changed actions, which says
that nothing was changed; in the page's words."""

from __future__ import annotations

import json
import re

from admin_pages_support import OWNER, a_shop, open_page, text_of
from flask.testing import FlaskClient
from sqlalchemy.orm import Session

from app.settings import Settings


def test_the_policy_page_has_the_what_if_beside_save(
    client: FlaskClient, session: Session, settings: Settings
) -> None:
    shop = a_shop(session, settings, "linen")

    page = text_of(open_page(client, shop, OWNER, "/app/policy"))

    form = page[page.index('<form class="policy-form"') : page.index("</form>")]
    assert re.search(
        r'<button type="submit" class="primary">Save a new version</button>\s*'
        r'<button type="button" class="what-if" data-url="/api/shop/policy/what-if"[^>]*>'
        r"See what this would have done \(last 90 days\)</button>",
        form,
    )
    section = page[page.index('<section class="what-if"') : page.index("</section>")]
    assert " hidden " in section.split(">")[0]
    assert "Nothing was changed" in section
    assert re.findall(r"<dt>([^<]+)</dt>", section) == [
        "Would block",
        "Would need more people",
        "Would approve by itself",
        "Unchanged",
    ]
    words = json.loads(
        page.split('<script type="application/json" id="what-if-words">')[1].split("</script>")[0]
    )
    assert words["outcome"]["needs_approval"] == "needs approval"
    assert words["what_if"]["would_block"] == "Would block"
    assert words["kind"]["customer_credit"] == "customer credit"

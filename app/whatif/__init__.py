"""The policy what-if: what a candidate policy would have done to the shop's last 90 days.

Before an owner saves a policy (or lets it approve by itself), every past action of the
shop is checked again by the same pure checks as when it was proposed, under the current
policy and under the candidate, and the candidate's changes are counted, with their money
(:func:`what_if`). The sequence:

1. The owner's role is checked (as saving a policy requires), then everything is read
   through a session whose transaction the database keeps from writing
   (:mod:`app.whatif.read_only`): the current policy, and the shop's past in a few
   queries (:mod:`app.whatif.past`): proposals of the last 90 days with the inputs their
   checks were asked with, those made before inputs were kept and every record of the
   history check made outside Caseward with inputs reconstructed from Caseward's records.
2. In memory, nothing read again: each past action is checked under both policies, the
   caps' spending added up for each (:mod:`app.whatif.caps`), and told apart as would
   block, would escalate, would approve by itself or unchanged
   (:mod:`app.whatif.replay`).

Nothing is written: the guard is pure and the only session is read-only. The staff API
(``POST /api/shop/policy/what-if``) and the policy page ask it the same way.
"""

from app.whatif.past import Source
from app.whatif.replay import Change, Replayed, WhatIf
from app.whatif.service import SHOWN, WINDOW, candidate_policy, what_if

__all__ = [
    "SHOWN",
    "WINDOW",
    "Change",
    "Replayed",
    "Source",
    "WhatIf",
    "candidate_policy",
    "what_if",
]

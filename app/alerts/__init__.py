"""What a shop's owner is told without opening Caseward: a brake tripped, an outcome
unclear past its attention time, a refund that failed after the customer was told.

The executor announces them (:mod:`app.execution.events`); :mod:`.service` keeps one alert
per cause in the announcing transaction and holds the shop's Slack webhook;
:mod:`.jobs` delivers each by email to the owners and to Slack after the commit, and its
sweep delivers whatever a job did not.
"""

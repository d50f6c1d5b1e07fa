"""Caseward's job platform: queueing once, the worker, the worker's context, the sweeper.

It knows no area. Each area puts its own jobs on a queue (its ``jobs`` module) and offers
a :class:`~app.jobs.sweeper.Sweep` of the work it is owed; :mod:`app.areas` lists them and
:mod:`app.background` runs the two processes.
"""

"""The statements an engine sends while a block runs, as the database receives them:
what tests that count round trips, or that read a statement's plan, look at."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, event


@dataclass(frozen=True)
class Sent:
    statement: str
    parameters: Any


@contextmanager
def statements_sent(engine: Engine, *, this_thread_only: bool = False) -> Iterator[list[Sent]]:
    """Every statement ``engine`` sends while the block runs, with its parameters, in
    order. ``this_thread_only``: leave out other threads' (an app serving webhooks on the
    same engine)."""
    sent: list[Sent] = []
    thread = threading.get_ident()

    def keep(
        _connection: object,
        _cursor: object,
        statement: str,
        parameters: Any,
        _context: object,
        _executemany: bool,
    ) -> None:
        if not this_thread_only or threading.get_ident() == thread:
            sent.append(Sent(statement, parameters))

    event.listen(engine, "before_cursor_execute", keep)
    try:
        yield sent
    finally:
        event.remove(engine, "before_cursor_execute", keep)

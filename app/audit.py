"""The append-only, tamper-evident audit trail.

Every state change that matters calls :func:`record` inside the same transaction
as the change. Each shop's events form a chain: an event's seal covers its content
and the previous event's seal, so editing, deleting or reordering any row breaks
every later link, and :func:`verify_chain` names the first break. The chain head is
a row locked for the append, which serialises writers per shop.

Seals are HMAC-SHA256 under an audit key that lives outside the database
(``CASEWARD_AUDIT_KEYS``), so someone who can write to the database but does not
hold the key cannot recompute the chain after an edit. Each event names the key
that sealed it; the newest key seals, every configured key still verifies, and an
event sealed with a key nobody configured is refused. Events sealed before keyed
sealing existed (no key id) keep their plain SHA-256 links; once a chain holds a
keyed event, every later event must be keyed too. What a rewound head hides (the
newest events deleted) is caught against the signed checkpoints written outside
the database (:mod:`app.audit_checkpoints`).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from functools import cache
from typing import Any, cast

from sqlalchemy import (
    JSON,
    ForeignKey,
    Integer,
    String,
    Table,
    UniqueConstraint,
    Uuid,
    bindparam,
    column,
    func,
    insert,
    select,
    update,
)
from sqlalchemy import event as orm_events
from sqlalchemy.orm import (
    Mapped,
    ORMExecuteState,
    Session,
    SessionTransaction,
    mapped_column,
    sessionmaker,
)
from sqlalchemy.sql.dml import Insert

from app.actors import Actor
from app.card_numbers import masked_as
from app.clock import utcnow
from app.crypto import read_or_create_secret
from app.db import Base, UTCDateTime, locked_row
from app.settings import Settings, SettingsError

GENESIS_HASH = "0" * 64


class AuditEvent(Base):
    __tablename__ = "audit_events"
    __table_args__ = (UniqueConstraint("shop_id", "seq"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    shop_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("shops.id"))
    seq: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(64))
    # Who, as ``Actor.ref``; the kind and the surface they came through beside it.
    # Events sealed before actors were typed have no kind or surface.
    actor: Mapped[str] = mapped_column(String(255))
    actor_kind: Mapped[str | None] = mapped_column(String(16))
    actor_surface: Mapped[str | None] = mapped_column(String(32))
    case_id: Mapped[uuid.UUID | None] = mapped_column(Uuid, index=True)
    action_id: Mapped[uuid.UUID | None] = mapped_column(Uuid, index=True)
    data: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    prev_hash: Mapped[str] = mapped_column(String(64))
    hash: Mapped[str] = mapped_column(String(64))
    # The audit key that sealed this link; None for links sealed before keyed hashing.
    key_id: Mapped[str | None] = mapped_column(String(32))


class AuditHead(Base):
    """The last link of a shop's chain; locked while an event is appended."""

    __tablename__ = "audit_heads"

    shop_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("shops.id"), primary_key=True)
    seq: Mapped[int] = mapped_column(Integer)
    hash: Mapped[str] = mapped_column(String(64))


# -- audit keys ---------------------------------------------------------------------

KEYS_VARIABLE = "CASEWARD_AUDIT_KEYS"
_KEY_ID = re.compile(r"[A-Za-z0-9_-]{1,32}")
MIN_SECRET_LENGTH = 32
_SESSION_KEYS = "caseward.audit_keys"


class UnknownAuditKey(LookupError):
    """Something was sealed with a key id that is not configured."""

    def __init__(self, key_id: str) -> None:
        super().__init__(f"audit key {key_id!r} is not configured in {KEYS_VARIABLE}")
        self.key_id = key_id


@dataclass(frozen=True)
class AuditKeyRing:
    """The audit keys, newest first: the newest seals, all of them verify."""

    # (key id, secret) pairs; kept out of repr so a logged ring shows no secret.
    entries: tuple[tuple[str, bytes], ...] = field(repr=False)

    @property
    def current_id(self) -> str:
        return self.entries[0][0]

    def secret(self, key_id: str) -> bytes:
        for known_id, secret in self.entries:
            if known_id == key_id:
                return secret
        raise UnknownAuditKey(key_id)

    def knows(self, key_id: str) -> bool:
        return any(known_id == key_id for known_id, _ in self.entries)


def parse_audit_keys(entries: Sequence[str]) -> AuditKeyRing:
    """Read ``key_id:secret`` entries (newest first); errors name ``CASEWARD_AUDIT_KEYS``."""
    parsed: list[tuple[str, bytes]] = []
    for position, entry in enumerate(entries, start=1):
        key_id, separator, secret = entry.strip().partition(":")
        if not separator:
            raise SettingsError(
                f"{KEYS_VARIABLE} entry {position} must be 'key_id:secret' (newest first)"
            )
        if not _KEY_ID.fullmatch(key_id):
            raise SettingsError(
                f"{KEYS_VARIABLE} entry {position}: key id {key_id!r} must be 1-32 letters, "
                "digits, '_' or '-'"
            )
        # The secret is used as written (its UTF-8 bytes): no guessing at encodings.
        if len(secret.encode()) < MIN_SECRET_LENGTH:
            raise SettingsError(
                f"{KEYS_VARIABLE} key {key_id!r}: the secret must be at least "
                f"{MIN_SECRET_LENGTH} characters"
            )
        if any(known_id == key_id for known_id, _ in parsed):
            raise SettingsError(f"{KEYS_VARIABLE} names key {key_id!r} twice")
        parsed.append((key_id, secret.encode()))
    if not parsed:
        raise SettingsError(f"{KEYS_VARIABLE} holds no audit key")
    return AuditKeyRing(tuple(parsed))


def audit_key_ring(settings: Settings) -> AuditKeyRing:
    """This installation's audit keys: configured ones, else (outside production) one
    generated once into the instance folder."""
    if settings.audit_keys:
        return parse_audit_keys(settings.audit_keys)
    if settings.is_production:
        raise SettingsError(
            f"{KEYS_VARIABLE} must be set in production: the audit key has to live "
            "outside the database it protects"
        )
    entry = read_or_create_secret(
        settings.instance_path / "audit_key",
        lambda: f"local-{secrets.token_hex(4)}:{secrets.token_urlsafe(48)}",
    )
    return parse_audit_keys([entry])


def bind_key_ring(factory: sessionmaker[Session], keys: AuditKeyRing) -> AuditKeyRing:
    """Make every session from ``factory`` seal and verify with ``keys``."""
    factory.configure(info={_SESSION_KEYS: keys})
    return keys


def session_key_ring(session: Session) -> AuditKeyRing:
    """The keys bound to this session's factory, else those of the process environment
    (workers and the sweeper build their settings from it too)."""
    keys = session.info.get(_SESSION_KEYS)
    if isinstance(keys, AuditKeyRing):
        return keys
    return _environment_key_ring()


@cache
def _environment_key_ring() -> AuditKeyRing:
    return audit_key_ring(Settings.from_env())


# -- recording -----------------------------------------------------------------------

# Card numbers (13-19 digits, optionally grouped) and provider secrets never enter the trail.
# 13 to 19 digits, a space or dash at most between them, that are not the end of an
# identifier's path (the number of a Shopify gid follows a slash) nor run into letters.
_NUMBER = re.compile(r"(?<![\w/])(?:\d[ -]?){12,18}\d(?!\w)")
# Ids in the canonical UUID form, whose groups of digits would read as one number.
_UUID = re.compile(r"(\b[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}\b)")
_SECRET = re.compile(r"\b(sk|rk|whsec|shpat|shpss|cwst)_(live_|test_)?[A-Za-z0-9_-]{8,}")
_MASK_CARD_NUMBER = masked_as("[card number redacted]")


def redact(value: Any) -> Any:
    """Mask card numbers and secrets anywhere in an event's data, and nothing else: the
    ids an event names (a Shopify order's, a UUID) are its evidence."""
    if isinstance(value, str):
        masked = _SECRET.sub(lambda m: f"{m.group(1)}_{m.group(2) or ''}[redacted]", value)
        # split() keeps each UUID at the odd places; only the text between them is read.
        pieces = _UUID.split(masked)
        pieces[::2] = [_NUMBER.sub(_MASK_CARD_NUMBER, piece) for piece in pieces[::2]]
        return "".join(pieces)
    if isinstance(value, Mapping):
        return {str(k): redact(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact(v) for v in value]
    return value


def record(
    session: Session,
    *,
    shop_id: uuid.UUID,
    kind: str,
    actor: Actor,
    data: Mapping[str, Any] | None = None,
    case_id: uuid.UUID | None = None,
    action_id: uuid.UUID | None = None,
    now: datetime | None = None,
) -> AuditEvent:
    """Append one event to the shop's chain in the caller's transaction.

    The event is sealed and written when the transaction commits (:func:`seal_pending`),
    with every other event the transaction recorded, under one acquisition of the chain
    lock: the lock is held from the commit's start to its end, not from the first event
    on, so writers in one shop queue behind each other only that long. An event recorded
    in a savepoint that rolls back is forgotten with it. Until the commit, the returned
    event has no ``seq`` or seal and the transaction's own queries do not see it."""
    event = AuditEvent(
        shop_id=shop_id,
        kind=kind,
        actor=actor.ref,
        actor_kind=str(actor.kind),
        actor_surface=str(actor.surface),
        case_id=case_id,
        action_id=action_id,
        data=redact(dict(data or {})),
        created_at=now or utcnow(),
    )
    if not session.in_transaction():
        session.connection()  # begin the transaction the event belongs to, as a write does
    session.info.setdefault(_PENDING, []).append(event)
    return event


def seal_pending(session: Session) -> None:
    """Chain, seal and write the events recorded in the session's transaction: per shop
    (heads locked in one order, so two transactions never wait on each other in a
    circle), one locked read of the head, the events in the order they were recorded;
    then one statement that writes them all and moves the heads."""
    pending: list[AuditEvent] = session.info.pop(_PENDING, [])
    if not pending:
        return
    # The transaction's other writes go first, so the head's lock, taken last, is held
    # for the sealing and its one statement only.
    session.flush()
    keys = session_key_ring(session)
    by_shop: dict[uuid.UUID, list[AuditEvent]] = {}
    for event in pending:
        by_shop.setdefault(event.shop_id, []).append(event)
    heads = []
    for shop_id in sorted(by_shop, key=str):
        head = _locked_head(session, shop_id)
        seq, last_hash = head.seq, head.hash
        for event in by_shop[shop_id]:
            seq += 1
            event.seq, event.prev_hash, event.key_id = seq, last_hash, keys.current_id
            event.hash = last_hash = event_hash(event, keys)
        heads.append(_Head(shop_id, seq, last_hash))
    _write_sealed(session, pending, heads)


@dataclass(frozen=True)
class _Head:
    """A shop's chain head: its last event's number and hash."""

    shop_id: uuid.UUID
    seq: int
    hash: str


def _write_sealed(session: Session, events: list[AuditEvent], heads: list[_Head]) -> None:
    """Write sealed events and move their shops' heads in one statement. The returned
    :class:`AuditEvent` objects stay outside the session: nothing reads an event back but
    through a query."""
    moved = [asdict(head) for head in heads]
    if session.get_bind().dialect.name == "postgresql":
        rows = [{name: _as_json(getattr(e, name)) for name in _EVENT_COLUMNS} for e in events]
        session.execute(
            _WRITE_FROM_JSON,
            {"events": rows, "heads": [{k: _as_json(v) for k, v in h.items()} for h in moved]},
        )
    else:  # SQLite (the demo) has no json_to_recordset: an executemany for each table
        rows = [{name: getattr(e, name) for name in _EVENT_COLUMNS} for e in events]
        session.execute(insert(_EVENTS_TABLE), rows)
        session.execute(_MOVE_HEAD, [{f"head_{k}": v for k, v in h.items()} for h in moved])


def _as_json(value: Any) -> Any:
    """A column's value as ``json_to_recordset`` reads it back into the column's type."""
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    return value


def _locked_head(session: Session, shop_id: uuid.UUID) -> _Head:
    """The shop's head, row-locked until the transaction ends. Locked by a plain
    ``SELECT ... FOR UPDATE`` where it exists (every append but a shop's first): an
    upsert would write a new version of the row on every lock, beside the update after
    the append, and the row's old versions would slow every later lock until vacuumed.

    Read as columns, not as an :class:`AuditHead` in the session, which the write would
    then leave behind the row (those who read the head ask for it afresh)."""
    found = session.execute(_LOCKED_HEAD, {"shop_id": shop_id}).one_or_none()
    row = found or locked_row(session, AuditHead, shop_id=shop_id, seq=0, hash=GENESIS_HASH)
    return _Head(row.shop_id, row.seq, row.hash)


# Written as a table, not as mapped objects: the ORM would read every new id back.
_EVENTS_TABLE = cast(Table, AuditEvent.__table__)
# Every column but the generated id.
_EVENT_COLUMNS = tuple(col.name for col in _EVENTS_TABLE.columns if col.name != "id")


def _from_json(name: str, table: Table, columns: Sequence[str]) -> Any:
    """Rows handed over as one JSON array (``json_to_recordset``), typed as ``table``'s
    columns. The shop's column is typed by hand: see _LOCKED_HEAD."""
    return (
        func.json_to_recordset(bindparam(name, type_=JSON))
        .table_valued(*(column(c, Uuid() if c == "shop_id" else table.c[c].type) for c in columns))
        .render_derived(name=name, with_types=True)
    )


def _write_from_json() -> Insert:
    """PostgreSQL's write of any number of events and heads: the heads' update runs as a
    data-modifying ``WITH`` beside the insert, in the same round trip. Events and heads
    are handed over as JSON arrays of rows, so the statement's text is the same for one
    event or ten, and psycopg and the server parse it once and prepare it; a multi-row
    ``VALUES`` list is a new statement for every count of events (and past 50 parameters
    psycopg no longer caches its parsing), and one array per column costs psycopg an
    escape of every element."""
    events = _from_json("events", _EVENTS_TABLE, _EVENT_COLUMNS)
    heads = _from_json("heads", _HEADS_TABLE, ("shop_id", "seq", "hash"))
    move_heads = (
        update(_HEADS_TABLE)
        .where(_HEADS_TABLE.c.shop_id == heads.c.shop_id)
        .values(seq=heads.c.seq, hash=heads.c.hash)
        .cte("moved_heads")
    )
    return (
        insert(_EVENTS_TABLE)
        .from_select(list(_EVENT_COLUMNS), select(*(events.c[c] for c in _EVENT_COLUMNS)))
        .add_cte(move_heads)
    )


_HEADS_TABLE = cast(Table, AuditHead.__table__)
_WRITE_FROM_JSON = _write_from_json()
# Built once, at import: every commit that records anything runs it. The parameter is
# typed by hand: a foreign key column takes its type from the column it points to only
# once the mappers are configured, after this module is imported.
_LOCKED_HEAD = (
    select(_HEADS_TABLE.c.shop_id, _HEADS_TABLE.c.seq, _HEADS_TABLE.c.hash)
    .where(_HEADS_TABLE.c.shop_id == bindparam("shop_id", type_=Uuid))
    .with_for_update()
)
_MOVE_HEAD = (
    update(_HEADS_TABLE)
    .where(_HEADS_TABLE.c.shop_id == bindparam("head_shop_id", type_=Uuid))
    .values(seq=bindparam("head_seq"), hash=bindparam("head_hash"))
)


# What the session's transaction recorded and has not sealed yet, and where each open
# savepoint began in that list (a savepoint rolled back forgets what it recorded).
_PENDING = "caseward.audit_pending"
_SAVEPOINTS = "caseward.audit_savepoints"


@orm_events.listens_for(Session, "before_commit")
def _seal_on_commit(session: Session) -> None:
    # Also when a savepoint is released: what it sealed is undone with any outer
    # savepoint that rolls back, as every other row of it is.
    seal_pending(session)


@orm_events.listens_for(Session, "do_orm_execute")
def _seal_before_reading_the_trail(state: ORMExecuteState) -> None:
    # A transaction that reads the trail sees what it recorded, as with any other row:
    # sealed first, taking the chain lock from then on (rare outside tests).
    if (
        state.is_select
        and state.session.info.get(_PENDING)
        and any(mapper.class_ in (AuditEvent, AuditHead) for mapper in state.all_mappers)
    ):
        seal_pending(state.session)


@orm_events.listens_for(Session, "after_transaction_create")
def _mark_savepoint(session: Session, transaction: SessionTransaction) -> None:
    if transaction.nested:
        marks = session.info.setdefault(_SAVEPOINTS, {})
        marks[transaction] = len(session.info.get(_PENDING, ()))


@orm_events.listens_for(Session, "after_soft_rollback")
def _forget_rolled_back(session: Session, previous_transaction: SessionTransaction) -> None:
    if previous_transaction.nested:
        mark = session.info.get(_SAVEPOINTS, {}).pop(previous_transaction, None)
        if mark is not None:
            del session.info.get(_PENDING, [])[mark:]
    else:
        _forget_all(session)


@orm_events.listens_for(Session, "after_transaction_end")
def _end_of_transaction(session: Session, transaction: SessionTransaction) -> None:
    if not transaction.nested and transaction.parent is None:
        _forget_all(session)


def _forget_all(session: Session) -> None:
    session.info.pop(_PENDING, None)
    session.info.pop(_SAVEPOINTS, None)


def event_hash(event: AuditEvent, keys: AuditKeyRing | None = None) -> str:
    """The event's seal: HMAC-SHA256 under the key it names, or plain SHA-256 for an
    event sealed before keyed sealing (no key id). Raises :class:`UnknownAuditKey`."""
    content = sealed_content(event)
    if event.key_id is None:
        return hashlib.sha256(canonical(content)).hexdigest()
    if keys is None:
        raise UnknownAuditKey(event.key_id)
    content["key_id"] = event.key_id
    return hmac.new(keys.secret(event.key_id), canonical(content), hashlib.sha256).hexdigest()


def sealed_content(event: AuditEvent) -> dict[str, Any]:
    """What an event's seal covers, apart from the key id."""
    content: dict[str, Any] = {
        "shop_id": str(event.shop_id),
        "seq": event.seq,
        "kind": event.kind,
        "actor": event.actor,
        "case_id": str(event.case_id) if event.case_id else None,
        "action_id": str(event.action_id) if event.action_id else None,
        "data": event.data,
        "created_at": _timestamp(event.created_at),
        "prev_hash": event.prev_hash,
    }
    if event.actor_kind is not None:
        content["actor_kind"] = event.actor_kind
        content["actor_surface"] = event.actor_surface
    return content


def canonical(content: Mapping[str, Any]) -> bytes:
    return json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _timestamp(moment: datetime) -> str:
    # SQLite hands back naive datetimes; the chain must hash the same text either way.
    return moment.replace(tzinfo=None).isoformat(timespec="microseconds")


# -- verifying -----------------------------------------------------------------------


@dataclass(frozen=True)
class ChainReport:
    events: int
    broken_at: int | None = None
    problem: str | None = None
    # Events sealed before keyed sealing: they prove order, not who wrote them.
    unkeyed: int = 0
    head_seq: int = 0
    head_hash: str = GENESIS_HASH

    @property
    def intact(self) -> bool:
        return self.broken_at is None


def verify_chain(
    session: Session, shop_id: uuid.UUID, keys: AuditKeyRing | None = None
) -> ChainReport:
    """Recompute the shop's chain; report the first event whose link does not hold."""
    keys = keys or session_key_ring(session)
    expected_prev, expected_seq, count, unkeyed = GENESIS_HASH, 1, 0, 0
    keyed_from: int | None = None
    events = session.scalars(
        select(AuditEvent).where(AuditEvent.shop_id == shop_id).order_by(AuditEvent.seq)
    )
    for event in events:
        count += 1
        broken = _broken_link(event, expected_seq, expected_prev, keyed_from, keys)
        if broken is not None:
            return ChainReport(count, *broken, unkeyed=unkeyed)
        if event.key_id is None:
            unkeyed += 1
        else:
            keyed_from = keyed_from or event.seq
        expected_prev, expected_seq = event.hash, event.seq + 1
    head = session.get(AuditHead, shop_id, populate_existing=True)
    if head is not None and (head.seq, head.hash) != (expected_seq - 1, expected_prev):
        return ChainReport(count, head.seq, "events after this one were removed", unkeyed)
    return ChainReport(count, None, None, unkeyed, expected_seq - 1, expected_prev)


def _broken_link(
    event: AuditEvent,
    expected_seq: int,
    expected_prev: str,
    keyed_from: int | None,
    keys: AuditKeyRing,
) -> tuple[int, str] | None:
    """Where and why ``event`` does not continue the chain, or None if it does."""
    if event.seq != expected_seq:
        return expected_seq, f"event {expected_seq} is missing"
    if not hmac.compare_digest(event.prev_hash, expected_prev):
        return event.seq, "does not link to the previous event"
    if event.key_id is None and keyed_from is not None:
        # Dropping the key id would let a plain SHA-256 chain be recomputed from here.
        return event.seq, f"has no audit key id, though event {keyed_from} was keyed"
    if event.key_id is not None and not keys.knows(event.key_id):
        return event.seq, f"is sealed with audit key {event.key_id!r}, which is not configured"
    if not hmac.compare_digest(event_hash(event, keys), event.hash):
        return event.seq, "content does not match its hash"
    return None

"""What the receiving server keeps, in one SQLite file so that a restart keeps it.

Payments and their refunds, customers and their credits, every idempotency key with the
body first sent under it and the effect it made, the secrets it verifies with, and every
request it received (headers included). A key and its effect are written in one
transaction: after a crash, either both are on disk or neither is.

One connection, used under one lock: the receiver is a test fixture, and serial writes
make "one key, one effect" easy to see.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

JSON = dict[str, Any]

FILE_NAME = "merchant-receiver.sqlite3"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS secrets (secret TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS payments (
    id TEXT PRIMARY KEY, currency TEXT NOT NULL, amount INTEGER NOT NULL,
    captured INTEGER NOT NULL, disputed INTEGER NOT NULL, customer TEXT,
    created INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS customers (
    id TEXT PRIMARY KEY, email TEXT, currency TEXT, deleted INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS effects (
    id TEXT PRIMARY KEY, kind TEXT NOT NULL, target TEXT NOT NULL, amount INTEGER NOT NULL,
    currency TEXT NOT NULL, status TEXT NOT NULL, metadata TEXT NOT NULL,
    idempotency_key TEXT NOT NULL, created INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS keys (
    idempotency_key TEXT PRIMARY KEY, body TEXT NOT NULL, effect_id TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS requests (
    number INTEGER PRIMARY KEY AUTOINCREMENT, method TEXT NOT NULL, path TEXT NOT NULL,
    headers TEXT NOT NULL, idempotency_key TEXT, body_key TEXT, body_type TEXT,
    verified INTEGER, status INTEGER, dropped INTEGER NOT NULL DEFAULT 0,
    replayed INTEGER NOT NULL DEFAULT 0, received_at REAL NOT NULL);
"""
_TABLES = ("secrets", "payments", "customers", "effects", "keys", "requests")


class Store:
    """The receiver's records; ``data_dir`` None keeps them in memory (gone with the object)."""

    def __init__(self, data_dir: Path | None) -> None:
        if data_dir is not None:
            data_dir.mkdir(parents=True, exist_ok=True)
        target = ":memory:" if data_dir is None else str(data_dir / FILE_NAME)
        self._db = sqlite3.connect(target, check_same_thread=False, isolation_level=None)
        self._db.row_factory = sqlite3.Row
        self._lock = threading.Lock()
        self._db.executescript(_SCHEMA)

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One transaction, alone: committed when the block ends, rolled back if it raises."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def reset(self) -> None:
        """Forget everything: records, keys, secrets, requests."""
        with self.transaction() as db:
            for table in _TABLES:
                db.execute(f"DELETE FROM {table}")  # noqa: S608  (our own table names)

    # ------------------------------------------------------------ secrets

    def set_secrets(self, secrets: list[str]) -> None:
        with self.transaction() as db:
            db.execute("DELETE FROM secrets")
            db.executemany("INSERT INTO secrets VALUES (?)", [(s,) for s in secrets])

    def secrets(self) -> list[str]:
        with self.transaction() as db:
            return [row["secret"] for row in db.execute("SELECT secret FROM secrets")]

    # ------------------------------------------------------------ seeding

    def put_payment(self, payment: JSON) -> None:
        with self.transaction() as db:
            db.execute(
                "INSERT OR REPLACE INTO payments VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    payment["id"],
                    payment["currency"],
                    payment["amount"],
                    payment["captured"],
                    int(payment["disputed"]),
                    payment["customer"],
                    payment["created"],
                ),
            )

    def put_customer(self, customer: JSON) -> None:
        with self.transaction() as db:
            db.execute(
                "INSERT OR REPLACE INTO customers VALUES (?, ?, ?, ?)",
                (
                    customer["id"],
                    customer["email"],
                    customer["currency"],
                    int(customer["deleted"]),
                ),
            )

    # ------------------------------------------------------------ reading

    def payment(self, db: sqlite3.Connection, payment_id: str) -> JSON | None:
        row = db.execute("SELECT * FROM payments WHERE id = ?", (payment_id,)).fetchone()
        if row is None:
            return None
        return {
            "id": row["id"],
            "currency": row["currency"],
            "amount": row["amount"],
            "captured": row["captured"],
            "disputed": bool(row["disputed"]),
            "customer": row["customer"],
            "created": row["created"],
            "refunds": [_effect_json(e) for e in self._effects_of(db, "refund", payment_id)],
        }

    def customer(self, db: sqlite3.Connection, customer_id: str) -> JSON | None:
        row = db.execute("SELECT * FROM customers WHERE id = ?", (customer_id,)).fetchone()
        if row is None:
            return None
        return {
            "id": row["id"],
            "email": row["email"],
            "currency": row["currency"],
            "deleted": bool(row["deleted"]),
            "credits": [
                _effect_json(e) for e in self._effects_of(db, "customer_credit", customer_id)
            ],
        }

    def customers_with_email(self, db: sqlite3.Connection, email: str) -> list[JSON]:
        """``[{"id", "email"}]`` of the customers not deleted whose email is ``email``,
        whatever its case (ASCII letters, as SQLite's ``lower`` folds them)."""
        rows = db.execute(
            "SELECT id, email FROM customers WHERE lower(email) = lower(?) AND deleted = 0 "
            "ORDER BY id",
            (email,),
        ).fetchall()
        return [{"id": row["id"], "email": row["email"]} for row in rows]

    def first_request(self, db: sqlite3.Connection, key: str) -> tuple[str, JSON] | None:
        """The body first sent under ``key`` and the effect it made, if it made one."""
        row = db.execute("SELECT * FROM keys WHERE idempotency_key = ?", (key,)).fetchone()
        if row is None:
            return None
        effect = db.execute("SELECT * FROM effects WHERE id = ?", (row["effect_id"],)).fetchone()
        return row["body"], dict(effect)

    def effects(self) -> list[JSON]:
        """Every refund and credit made, oldest first, with the key it was made under."""
        with self.transaction() as db:
            rows = db.execute("SELECT * FROM effects ORDER BY rowid").fetchall()
        return [
            {
                **_effect_json(dict(row)),
                "kind": row["kind"],
                "target": row["target"],
                "idempotency_key": row["idempotency_key"],
            }
            for row in rows
        ]

    def _effects_of(self, db: sqlite3.Connection, kind: str, target: str) -> list[JSON]:
        rows = db.execute(
            "SELECT * FROM effects WHERE kind = ? AND target = ? ORDER BY rowid", (kind, target)
        ).fetchall()
        return [dict(row) for row in rows]

    # ------------------------------------------------------------ writing

    def make_effect(self, db: sqlite3.Connection, effect: JSON, *, key: str, body: str) -> None:
        """The effect and the key it was made under, in the caller's transaction."""
        db.execute(
            "INSERT INTO effects VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                effect["id"],
                effect["kind"],
                effect["target"],
                effect["amount"],
                effect["currency"],
                effect["status"],
                json.dumps(effect["metadata"]),
                key,
                effect["created"],
            ),
        )
        db.execute("INSERT INTO keys VALUES (?, ?, ?)", (key, body, effect["id"]))

    def next_effect_id(self, db: sqlite3.Connection, prefix: str) -> str:
        count = db.execute("SELECT COUNT(*) FROM effects").fetchone()[0]
        return f"{prefix}_{count + 1:06d}"

    # ------------------------------------------------------------ requests received

    def arrived(self, method: str, path: str, headers: JSON, received_at: float) -> int:
        with self.transaction() as db:
            cursor = db.execute(
                "INSERT INTO requests (method, path, headers, idempotency_key, received_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (
                    method,
                    path,
                    json.dumps(headers),
                    _header(headers, "Idempotency-Key"),
                    received_at,
                ),
            )
            return int(cursor.lastrowid or 0)

    def read(
        self, number: int, *, verified: bool, body_key: str | None, body_type: str | None
    ) -> None:
        with self.transaction() as db:
            db.execute(
                "UPDATE requests SET verified = ?, body_key = ?, body_type = ? WHERE number = ?",
                (int(verified), body_key, body_type, number),
            )

    def answered(self, number: int, *, status: int | None, dropped: bool, replayed: bool) -> None:
        with self.transaction() as db:
            db.execute(
                "UPDATE requests SET status = ?, dropped = ?, replayed = ? WHERE number = ?",
                (status, int(dropped), int(replayed), number),
            )

    def requests(self) -> list[JSON]:
        with self.transaction() as db:
            rows = db.execute("SELECT * FROM requests ORDER BY number").fetchall()
        return [
            {
                "number": row["number"],
                "method": row["method"],
                "path": row["path"],
                "headers": json.loads(row["headers"]),
                "idempotency_key": row["idempotency_key"],
                "body_key": row["body_key"],
                "type": row["body_type"],
                "verified": None if row["verified"] is None else bool(row["verified"]),
                "status": row["status"],
                "dropped": bool(row["dropped"]),
                "replayed": bool(row["replayed"]),
            }
            for row in rows
        ]


def _effect_json(row: JSON) -> JSON:
    """A refund or credit as the protocol's facts show it."""
    return {
        "id": row["id"],
        "amount": row["amount"],
        "currency": row["currency"],
        "status": row["status"],
        "created": row["created"],
        "metadata": json.loads(row["metadata"]),
    }


def _header(headers: JSON, name: str) -> str | None:
    for key, value in headers.items():
        if key.lower() == name.lower():
            return str(value)
    return None

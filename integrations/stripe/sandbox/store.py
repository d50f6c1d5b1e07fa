"""In-memory state, one :class:`Space` per (account, mode), and its JSON snapshot.

Everything Stripe would keep for an account lives in its space: objects by collection in
creation order (lists are newest first), private facts Stripe would not show (which test
card a charge used, a webhook endpoint's secret), scheduled transitions (a refund that
will fail later), and per-account switches (balance insufficient). Spaces never share
data, which is what makes account isolation and test/live separation hold.

One re-entrant lock guards all of it; request handlers run under it so a refund's checks
and its writes are atomic, like Stripe's own per-charge locking.
"""

from __future__ import annotations

import copy
import itertools
import json
import os
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from integrations.sandbox_kit import Schedule

from .auth import Account, ApiKey

JSON = dict[str, Any]

SNAPSHOT_VERSION = 1


class Space:
    """One account's data in one mode (test or live)."""

    def __init__(self, account_id: str, livemode: bool) -> None:
        self.account_id = account_id
        self.livemode = livemode
        self.collections: dict[str, dict[str, JSON]] = {}
        self.private: dict[str, JSON] = {}
        self.order: dict[str, int] = {}
        self.tasks = Schedule()
        # (collection, field) -> (ids by the field's value, how many objects are in it)
        self._groups: dict[tuple[str, str], tuple[dict[str, list[str]], int]] = {}
        self.settings: JSON = {
            "balance_sufficient": True,
            "refund_mode": None,
            "refund_settle_after": 0.0,
        }
        self._seq = 0

    # -- objects ---------------------------------------------------------------------------

    def coll(self, name: str) -> dict[str, JSON]:
        """The collection ``name`` (created on first use)."""
        return self.collections.setdefault(name, {})

    def get(self, collection: str, object_id: str) -> JSON | None:
        """The stored object, or ``None``."""
        return self.collections.get(collection, {}).get(object_id)

    def put(self, collection: str, obj: JSON) -> JSON:
        """Insert or replace; new objects get the next creation sequence number."""
        object_id = str(obj["id"])
        if object_id not in self.order:
            self._seq += 1
            self.order[object_id] = self._seq
        self.coll(collection)[object_id] = obj
        return obj

    def remove(self, collection: str, object_id: str) -> None:
        """Forget an object (deleted coupons, webhook endpoints)."""
        self.collections.get(collection, {}).pop(object_id, None)

    def newest_first(self, collection: str) -> list[JSON]:
        """All objects of a collection, newest first (Stripe's list order)."""
        return list(reversed(list(self.collections.get(collection, {}).values())))

    def grouped(self, collection: str, key: str) -> dict[str, list[str]]:
        """Ids of ``collection``'s objects by their ``key`` field, oldest first, for a field
        that never changes once an object exists (a refund's ``charge``): so what belongs to
        one object (a charge's refunds) is found without scanning every object there is.
        Brought up to date with the objects added since the last call."""
        objects = self.collections.get(collection, {})
        groups, counted = self._groups.get((collection, key), ({}, 0))
        if counted > len(objects):  # something was removed: count again
            groups, counted = {}, 0
        for obj in itertools.islice(objects.values(), counted, None):
            groups.setdefault(str(obj[key]), []).append(str(obj["id"]))
        self._groups[(collection, key)] = (groups, len(objects))
        return groups

    def seq(self, object_id: str) -> int:
        """Creation order, for cursor pagination that survives filtering."""
        return self.order.get(object_id, 0)

    def priv(self, object_id: str) -> JSON:
        """Private facts about an object (created on first use)."""
        return self.private.setdefault(object_id, {})

    # -- scheduled transitions -------------------------------------------------------------

    def schedule(self, due: float, kind: str, object_id: str, **data: Any) -> None:
        """Arrange for ``kind`` to happen to ``object_id`` once the clock reaches ``due``."""
        self.tasks.add(due, kind, id=object_id, **data)

    # -- snapshot --------------------------------------------------------------------------

    def to_json(self) -> JSON:
        """Everything in this space as plain JSON."""
        return {
            "account": self.account_id,
            "livemode": self.livemode,
            "collections": self.collections,
            "private": self.private,
            "order": self.order,
            "tasks": self.tasks.items,
            "settings": self.settings,
            "seq": self._seq,
        }

    @classmethod
    def from_json(cls, data: JSON) -> Space:
        """Inverse of :meth:`to_json`."""
        space = cls(str(data["account"]), bool(data["livemode"]))
        space.collections = data.get("collections") or {}
        space.private = data.get("private") or {}
        space.order = {str(k): int(v) for k, v in (data.get("order") or {}).items()}
        space.tasks = Schedule(data.get("tasks") or [])
        space.settings.update(data.get("settings") or {})
        space._seq = int(data.get("seq") or len(space.order))
        return space


class Store:
    """All accounts, keys and spaces, behind one lock."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.accounts: dict[str, Account] = {}
        self.keys: dict[str, ApiKey] = {}
        self.spaces: dict[tuple[str, bool], Space] = {}
        self.dirty = False

    def space(self, account_id: str, livemode: bool) -> Space:
        """The space for an account and mode (created on first use)."""
        key = (account_id, livemode)
        space = self.spaces.get(key)
        if space is None:
            space = Space(account_id, livemode)
            self.spaces[key] = space
        return space

    def all_spaces(self) -> Iterator[Space]:
        """Every space, for scheduled work and control lookups."""
        return iter(list(self.spaces.values()))

    def clear(self) -> None:
        """Forget everything (control ``reset``)."""
        with self.lock:
            self.accounts.clear()
            self.keys.clear()
            self.spaces.clear()
            self.dirty = True

    def to_json(self) -> JSON:
        """Deep copy of the whole state as JSON-ready data."""
        with self.lock:
            return copy.deepcopy(
                {
                    "accounts": [a.to_json() for a in self.accounts.values()],
                    "keys": [k.to_json() for k in self.keys.values()],
                    "spaces": [s.to_json() for s in self.spaces.values()],
                }
            )

    def load_json(self, data: JSON) -> None:
        """Replace the state with a snapshot's."""
        with self.lock:
            self.accounts = {a["id"]: Account.from_json(a) for a in data.get("accounts", [])}
            self.keys = {k["key"]: ApiKey.from_json(k) for k in data.get("keys", [])}
            self.spaces = {}
            for raw in data.get("spaces", []):
                space = Space.from_json(raw)
                self.spaces[(space.account_id, space.livemode)] = space


def write_snapshot(path: Path, document: JSON) -> None:
    """Write atomically (temp file + rename) so a crash never leaves half a snapshot."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=str(path.parent))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump({"version": SNAPSHOT_VERSION, **document}, handle)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_snapshot(path: Path) -> JSON | None:
    """The snapshot document, or ``None`` when the file does not exist yet."""
    if not path.exists():
        return None
    with path.open(encoding="utf-8") as handle:
        document: JSON = json.load(handle)
    if document.get("version") != SNAPSHOT_VERSION:
        raise ValueError(f"unsupported sandbox snapshot version in {path}")
    return document

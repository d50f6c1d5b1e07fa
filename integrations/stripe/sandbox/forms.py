"""Stripe's form encoding, both ways of reading it.

Stripe's v1 API takes ``application/x-www-form-urlencoded`` bodies with brackets for
structure: ``metadata[order]=7``, ``items[0][price]=price_1``, ``expand[]=charge``
(curl) or ``expand[0]=charge`` (the Python SDK). :func:`parse_form` turns that into
nested dicts whose keys stay strings; whether a node is a list is decided only when a
handler asks for one (:meth:`Params.array`), so ``metadata[0]=x`` stays a metadata key.

:class:`Params` is what handlers read from. Its accessors raise Stripe's validation
errors (missing, unknown, wrong type), which are never stored under an idempotency key.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl

from .errors import ValidationError, missing_param, unknown_param, validation

Node = dict[str, Any]


def parse_form(raw: str) -> Node:
    """Parse a urlencoded body or query string into nested dicts (all leaves are str)."""
    root: Node = {}
    for key, value in parse_qsl(raw, keep_blank_values=True):
        base, _, rest = key.partition("[")
        parts = [base]
        if rest:
            parts.extend(rest.rstrip("]").split("]["))
        _assign(root, parts, value, key)
    return root


def _assign(root: Node, parts: list[str], value: str, raw_key: str) -> None:
    node = root
    for index, segment in enumerate(parts):
        last = index == len(parts) - 1
        # ``expand[]=a&expand[]=b``: an empty segment appends with the next free index.
        part = segment if segment != "" else str(len(node))
        if last:
            if isinstance(node.get(part), dict):
                raise validation(f"Invalid value for {raw_key}: expected a hash.", param=raw_key)
            node[part] = value
            return
        child = node.get(part)
        if child is None:
            child = {}
            node[part] = child
        elif not isinstance(child, dict):
            raise validation(f"Invalid hash: {raw_key}", param=raw_key)
        node = child


def _label(path: tuple[str, ...]) -> str:
    head, *rest = path
    return head + "".join(f"[{part}]" for part in rest)


class Params:
    """Read access to one request's parameters with Stripe's validation messages.

    ``allow`` declares the accepted top-level names so a typo or an outdated field
    (``coupon`` on promotion codes since 2025) is refused the way Stripe refuses it.
    """

    def __init__(self, data: Node, path: tuple[str, ...] = ()) -> None:
        self._data = data
        self._path = path

    # -- structure -------------------------------------------------------------------------

    def raw(self) -> Node:
        """The parsed tree, for fingerprinting and for handlers that need it whole."""
        return self._data

    def fingerprint(self) -> str:
        """Canonical form used to compare a retried request with the first one."""
        return json.dumps(self._data, sort_keys=True, separators=(",", ":"))

    def has(self, name: str) -> bool:
        """Whether the parameter was sent at all (even empty)."""
        return name in self._data

    def label(self, name: str) -> str:
        """The parameter's name as Stripe prints it in errors (``items[0][price]``)."""
        return _label((*self._path, name))

    def allow(self, names: Iterable[str]) -> None:
        """Refuse any parameter outside ``names`` (``expand`` is always accepted)."""
        allowed = set(names) | {"expand"}
        for name in self._data:
            if name not in allowed:
                raise unknown_param(self.label(name))

    def child(self, name: str, *, required: bool = False) -> Params | None:
        """A nested hash parameter (``promotion[...]``)."""
        value = self._data.get(name)
        if value is None:
            if required:
                raise missing_param(self.label(name))
            return None
        if not isinstance(value, dict):
            raise validation(f"Invalid object: {self.label(name)}", param=self.label(name))
        return Params(value, (*self._path, name))

    def array(self, name: str) -> list[Any] | None:
        """An array parameter (``items[0][...]``, ``expand[]``) in index order."""
        value = self._data.get(name)
        if value is None:
            return None
        if value == "":
            return []
        if not isinstance(value, dict) or not all(k.isdigit() for k in value):
            raise validation(f"Invalid array: {self.label(name)}", param=self.label(name))
        return [value[k] for k in sorted(value, key=int)]

    def children(self, name: str) -> list[Params]:
        """An array of hashes, each wrapped for validation with its indexed label."""
        items = self.array(name) or []
        result = []
        for index, item in enumerate(items):
            if not isinstance(item, dict):
                label = _label((*self._path, name, str(index)))
                raise validation(f"Invalid object: {label}", param=label)
            result.append(Params(item, (*self._path, name, str(index))))
        return result

    # -- scalars ---------------------------------------------------------------------------

    def string(self, name: str, *, required: bool = False, max_length: int = 5000) -> str | None:
        """A string parameter; ``None`` when absent."""
        value = self._data.get(name)
        if value is None:
            if required:
                raise missing_param(self.label(name))
            return None
        if isinstance(value, dict):
            raise validation(f"Invalid string: {self.label(name)}", param=self.label(name))
        if len(value) > max_length:
            raise validation(
                f"Invalid string: {value[:20]}...; must be at most {max_length} characters",
                param=self.label(name),
                code="parameter_invalid_string",
            )
        if required and value == "":
            raise validation(
                f"You passed an empty string for '{self.label(name)}'. We assume empty values "
                "are an attempt to unset a parameter; however '"
                f"{self.label(name)}' cannot be unset. You should remove '{self.label(name)}' "
                "from your request or supply a non-empty value.",
                param=self.label(name),
                code="parameter_invalid_empty",
            )
        return str(value)

    def integer(
        self,
        name: str,
        *,
        required: bool = False,
        minimum: int | None = None,
        maximum: int | None = None,
    ) -> int | None:
        """An integer parameter, with Stripe's ``Invalid integer`` family of errors."""
        text = self.string(name, required=required)
        if text is None or text == "":
            if required:
                raise missing_param(self.label(name))
            return None
        try:
            value = int(text)
        except ValueError:
            raise validation(
                f"Invalid integer: {text}",
                param=self.label(name),
                code="parameter_invalid_integer",
            ) from None
        if minimum is not None and value < minimum:
            message = (
                "Invalid positive integer"
                if minimum == 1
                else f"This value must be greater than or equal to {minimum}."
            )
            raise validation(message, param=self.label(name), code="parameter_invalid_integer")
        if maximum is not None and value > maximum:
            raise validation(
                f"This value must be less than or equal to {maximum}.",
                param=self.label(name),
                code="parameter_invalid_integer",
            )
        return value

    def decimal(self, name: str, *, required: bool = False) -> float | None:
        """A decimal parameter (``percent_off``)."""
        text = self.string(name, required=required)
        if text is None or text == "":
            return None
        try:
            return float(text)
        except ValueError:
            raise validation(
                f"Invalid decimal: {text}", param=self.label(name), code="parameter_invalid_decimal"
            ) from None

    def boolean(self, name: str, *, default: bool | None = None) -> bool | None:
        """A boolean parameter (``true``/``false`` as the SDK sends them)."""
        text = self.string(name)
        if text is None or text == "":
            return default
        if text in ("true", "1"):
            return True
        if text in ("false", "0"):
            return False
        raise validation(f"Invalid boolean: {text}", param=self.label(name))

    def enum(
        self,
        name: str,
        choices: Iterable[str],
        *,
        required: bool = False,
        default: str | None = None,
    ) -> str | None:
        """A string limited to ``choices``; the message lists them the way Stripe does."""
        value = self.string(name, required=required)
        if value is None or value == "":
            return default
        options = list(choices)
        if value not in options:
            listed = (
                ", ".join(options[:-1]) + f", or {options[-1]}" if len(options) > 1 else options[0]
            )
            raise validation(
                f"Invalid {self.label(name)}: must be one of {listed}", param=self.label(name)
            )
        return value

    def metadata(self, name: str = "metadata") -> dict[str, str | None] | None:
        """Metadata updates: ``None`` = untouched, ``{}`` from ``metadata=`` = clear all,
        a key mapped to ``None`` = unset that key (Stripe's empty-string convention)."""
        if name not in self._data:
            return None
        value = self._data[name]
        if value == "":
            return {}
        if not isinstance(value, dict):
            raise validation(f"Invalid hash: {self.label(name)}", param=self.label(name))
        result: dict[str, str | None] = {}
        if len(value) > 50:
            raise validation("You can have at most 50 keys in metadata.", param=self.label(name))
        for key, item in value.items():
            if isinstance(item, dict):
                raise validation(
                    f"Invalid value for metadata key {key}: must be a string",
                    param=f"{self.label(name)}[{key}]",
                )
            if len(key) > 40:
                raise validation(
                    f"Invalid key: {key} must be a string under 40 characters",
                    param=self.label(name),
                )
            if len(item) > 500:
                raise validation(
                    f"Invalid val: {item[:20]}... must be a string under 500 characters",
                    param=self.label(name),
                )
            result[key] = item if item != "" else None
        return result


def apply_metadata(
    current: Mapping[str, str] | None, update: dict[str, str | None] | None
) -> dict[str, str]:
    """Merge a metadata update into the stored metadata using Stripe's rules."""
    if update is None:
        return dict(current or {})
    if update == {}:
        return {}
    merged = dict(current or {})
    for key, value in update.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    return merged


def new_metadata(update: dict[str, str | None] | None) -> dict[str, str]:
    """Metadata for a newly created object (empty values are simply dropped)."""
    return {k: v for k, v in (update or {}).items() if v is not None}


__all__ = ["Node", "Params", "ValidationError", "apply_metadata", "new_metadata", "parse_form"]

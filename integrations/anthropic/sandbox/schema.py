"""Does a tool input match the tool's ``input_schema``? The sandbox needs to know.

A scripted ``tool_use`` answer must match the schema the request declared (a test that
scripts a wrong input would otherwise pass for the wrong reason), and a scripted
``malformed_tool_input`` must not. The check covers the JSON Schema keywords tool schemas
use: ``type``, ``enum``, ``const``, ``properties``, ``required``,
``additionalProperties``, ``items``, ``anyOf``, and the numeric, length and size bounds.
Keywords outside that list are not checked.
"""

from __future__ import annotations

from typing import Any

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}


def _is(value: Any, name: str) -> bool:
    # JSON has no booleans among its numbers, Python does.
    if isinstance(value, bool) and name in ("integer", "number"):
        return False
    if name == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _TYPES.get(name, ()))


def problems(value: Any, schema: Any, where: str = "input") -> list[str]:
    """What about ``value`` breaks ``schema`` (empty when it matches)."""
    if not isinstance(schema, dict):
        return []
    found: list[str] = []
    kinds = schema.get("type")
    if kinds is not None:
        names = kinds if isinstance(kinds, list) else [kinds]
        if not any(_is(value, str(name)) for name in names):
            return [f"{where}: expected {' or '.join(map(str, names))}"]
    if "enum" in schema and value not in schema["enum"]:
        found.append(f"{where}: not one of {schema['enum']}")
    if "const" in schema and value != schema["const"]:
        found.append(f"{where}: must be {schema['const']!r}")
    if "anyOf" in schema and all(problems(value, option, where) for option in schema["anyOf"]):
        found.append(f"{where}: matches none of its anyOf schemas")
    found += _bounds(value, schema, where)
    if isinstance(value, dict):
        found += _object(value, schema, where)
    if isinstance(value, list) and "items" in schema:
        for index, item in enumerate(value):
            found += problems(item, schema["items"], f"{where}[{index}]")
    return found


def _bounds(value: Any, schema: dict[str, Any], where: str) -> list[str]:
    found = []
    if _is(value, "number"):
        if "minimum" in schema and value < schema["minimum"]:
            found.append(f"{where}: below {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            found.append(f"{where}: above {schema['maximum']}")
    if isinstance(value, str | list):
        low, high = (
            ("minLength", "maxLength") if isinstance(value, str) else ("minItems", "maxItems")
        )
        if low in schema and len(value) < schema[low]:
            found.append(f"{where}: shorter than {schema[low]}")
        if high in schema and len(value) > schema[high]:
            found.append(f"{where}: longer than {schema[high]}")
    return found


def _object(value: dict[str, Any], schema: dict[str, Any], where: str) -> list[str]:
    found = [
        f"{where}.{name}: required" for name in schema.get("required", ()) if name not in value
    ]
    properties = schema.get("properties") or {}
    extra = schema.get("additionalProperties", True)
    for name, item in value.items():
        if name in properties:
            found += problems(item, properties[name], f"{where}.{name}")
        elif extra is False:
            found.append(f"{where}.{name}: not allowed")
        elif isinstance(extra, dict):
            found += problems(item, extra, f"{where}.{name}")
    return found

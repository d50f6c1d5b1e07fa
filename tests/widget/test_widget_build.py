"""The theme app extension as Shopify will read it: assets within the size budget, an
app embed block whose schema is valid and targets the page body, and an extension
configuration of type theme."""

from __future__ import annotations

import importlib.util
import json
import re
import tomllib
from pathlib import Path
from types import ModuleType
from typing import Any

from integrations.shopify.sandbox.storefront import POSITIONS, EmbedSettings

WIDGET = Path(__file__).resolve().parents[2] / "widget"
BLOCK = WIDGET / "extension" / "blocks" / "chat.liquid"


def _build() -> ModuleType:
    spec = importlib.util.spec_from_file_location("widget_build", WIDGET / "build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _schema() -> dict[str, Any]:
    found = re.search(r"{%\s*schema\s*%}(.*?){%\s*endschema\s*%}", BLOCK.read_text(), re.S)
    assert found is not None, "the block has no schema"
    schema = json.loads(found.group(1))
    assert isinstance(schema, dict)
    return schema


def test_the_assets_fit_the_size_budget_and_the_build_says_so() -> None:
    build = _build()
    files = build.assets()

    assert set(files) == {"caseward-chat.js", "caseward-chat.css"}
    assert build.gzipped_size(files) <= 12 * 1024
    assert build.main([]) == 0


def test_the_build_fails_above_the_budget(monkeypatch: Any) -> None:
    build = _build()
    monkeypatch.setattr(build, "BUDGET", build.gzipped_size(build.assets()) - 1)

    assert build.main([]) == 1


def test_the_app_embed_block_targets_the_body_with_the_merchants_settings() -> None:
    schema = _schema()
    settings = {setting["id"]: setting for setting in schema["settings"]}

    assert schema["target"] == "body"
    assert schema["name"]
    assert [
        settings[name]["type"] for name in ("accent", "accent_text", "position", "greeting")
    ] == [
        "color",
        "color",
        "select",
        "text",
    ]
    assert tuple(option["value"] for option in settings["position"]["options"]) == POSITIONS
    # Everything the block reads is a setting it declares.
    used = set(re.findall(r"block\.settings\.(\w+)", BLOCK.read_text()))
    assert used == set(settings)
    # The sandbox's storefront starts from the same defaults the theme editor shows.
    defaults = EmbedSettings()
    assert {name: settings[name].get("default", "") for name in settings} == defaults.to_json()


def test_the_block_loads_the_assets_as_a_stylesheet_and_a_module() -> None:
    block = BLOCK.read_text()

    assert "{{ 'caseward-chat.css' | asset_url | stylesheet_tag }}" in block
    assert re.search(
        r"""<script type="module" src="{{ 'caseward-chat.js' \| asset_url }}">""", block
    )
    extension = tomllib.loads((WIDGET / "extension" / "shopify.extension.toml").read_text())
    assert extension["type"] == "theme"
    assert extension["name"] and extension["handle"] == "caseward-chat"

"""Measure the storefront chat against its size budget, with nothing but Python.

    python widget/build.py

The widget is one ES module and one stylesheet that run as written, kept where Shopify
serves them from (``extension/assets/``, loaded with ``asset_url`` by the app embed
block), so there is nothing to compile or copy. Every shop page carries them, so their
gzipped size together has a budget: above :data:`BUDGET` bytes this fails (exit 1).
"""

from __future__ import annotations

import argparse
import gzip
import sys
from pathlib import Path

ASSETS = Path(__file__).resolve().parent / "extension" / "assets"
FILES = ("caseward-chat.js", "caseward-chat.css")
BUDGET = 12 * 1024


def assets() -> dict[str, bytes]:
    """The files a shop page loads: each file's name and bytes."""
    return {name: (ASSETS / name).read_bytes() for name in FILES}


def gzipped_size(files: dict[str, bytes]) -> int:
    """The bytes a shopper downloads for the files, each gzipped (as CDNs serve them)."""
    return sum(len(gzip.compress(data, compresslevel=9, mtime=0)) for data in files.values())


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(prog="python widget/build.py", description=__doc__).parse_args(argv)
    files = assets()
    size = gzipped_size(files)
    raw = sum(len(data) for data in files.values())
    print(f"{', '.join(FILES)}: {raw} bytes, {size} gzipped (budget {BUDGET})")
    if size > BUDGET:
        print(f"over budget by {size - BUDGET} bytes gzipped", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

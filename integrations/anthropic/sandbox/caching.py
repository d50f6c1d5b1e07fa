"""Anthropic's prompt cache, kept on the sandbox clock.

The cache reads a prompt in one order, tools, then system, then messages. A block with
``cache_control`` is a breakpoint: the prefix up to and including it is cached for its
``ttl`` (5 minutes unless ``1h``), refreshed each time a request reads it. A prefix
shorter than the minimum cacheable length is never cached. Entries are kept per API key
(each stands for an organization) and model.

The sequence of one request (:meth:`PromptCache.use`): hash the prefix at each
breakpoint; find the longest breakpoint prefix still cached, read it and refresh it;
write every later breakpoint prefix long enough to cache; report usage as the real
API does: ``cache_read_input_tokens`` for the prefix read, ``cache_creation_input_tokens``
for what was written beyond it, and ``input_tokens`` for what follows the last
breakpoint cached (the whole prompt when nothing was).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from .validation import CACHE_TTLS, Block

# The smallest prefix Anthropic caches for most models.
MIN_CACHEABLE_TOKENS = 1024


@dataclass(frozen=True)
class CacheUsage:
    """A request's input tokens as the usage object splits them."""

    input_tokens: int
    cache_read_input_tokens: int
    cache_creation_input_tokens: int
    ephemeral_5m_input_tokens: int
    ephemeral_1h_input_tokens: int


@dataclass(frozen=True)
class _Breakpoint:
    key: str
    tokens: int
    ttl: str


class PromptCache:
    """Cached prefixes and when each expires, on the sandbox clock."""

    def __init__(self, min_tokens: int = MIN_CACHEABLE_TOKENS) -> None:
        self.min_tokens = min_tokens
        self._lock = threading.Lock()
        self._expiry: dict[str, float] = {}

    def use(self, scope: str, blocks: Sequence[Block], now: float) -> CacheUsage:
        """Read and write the cache for one answered request; returns its usage."""
        digest = hashlib.sha256(scope.encode("utf-8"))
        total = 0
        points: list[_Breakpoint] = []
        for block in blocks:
            digest.update(block.identity.encode("utf-8") + b"\x00")
            total += block.tokens
            if block.cache_ttl is not None and total >= self.min_tokens:
                points.append(_Breakpoint(digest.hexdigest(), total, block.cache_ttl))
        written = dict.fromkeys(CACHE_TTLS, 0)
        with self._lock:
            self._expiry = {key: at for key, at in self._expiry.items() if at > now}
            hit = next((p for p in reversed(points) if p.key in self._expiry), None)
            read = hit.tokens if hit is not None else 0
            covered = read
            for point in points:
                if point.tokens <= read:
                    continue
                written[point.ttl] += point.tokens - covered
                covered = point.tokens
                self._expiry[point.key] = now + CACHE_TTLS[point.ttl]
            if hit is not None:
                self._expiry[hit.key] = now + CACHE_TTLS[hit.ttl]
        return CacheUsage(
            input_tokens=total - covered,
            cache_read_input_tokens=read,
            cache_creation_input_tokens=covered - read,
            ephemeral_5m_input_tokens=written["5m"],
            ephemeral_1h_input_tokens=written["1h"],
        )

    def clear(self) -> None:
        """Forget every cached prefix."""
        with self._lock:
            self._expiry.clear()

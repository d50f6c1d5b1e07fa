"""Where a merchant's endpoint may be: at a public address, or (outside production only)
on this machine.

The owner chooses the endpoint's URL, and Caseward then sends signed requests to it from
inside its own network. An endpoint on a private, loopback, link-local or reserved
address would make Caseward a way into whatever only that network reaches. Two checks
keep it out, each with its own job:

1. When the endpoint is connected (``app.connections.merchant.endpoint_url``, in
   production): the host must be a DNS name, not an IP literal, and every address it
   resolves to must be public (:func:`addresses_of`, :func:`is_public`). This is the
   check the owner meets: a 400 naming ``endpoint_url`` while they can still fix it,
   and nothing stored.
2. On each new connection the adapter makes (:func:`peer_guard`): the address it
   actually reached must be public, checked before a byte of the request, or even of
   the TLS handshake, is sent. This is what holds when the name's DNS changes after
   it was connected (rebinding to an internal address). It sees direct connections
   only: through an HTTP proxy the peer is the proxy, which must keep its own rules.

An endpoint URL naming this machine (:data:`THIS_MACHINE`) is one the connect-time check
lets through outside production only; its connections must reach a loopback address.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from typing import Any

__all__ = ["THIS_MACHINE", "PrivatePeer", "addresses_of", "is_public", "peer_guard"]

# The names of this machine an endpoint URL may use outside production.
THIS_MACHINE = frozenset({"localhost", "127.0.0.1", "::1"})


class PrivatePeer(Exception):
    """A connection reached an address the endpoint may not have; nothing was sent on it."""

    def __init__(self, address: str) -> None:
        super().__init__(address)
        self.address = address


def addresses_of(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to now; OSError when it resolves to none."""
    found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return sorted({str(entry[4][0]) for entry in found})


def is_public(address: str) -> bool:
    """Whether ``address`` is a global unicast address (not loopback, private,
    link-local, shared, reserved, documentation or multicast)."""
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped  # ::ffff:10.0.0.1 is 10.0.0.1
    return ip.is_global and not ip.is_multicast


def _is_loopback(address: str) -> bool:
    return ipaddress.ip_address(address).is_loopback


def peer_guard(host: str) -> Callable[[str, dict[str, Any]], None]:
    """An httpcore ``trace`` callback for a request to ``host``: when the request opens
    a new connection to ``host``, the address reached must be public (a loopback one when
    ``host`` names this machine), else the connection is closed at once and
    :class:`PrivatePeer` raised. A kept-alive connection was checked when it was made."""
    host = host.lower()
    wanted = _is_loopback if host in THIS_MACHINE else is_public
    connecting_to: list[str] = []

    def trace(event: str, info: dict[str, Any]) -> None:
        if event == "connection.connect_tcp.started":
            connecting_to[:] = [str(info["host"]).lower()]
        elif event == "connection.connect_tcp.complete" and connecting_to == [host]:
            stream = info["return_value"]
            address = str(stream.get_extra_info("server_addr")[0])
            if not wanted(address):
                stream.close()
                raise PrivatePeer(address)

    return trace

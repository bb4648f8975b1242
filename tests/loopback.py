"""The suite's network guard: a connection to an address outside loopback fails loudly.

tests/conftest.py installs it in the test processes; tests/forker.py runs this module's
source in the interpreters it starts for commands and examples (so it has no
``from __future__`` import: that source follows other code there).
"""

import ipaddress
import socket
from collections.abc import Callable
from typing import Any


def loopback_only(real_connect: Callable[..., Any]) -> Callable[..., Any]:
    """``socket.socket.connect`` refusing any address outside loopback."""

    def guarded(self: socket.socket, address: Any) -> Any:
        if self.family in (socket.AF_INET, socket.AF_INET6):
            host = address[0]
            try:
                loopback = ipaddress.ip_address(host).is_loopback
            except ValueError:
                loopback = host == "localhost"
            if not loopback:
                raise ConnectionRefusedError(f"tests may not connect to {host}")
        return real_connect(self, address)

    return guarded

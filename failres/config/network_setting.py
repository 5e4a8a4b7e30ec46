"""The `network` setting of `[sandbox]`, a binding and a gate: what values it may hold.

"on", "off", "open", or a list of hosts (`"api.anthropic.com"`, `"*.pypi.org"`,
`"registry.npmjs.org:443"`, and the host's loopback with a port, `"127.0.0.1:11434"`,
for a local model server). What each means for a world is `failres.sandbox.network`'s
to decide; here a value that could not mean anything is refused when the file is read.
"""

from __future__ import annotations

import ipaddress
import re

OFF, OPEN, ON = "off", "open", "on"
LOCAL_NAMES = ("127.0.0.1", "localhost")
_NAME = re.compile(r"(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]{0,62})(\.[A-Za-z0-9]([A-Za-z0-9-]{0,62}))*\.?")


def network_value_problem(raw: object) -> str | None:
    """Why `raw` is not a `network` value ("on", "off", "open", or a list of hosts), or None."""
    if isinstance(raw, str):
        if raw in ("", ON, OFF, OPEN):
            return None
        return f'must be "on", "off", "open" or a list of hosts such as ["api.anthropic.com"], got "{raw}"'
    if not isinstance(raw, list):
        return f'must be "on", "off", "open" or a list of hosts, got {type(raw).__name__}'
    for item in raw:
        problem = host_entry_problem(item)
        if problem:
            return problem
    return None


def host_entry_problem(entry: object) -> str | None:
    """Why one allow-list entry is not a host name, `name:port` or loopback address with its port."""
    if not isinstance(entry, str) or not entry:
        return f"each host must be a non-empty string, got {entry!r}"
    host, port = split_entry(entry)
    if port == -1 or not host:
        return f'"{entry}" is not a host name, "host:port" or "127.0.0.1:PORT"'
    if port is not None and not 1 <= port <= 65535:
        return f'"{entry}": the port must be between 1 and 65535'
    if host in LOCAL_NAMES and port is None:
        return f'"{entry}": a local server needs its port ("{host}:11434")'
    if is_ip(host) or _NAME.fullmatch(host):
        return None
    return f'"{entry}" is not a host name, "host:port" or "127.0.0.1:PORT"'


def split_entry(entry: str) -> tuple[str, int | None]:
    """("host", port or None) from "host" / "host:port"; a port that is not a number is -1."""
    host, sep, port = entry.rpartition(":")
    if not sep or "]" in port:
        return entry.lower(), None
    return host.lower(), int(port) if port.isdigit() else -1


def is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text.strip("[]"))
    except ValueError:
        return False
    return True

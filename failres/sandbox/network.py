"""What a world may reach of the network, decided from the configuration (pure).

A world always has a network namespace of its own: its loopback is private, so a
task's `FAILRES_PORT` cannot be taken by another task's seat, and no host daemon, no
host loopback port and no host abstract unix socket is there (measured without it: a
seat reached a host daemon through an abstract socket, and under `--jobs 2` one seat
bound every port of the range and answered the other task's gate). What it may reach
goes through failres's bridge (`bridge.py` on the host, `forwarder.py` inside):

- `"off"`: nothing at all, and no forwarder is started (gates pay nothing);
- a list: only those hosts, through failres's HTTP proxy; an entry naming the host's
  loopback with a port (`"127.0.0.1:11434"`, `"localhost:1234"`) is a local server
  (ollama, LM Studio) reached at that same address inside;
- `"open"`: every host on the internet through the proxy, but not the host's loopback
  unless listed: "open" is for the agent's API, not for the daemons of this machine.

`"on"`, the default of `[sandbox] network`, means each command's own default: a
binding's recipe hosts (an agent failres knows), else `"open"`; gates `"off"`; setups
`"open"` (they install dependencies) unless the gate lists the registries.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Sequence

from lessons.frozen import record
from failres.agents.recipes import API_HOSTS
from failres.config.network_setting import LOCAL_NAMES, OFF, ON, OPEN, is_ip, split_entry

# A URL naming the host's loopback with a port: a local model server the agent is set to use.
_LOCAL_URL = re.compile(r"\bhttps?://(?:127\.0\.0\.1|localhost):(\d{1,5})\b")


@record
class Policy:
    """What one command's world may reach: `kind` off|open|list; `hosts` ("name", "name:port")."""

    kind: str
    hosts: tuple[str, ...] = ()
    local_ports: tuple[int, ...] = ()   # host loopback ports reached at the same address inside

    @property
    def bridged(self) -> bool:
        """Does this world need the forwarder at all?"""
        return self.kind != OFF


def effective_policy(own: str | Sequence[str], sandbox: str | Sequence[str], *, role: str, program: str = "",
                     found_local: Iterable[int] = ()) -> Policy:
    """The policy of one command: its own setting, else `[sandbox] network`, else its role's default.

    `role` is "seat", "gate" or "setup" (whose own setting is its gate's). `found_local`
    are loopback ports named in the agent's environment or its own configuration (its
    model server): reachable wherever the network is not off.
    """
    # "" and "on" follow; a list decides, an empty one too: `network = []` lists no host, so the
    # world reaches none (read as unset, it once fell through to a seat's default, "open").
    value = next((v for v in (own, sandbox) if v not in ("", ON)), "")
    if value == "":
        value = {"gate": OFF, "setup": OPEN}.get(role) or list(recipe_hosts(program)) or OPEN
    if value == OFF:
        return Policy(OFF)
    if isinstance(value, str):
        return Policy(OPEN, (), tuple(sorted(set(found_local))))
    hosts = tuple(dict.fromkeys(h.lower() for h in value))
    listed = [port for host, port in map(split_entry, hosts) if host in LOCAL_NAMES and port]
    return Policy("list", hosts, tuple(sorted(set(listed) | set(found_local))))


def recipe_hosts(program: str) -> tuple[str, ...]:
    """The API hosts of the agent `program` names (by its file name), () for one failres does not know."""
    name = program.rsplit("/", 1)[-1]
    return next((hosts for agent, hosts in API_HOSTS.items() if name == agent or name.startswith(agent + "-")), ())


def local_ports_named(texts: Iterable[str]) -> tuple[int, ...]:
    """The loopback ports that URLs in `texts` name (`http://127.0.0.1:8080/v1`), for the bridge."""
    ports = {int(m) for text in texts for m in _LOCAL_URL.findall(text) if 0 < int(m) <= 65535}
    return tuple(sorted(ports))


def allowed(policy: Policy, host: str, port: int) -> bool:
    """May the proxy connect this world to `host:port`? Host names as the client sent them.

    An IP literal passes only when listed (a name on the list must not be bypassed by
    its address); the host's loopback only as a listed local server, whatever the
    policy, because "open" means the internet, not this machine's daemons.
    """
    host = host.lower().rstrip(".").strip("[]")
    if policy.kind == OFF:
        return False
    if host in LOCAL_NAMES or _is_loopback(host):
        return port in policy.local_ports and host in LOCAL_NAMES + ("::1",)
    if policy.kind == OPEN:
        return True
    for entry in policy.hosts:
        name, listed_port = split_entry(entry)
        if listed_port is not None and listed_port != port:
            continue
        if name == host or (name.startswith("*.") and host.endswith(name[1:]) and not is_ip(host)):
            return True
    return False


def refused_address(address: str) -> bool:
    """Is an address a host name resolved to one the proxy must not connect to?

    A listed (or, under "open", any) name that resolves to the host's loopback would
    otherwise reach a host daemon: local servers are reached by their loopback name only.
    """
    return _is_loopback(address)


def _is_loopback(text: str) -> bool:
    try:
        return ipaddress.ip_address(text.strip("[]")).is_loopback
    except ValueError:
        return False


def proxy_environment(port: int) -> dict[str, str]:
    """The variables that send a world's clients through the proxy at 127.0.0.1:`port` inside."""
    url = f"http://127.0.0.1:{port}"
    env = {}
    for name in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY"):
        env[name] = env[name.lower()] = url
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    return env

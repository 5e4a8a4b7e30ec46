"""One task's network: the policy of each command, the bridges serving them, the forwarder's words.

`SeatWorld.wrap` asks `for_command` what a command's world needs besides its mounts:
the forwarder to start it under, the proxy variables, the files the forwarder needs to
be readable, the bridge's socket directory. A command whose network is "off" gets
nothing (no forwarder, no bridge: a gate pays nothing), and each distinct policy of the
task is served by one bridge, started when first needed and stopped by `close`.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from lessons.frozen import record
from failres.config.model import Config
from failres.sandbox.bridge import FORWARDER_COPY, PROXY_SOCKET, Bridge, local_socket
from failres.sandbox.layout import NET_INSIDE
from failres.sandbox.network import OPEN, Policy, effective_policy, local_ports_named, proxy_environment

log = logging.getLogger("failres.sandbox")

# The proxy's port inside: the world's loopback is its own, so only a listed local
# server's port could take it (then the next one is used).
PROXY_PORT = 3128
# A configuration file an agent reads is searched for a local server's URL up to this size.
_READ_LIMIT = 1 << 20
# What was said this run, so each warning is said once however many tasks and dispatches.
_SAID: set[str] = set()
_SAID_LOCK = threading.Lock()


@record
class CommandNetwork:
    """What a world needs for its command's network (all empty for "off")."""

    policy: Policy
    launcher: tuple[str, ...] = ()
    setenv: tuple[tuple[str, str], ...] = ()
    readable: tuple[str, ...] = ()
    bridge: str = ""


class TaskNetwork:
    """The bridges of one task's commands, one per distinct policy."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self._bridges: dict[Policy, Bridge] = {}
        self._lock = threading.Lock()

    def for_command(self, argv: Sequence[str], *, own: str | Sequence[str], role: str, who: str,
                    env: Mapping[str, str], read: Iterable[str]) -> CommandNetwork:
        """The network of one command: `own` its setting, `role` seat|gate|setup, `who` its config section."""
        found = local_ports_named([*env.values(), *_small_texts(read)]) if role == "seat" else ()
        policy = effective_policy(own, self.config.sandbox.network, role=role, program=argv[0] if argv else "",
                                  found_local=found)
        if not policy.bridged:
            return CommandNetwork(policy)
        if policy.kind == OPEN:
            _say_once(_open_warning(own, self.config.sandbox.network, role, who))
        bridge = self._bridge(policy)
        proxy_port = next(p for p in range(PROXY_PORT, PROXY_PORT + 1000) if p not in policy.local_ports)
        python = os.path.realpath(sys.executable)
        launcher = (python, "-S", "-I", f"{NET_INSIDE}/{FORWARDER_COPY}", NET_INSIDE, f"{proxy_port}={PROXY_SOCKET}",
                    *(f"{port}={local_socket(port)}" for port in policy.local_ports), "--")
        return CommandNetwork(policy, launcher, tuple(proxy_environment(proxy_port).items()),
                              (python, sys.base_prefix), str(bridge.directory))

    def _bridge(self, policy: Policy) -> Bridge:
        with self._lock:
            if policy not in self._bridges:
                self._bridges[policy] = Bridge(policy)
            return self._bridges[policy]

    def close(self) -> None:
        with self._lock:
            bridges, self._bridges = list(self._bridges.values()), {}
        for bridge in bridges:
            bridge.close()


def _open_warning(own: str | Sequence[str], sandbox: str | Sequence[str], role: str, who: str) -> str:
    if own == OPEN or sandbox == OPEN:
        why = f'{who} network = "open"' if own == OPEN else '[sandbox] network = "open"'
        return f"{why}: its seat world may reach every host on the internet"
    if role == "setup":
        return (f'{who} setup runs with network "open" (it installs dependencies): list the registries it needs '
                f'in {who} network, e.g. ["pypi.org", "files.pythonhosted.org"]')
    return (f'{who} has no network list and failres knows no API hosts for its program: its seat world may reach '
            f'every host on the internet; list them in {who} network, e.g. ["api.example.com"]')


def _say_once(line: str) -> None:
    with _SAID_LOCK:
        if line in _SAID:
            return
        _SAID.add(line)
    log.warning("%s", line)


def _small_texts(paths: Iterable[str]) -> list[str]:
    """The text of each named file an agent reads (its configuration), where small enough."""
    texts = []
    for path in paths:
        try:
            if os.path.isfile(path) and os.path.getsize(path) <= _READ_LIMIT:
                texts.append(Path(path).read_text(encoding="utf-8", errors="replace"))
        except OSError:
            continue
    return texts

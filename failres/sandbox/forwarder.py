"""Inside a world: listen on the world's own loopback, carry each connection to a host socket.

    python -S -I forwarder.py SOCKET_DIR PORT=NAME [PORT=NAME ...] -- COMMAND [ARG ...]

A world has a network namespace of its own and nothing else of the network. For each
`PORT=NAME`, this listens on 127.0.0.1:PORT (and [::1]:PORT) inside and carries every
connection to the unix socket SOCKET_DIR/NAME, which failres serves on the host
(`bridge.py`: the HTTP proxy that checks the allow-list, or a local server the person
listed). Then it becomes COMMAND: the listeners are handed to a grandchild first, so
the command is exactly the process bubblewrap would have started (its exit status, its
signals, its process id and children unchanged), and the relay, an orphan of the
namespace's init, dies with the namespace when the command ends.

It runs with the interpreter failres runs under, with `-S -I` (no site, no user
paths: it starts in a few milliseconds and imports nothing but the standard library),
and imports nothing of failres: the world may not see the rest of it.
"""

import os
import selectors
import socket
import sys

CHUNK = 65536
# Past this much unsent data one way, stop reading the other side until it drains.
HIGH_WATER = 4 * CHUNK


def listen(port):
    """The listening sockets for one port: IPv4 always, IPv6 loopback where the world has it."""
    out = []
    for family, address in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
        try:
            server = socket.socket(family, socket.SOCK_STREAM)
            server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            server.bind((address, port))
            server.listen(128)
            server.setblocking(False)
            out.append(server)
        except OSError as error:
            if family == socket.AF_INET:
                sys.stderr.write(f"failres: cannot listen on 127.0.0.1:{port} in the world: {error}\n")
    return out


class Pipe:
    """One direction of a connection: what `source` sent that `sink` has not taken yet."""

    def __init__(self, source, sink):
        self.source, self.sink, self.data, self.ended = source, sink, bytearray(), False


def relay(selector, listeners, command_pid):
    """Accept on every listener and carry bytes both ways until the namespace ends.

    It also ends once the command is gone and reaped: a world's namespace kills it first,
    but a forwarder run anywhere else must not outlive its command.
    """
    for server, path in listeners:
        selector.register(server, selectors.EVENT_READ, ("accept", path))
    while True:
        events = selector.select(timeout=1.0)
        if not events:
            try:
                os.kill(command_pid, 0)
            except ProcessLookupError:
                os._exit(0)
        for key, _ in events:
            kind, thing = key.data
            if kind == "accept":
                accept(selector, key.fileobj, thing)
            elif key.fileobj in thing:  # not closed by its peer's step in this same round
                step(selector, key.fileobj, thing)


def accept(selector, server, path):
    try:
        client, _ = server.accept()
    except OSError:
        return
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(path)
    except OSError:
        client.close()
        upstream.close()
        return
    client.setblocking(False)
    upstream.setblocking(False)
    state = {client: Pipe(client, upstream), upstream: Pipe(upstream, client)}  # keyed by source
    for sock in (client, upstream):
        selector.register(sock, selectors.EVENT_READ, ("conn", state))


def step(selector, sock, state):
    """Write what the peer sent `sock`, read what `sock` has for the peer, then watch again."""
    out, into = state[sock], _other(state, sock)   # sock -> peer, peer -> sock
    try:
        if into.data:
            del into.data[:sock.send(into.data)]
            if not into.data and into.ended:
                sock.shutdown(socket.SHUT_WR)
        if not out.ended and len(out.data) < HIGH_WATER:
            try:
                chunk = sock.recv(CHUNK)
            except BlockingIOError:
                chunk = None
            if chunk == b"":
                out.ended = True
                if not out.data:
                    out.sink.shutdown(socket.SHUT_WR)
            elif chunk:
                out.data += chunk
    except OSError:
        close(selector, state)
        return
    if all(p.ended and not p.data for p in state.values()):
        close(selector, state)
        return
    for each in state:
        watch(selector, each, state)


def _other(state, sock):
    return next(pipe for source, pipe in state.items() if source is not sock)


def watch(selector, sock, state):
    """Wait on `sock` for what it can do next: read (room in its pipe), write (its peer's data)."""
    pipe = state[sock]
    events = 0 if pipe.ended or len(pipe.data) >= HIGH_WATER else selectors.EVENT_READ
    if _other(state, sock).data:
        events |= selectors.EVENT_WRITE
    registered = sock in selector.get_map()
    if events and registered:
        selector.modify(sock, events, ("conn", state))
    elif events:
        selector.register(sock, events, ("conn", state))
    elif registered:
        selector.unregister(sock)


def close(selector, state):
    for sock in state:
        try:
            selector.unregister(sock)
        except (KeyError, ValueError):
            pass
        sock.close()
    state.clear()


def main(argv):
    split = argv.index("--")
    directory, specs, command = argv[1], argv[2:split], argv[split + 1:]
    listeners = []
    for spec in specs:
        port, _, name = spec.partition("=")
        listeners += [(server, os.path.join(directory, name)) for server in listen(int(port))]
    command_pid = os.getpid()
    if os.fork() == 0:
        # The relay runs in a grandchild, so the command has no child it did not start.
        if os.fork() == 0:
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            relay(selectors.DefaultSelector(), listeners, command_pid)
        os._exit(0)
    os.wait()
    try:
        os.execvp(command[0], command)
    except OSError as error:
        sys.stderr.write(f"failres: cannot run {command[0]}: {error.strerror}\n")
        os._exit(127)


if __name__ == "__main__":
    main(sys.argv)

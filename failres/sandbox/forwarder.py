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
import select
import sys

# `_socket` and `select.epoll`, not `socket` and `selectors`: those two modules' imports
# (enum classes built at import) cost more than the interpreter's whole start.
import _socket

CHUNK = 65536
# Past this much unsent data one way, stop reading the other side until it drains.
HIGH_WATER = 4 * CHUNK
IN, OUT = select.EPOLLIN, select.EPOLLOUT


def listen(port):
    """The listening sockets for one port: IPv4 always, IPv6 loopback where the world has it."""
    out = []
    for family, address in ((_socket.AF_INET, "127.0.0.1"), (_socket.AF_INET6, "::1")):
        try:
            server = _socket.socket(family, _socket.SOCK_STREAM)
            server.setsockopt(_socket.SOL_SOCKET, _socket.SO_REUSEADDR, 1)
            server.bind((address, port))
            server.listen(128)
            server.setblocking(False)
            out.append(server)
        except OSError as error:
            if family == _socket.AF_INET:
                sys.stderr.write(f"failres: cannot listen on 127.0.0.1:{port} in the world: {error}\n")
    return out


class Side:
    """One socket of a connection, and what its peer sent that it has not taken yet."""

    def __init__(self, sock):
        self.sock, self.peer, self.pending, self.ended, self.watched = sock, None, bytearray(), False, 0


def relay(poller, listeners, command_pid):
    """Accept on every listener and carry bytes both ways until the namespace ends.

    It also ends once the command is gone and reaped: a world's namespace kills it first,
    but a forwarder run anywhere else must not outlive its command.
    """
    servers = {server.fileno(): (server, path) for server, path in listeners}
    sides = {}
    for fd in servers:
        poller.register(fd, IN)
    while True:
        events = poller.poll(1.0)
        if not events:
            try:
                os.kill(command_pid, 0)
            except ProcessLookupError:
                os._exit(0)
        for fd, _ in events:
            if fd in servers:
                accept(poller, sides, *servers[fd])
            elif fd in sides:  # not closed by its peer's step in this same round
                step(poller, sides, sides[fd])


def accept(poller, sides, server, path):
    try:
        fd, _ = server._accept()
    except OSError:
        return
    client = _socket.socket(fileno=fd)
    upstream = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        upstream.connect(path)
    except OSError:
        client.close()
        upstream.close()
        return
    one, two = Side(client), Side(upstream)
    one.peer, two.peer = two, one
    for side in (one, two):
        side.sock.setblocking(False)
        sides[side.sock.fileno()] = side
        watch(poller, side)


def step(poller, sides, side):
    """Write what the peer sent this side, read what it has for the peer, then watch both again."""
    peer = side.peer
    try:
        if side.pending:
            del side.pending[:side.sock.send(side.pending)]
            if not side.pending and peer.ended:
                side.sock.shutdown(_socket.SHUT_WR)
        if not side.ended and len(peer.pending) < HIGH_WATER:
            try:
                chunk = side.sock.recv(CHUNK)
            except BlockingIOError:
                chunk = None
            if chunk == b"":
                side.ended = True
                if not peer.pending:
                    peer.sock.shutdown(_socket.SHUT_WR)
            elif chunk:
                peer.pending += chunk
    except OSError:
        close(poller, sides, side)
        return
    if side.ended and peer.ended and not side.pending and not peer.pending:
        close(poller, sides, side)
        return
    watch(poller, side)
    watch(poller, peer)


def watch(poller, side):
    """Wait on a side for what it can do next: read (room at its peer), write (what it was sent)."""
    events = 0 if side.ended or len(side.peer.pending) >= HIGH_WATER else IN
    if side.pending:
        events |= OUT
    fd = side.sock.fileno()
    if events and side.watched:
        poller.modify(fd, events)
    elif events:
        poller.register(fd, events)
    elif side.watched:
        poller.unregister(fd)
    side.watched = events


def close(poller, sides, side):
    for each in (side, side.peer):
        fd = each.sock.fileno()
        sides.pop(fd, None)
        if each.watched:
            poller.unregister(fd)
        each.sock.close()


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
            relay(select.epoll(), listeners, command_pid)
        os._exit(0)
    os.wait()
    try:
        os.execvp(command[0], command)
    except OSError as error:
        sys.stderr.write(f"failres: cannot run {command[0]}: {error.strerror}\n")
        os._exit(127)


if __name__ == "__main__":
    main(sys.argv)

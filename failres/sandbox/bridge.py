"""On the host: the unix sockets a world's forwarder reaches, and what each one lets through.

A world has no network of its own beyond its private loopback (`network.py`); its
forwarder (`forwarder.py`) carries each connection to one of the sockets served here,
in a directory bound into the world at `NET_INSIDE`:

- `proxy`: an HTTP proxy (`CONNECT host:port`, and `GET http://host/...`) that asks
  `network.allowed` and answers 403 for anything else, so a seat reaches its agent's
  API and nothing more, whatever it does with the proxy;
- `local-PORT`: the host's 127.0.0.1:PORT, for a local server the policy lists (a
  model server), which the world then has at that same address.

One bridge serves one policy for one task: it runs on threads of the failres process
for as long as the task's world (`SeatWorld.close` stops it), and a connection is two
plain copying threads, which the kernel's buffers make fast enough for an agent's API.
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import tempfile
import threading
from pathlib import Path

from failres.sandbox.network import Policy, allowed, refused_address, split_entry

log = logging.getLogger("failres.sandbox")

PROXY_SOCKET = "proxy"
FORWARDER = Path(__file__).with_name("forwarder.py")
# The forwarder's copy beside the sockets: the world reads it there wherever failres is
# installed (in a checkout of the person's repository it would be hidden, or be the seat's).
FORWARDER_COPY = "forwarder.py"
_HEAD_LIMIT = 64 * 1024
_CHUNK = 65536
_CONNECT_TIMEOUT = 30.0
# A seat may open connections without end or send a request head slowly: each costs a
# thread of the failres process, so a bridge holds at most this many, and waits this
# long for a head.
_MAX_CONNECTIONS = 256
_HEAD_TIMEOUT = 30.0


def local_socket(port: int) -> str:
    return f"local-{port}"


class Bridge:
    """The sockets of one policy, served until `close`."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        # Short and fresh: a unix socket's path must fit in 108 bytes, which a task's
        # dispatch directory under a deep home may not.
        self.directory = Path(tempfile.mkdtemp(prefix="failres-net-", dir="/tmp" if os.path.isdir("/tmp") else None))
        self._servers: list[socket.socket] = []
        self._closed = threading.Event()
        self._slots = threading.BoundedSemaphore(_MAX_CONNECTIONS)
        shutil.copyfile(FORWARDER, self.directory / FORWARDER_COPY)
        self._serve(PROXY_SOCKET, self._proxy)
        for port in policy.local_ports:
            self._serve(local_socket(port), lambda conn, port=port: self._local(conn, port))

    def _serve(self, name: str, handle) -> None:
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(str(self.directory / name))
        server.listen(128)
        self._servers.append(server)
        threading.Thread(target=self._accept, args=(server, handle), name=f"failres-bridge-{name}",
                         daemon=True).start()

    def _accept(self, server: socket.socket, handle) -> None:
        while not self._closed.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                return
            if not self._slots.acquire(blocking=False):
                conn.close()
                continue
            threading.Thread(target=self._handle, args=(handle, conn), name="failres-bridge-conn", daemon=True).start()

    def _handle(self, handle, conn: socket.socket) -> None:
        try:
            handle(conn)
        except OSError:
            conn.close()
        finally:
            self._slots.release()

    def _local(self, conn: socket.socket, port: int) -> None:
        try:
            upstream = socket.create_connection(("127.0.0.1", port), timeout=_CONNECT_TIMEOUT)
        except OSError:
            conn.close()
            return
        upstream.settimeout(None)
        splice(conn, upstream)

    def _proxy(self, conn: socket.socket) -> None:
        head = _read_head(conn)
        request = parse_request(head) if head is not None else None
        if request is None:
            _answer(conn, 400, "Bad Request")
            return
        method, host, port, rest = request
        if not allowed(self.policy, host, port):
            log.debug("failres: the world's proxy refused %s:%s", host, port)
            _answer(conn, 403, "Forbidden", f"failres: {host}:{port} is not in this binding's network allow-list\n")
            return
        upstream = self._connect(host, port)
        if upstream is None:
            _answer(conn, 502, "Bad Gateway")
            return
        if method == "CONNECT":
            conn.sendall(b"HTTP/1.1 200 Connection Established\r\n\r\n" + b"")
            if rest:
                upstream.sendall(rest)
        else:
            upstream.sendall(rest)
        splice(conn, upstream)

    def _connect(self, host: str, port: int) -> socket.socket | None:
        """A connection to `host:port`; a name that resolves to the host's loopback is refused."""
        local = host.strip("[]") in ("127.0.0.1", "localhost", "::1")
        try:
            infos = socket.getaddrinfo("127.0.0.1" if host == "localhost" else host.strip("[]"), port,
                                       type=socket.SOCK_STREAM)
        except OSError:
            return None
        for family, kind, proto, _, address in infos:
            if not local and refused_address(address[0]):
                continue
            sock = socket.socket(family, kind, proto)
            sock.settimeout(_CONNECT_TIMEOUT)
            try:
                sock.connect(address)
            except OSError:
                sock.close()
                continue
            sock.settimeout(None)
            return sock
        return None

    def close(self) -> None:
        """Stop serving; connections under way end with their peers. The socket files go."""
        self._closed.set()
        for server in self._servers:
            try:
                server.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            server.close()
        shutil.rmtree(self.directory, ignore_errors=True)


def parse_request(head: bytes) -> tuple[str, str, int, bytes] | None:
    """(method, host, port, what to send upstream) from a proxy request head, or None (pure).

    For CONNECT what follows the head; for an absolute-URI request the request made
    origin-form (`GET /path`), its `Proxy-*` headers dropped and `Connection: close`, so
    a kept-alive proxy connection cannot carry a second request to another host.
    """
    text_end = head.find(b"\r\n\r\n")
    if text_end < 0:
        return None
    lines = head[:text_end].decode("latin-1").split("\r\n")
    after = head[text_end + 4:]
    words = lines[0].split(" ")
    if len(words) != 3:
        return None
    method, target, version = words
    if method == "CONNECT":
        host, port = split_entry(target)
        return (method, host, port, after) if port and port > 0 else None
    scheme, sep, remainder = target.partition("://")
    if not sep or scheme.lower() != "http":
        return None
    authority, slash, path = remainder.partition("/")
    host, port = split_entry(authority.rpartition("@")[2])
    port = 80 if port is None else port
    if port <= 0 or not host:
        return None
    headers = [line for line in lines[1:] if not line.lower().startswith(("proxy-", "connection:"))]
    out = "\r\n".join([f"{method} {slash or '/'}{path} {version}", *headers, "Connection: close", "", ""])
    return method, host, port, out.encode("latin-1") + after


def _read_head(conn: socket.socket) -> bytes | None:
    data = b""
    conn.settimeout(_HEAD_TIMEOUT)
    while b"\r\n\r\n" not in data:
        if len(data) > _HEAD_LIMIT:
            return None
        chunk = conn.recv(_CHUNK)
        if not chunk:
            return None
        data += chunk
    conn.settimeout(None)
    return data


def _answer(conn: socket.socket, code: int, reason: str, body: str = "") -> None:
    payload = body.encode("utf-8")
    try:
        conn.sendall(f"HTTP/1.1 {code} {reason}\r\nContent-Length: {len(payload)}\r\nConnection: close\r\n\r\n"
                     .encode("ascii") + payload)
    finally:
        conn.close()


def splice(one: socket.socket, two: socket.socket) -> None:
    """Copy both ways until both sides have finished; each side's end is passed on as a half-close."""
    other = threading.Thread(target=_copy, args=(two, one), name="failres-bridge-copy", daemon=True)
    other.start()
    _copy(one, two)
    other.join()
    one.close()
    two.close()


def _copy(source: socket.socket, sink: socket.socket) -> None:
    how = socket.SHUT_WR
    try:
        while chunk := source.recv(_CHUNK):
            sink.sendall(chunk)
    except OSError:
        # A side that broke ends the other direction too, or its copy would wait for ever.
        how = socket.SHUT_RDWR
        _shutdown(source, how)
    _shutdown(sink, how)


def _shutdown(sock: socket.socket, how: int) -> None:
    try:
        sock.shutdown(how)
    except OSError:
        pass


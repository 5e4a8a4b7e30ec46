"""Fixtures for the real agent CLI tests: the scripted model server."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from model_server import ModelServer, Step


@pytest.fixture
def model_server() -> Iterator[Callable[[list[Step]], ModelServer]]:
    """Start a scripted model server; every one started is stopped after the test."""
    started: list[ModelServer] = []

    def start(script: list[Step]) -> ModelServer:
        server = ModelServer(script).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


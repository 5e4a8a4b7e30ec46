"""Model providers: a command reading stdin, an OpenAI-compatible endpoint, the [learning] section.

No network: the HTTP provider talks to a small `http.server` on 127.0.0.1 in a thread,
and the command provider runs small scripts written into tmp_path.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from types import SimpleNamespace

import pytest

from failres.config.model import LearningConfig
from failres.config.loading import parse_config
from failres.errors import ConfigError
from lessons.learning.providers import (
    CommandProvider,
    HttpProvider,
    ProviderError,
    chat_completions_url,
    provider_from_config,
)


def script(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text("import sys, os\n" + body)
    return str(path)


# ── the command provider ─────────────────────────────────────────────────────


def test_the_prompt_goes_to_stdin_and_stdout_is_the_answer(tmp_path: Path) -> None:
    echo = script(tmp_path, "echo.py", "sys.stdout.write('got: ' + sys.stdin.read().upper())\n")
    assert CommandProvider((sys.executable, echo)).complete("hello ünïcode") == "got: HELLO ÜNÏCODE"


def test_a_nonzero_exit_is_a_provider_error_naming_the_last_error_line(tmp_path: Path) -> None:
    fails = script(tmp_path, "fails.py", "print('noise', file=sys.stderr)\nprint('quota exhausted', file=sys.stderr)\n"
                                         "sys.exit(3)\n")
    with pytest.raises(ProviderError) as caught:
        CommandProvider((sys.executable, fails)).complete("x")
    assert "exited 3" in str(caught.value) and "quota exhausted" in str(caught.value)


def test_a_secret_in_the_error_output_is_redacted(tmp_path: Path) -> None:
    leaks = script(tmp_path, "leaks.py", "print('bad key sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD', "
                                         "file=sys.stderr)\nsys.exit(1)\n")
    with pytest.raises(ProviderError) as caught:
        CommandProvider((sys.executable, leaks)).complete("x")
    assert "abcdefghijklmnop" not in str(caught.value)


def test_a_missing_program_is_a_provider_error_with_a_hint(tmp_path: Path) -> None:
    with pytest.raises(ProviderError) as caught:
        CommandProvider((str(tmp_path / "no-such-program"),)).complete("x")
    assert "cannot run" in str(caught.value) and caught.value.hint


def test_a_timeout_ends_the_command_and_everything_it_started(tmp_path: Path) -> None:
    marker = tmp_path / "child.pid"
    hangs = script(tmp_path, "hangs.py", f"""
import subprocess
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
open({str(marker)!r}, "w").write(str(child.pid))
sys.stdout.flush()
child.wait()
""")
    with pytest.raises(ProviderError) as caught:
        CommandProvider((sys.executable, hangs), timeout=1.0).complete("x")
    assert "did not answer" in str(caught.value)
    pid = int(marker.read_text())
    for _ in range(200):  # the kill is asynchronous; wait for the process table to agree
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        if Path(f"/proc/{pid}/stat").exists() and Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z":
            break
        time.sleep(0.05)
    else:
        pytest.fail("the command's child outlived the timeout")


# ── the HTTP provider, against a local server ────────────────────────────────


class _Endpoint:
    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.status = 200
        self.reply: bytes = json.dumps({"choices": [{"message": {"role": "assistant", "content": "an answer"}}]}).encode()


@pytest.fixture
def endpoint() -> Iterator[tuple[str, _Endpoint]]:
    state = _Endpoint()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the http.server API
            body = self.rfile.read(int(self.headers["Content-Length"]))
            state.requests.append({"path": self.path, "headers": dict(self.headers), "body": json.loads(body)})
            self.send_response(state.status)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(state.reply)

        def log_message(self, *args) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}", state
    server.shutdown()
    server.server_close()


def test_the_http_provider_posts_a_chat_completion_with_the_key_from_the_environment(endpoint) -> None:
    base, state = endpoint
    provider = HttpProvider(base + "/v1", "local-model", "MY_MODEL_KEY", environ={"MY_MODEL_KEY": "k-123"})
    assert provider.complete("what is the lesson?") == "an answer"
    (request,) = state.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["Authorization"] == "Bearer k-123"
    assert request["body"]["model"] == "local-model"
    assert request["body"]["messages"] == [{"role": "user", "content": "what is the lesson?"}]


def test_without_an_api_key_variable_no_authorization_is_sent(endpoint) -> None:
    base, state = endpoint
    assert HttpProvider(base, "m").complete("x") == "an answer"
    assert "Authorization" not in state.requests[0]["headers"]


def test_an_unset_key_variable_fails_before_any_request(endpoint) -> None:
    base, state = endpoint
    with pytest.raises(ProviderError) as caught:
        HttpProvider(base, "m", "UNSET_KEY_VAR", environ={}).complete("x")
    assert "UNSET_KEY_VAR" in str(caught.value)
    assert state.requests == []


def test_an_http_error_is_a_provider_error_with_the_status(endpoint) -> None:
    base, state = endpoint
    state.status = 429
    state.reply = b'{"error": "rate limited"}'
    with pytest.raises(ProviderError) as caught:
        HttpProvider(base, "m").complete("x")
    assert "HTTP 429" in str(caught.value) and "rate limited" in str(caught.value)


def test_an_answer_that_is_not_a_chat_completion_is_a_provider_error(endpoint) -> None:
    base, state = endpoint
    state.reply = b"<html>proxy login</html>"
    with pytest.raises(ProviderError, match="not a chat-completions response"):
        HttpProvider(base, "m").complete("x")


def test_an_unreachable_endpoint_is_a_provider_error() -> None:
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(ProviderError, match="cannot reach"):
        HttpProvider(f"http://127.0.0.1:{port}", "m", timeout=5).complete("x")


def test_only_http_and_https_urls_are_used() -> None:
    with pytest.raises(ProviderError, match="http or https"):
        HttpProvider("file:///etc/passwd", "m").complete("x")


@pytest.mark.parametrize(("given", "used"), [
    ("http://h:8080/v1/chat/completions", "http://h:8080/v1/chat/completions"),
    ("http://h:8080/v1", "http://h:8080/v1/chat/completions"),
    ("http://h:8080/v1/", "http://h:8080/v1/chat/completions"),
    ("https://api.example.com", "https://api.example.com/v1/chat/completions"),
])
def test_the_endpoint_is_the_url_or_its_api_base_completed(given: str, used: str) -> None:
    assert chat_completions_url(given) == used


# ── configuration ────────────────────────────────────────────────────────────


def test_no_provider_is_a_mode_not_an_error() -> None:
    assert provider_from_config(LearningConfig()) is None


def test_the_configured_provider_is_built_from_the_learning_section() -> None:
    config = parse_config('[learning]\nprovider = "command"\ncommand = ["llm", "-m", "x"]\ntimeout = "30s"\n', "c")
    provider = provider_from_config(config.learning, cwd="/somewhere")
    assert provider == CommandProvider(("llm", "-m", "x"), timeout=30.0, cwd="/somewhere")
    http = parse_config('[learning]\nprovider = "http"\nurl = "http://127.0.0.1:1/v1"\nmodel = "m"\n'
                        'api_key_env = "KEY"\n', "c")
    built = provider_from_config(http.learning)
    assert isinstance(built, HttpProvider) and (built.url, built.model, built.api_key_env) == (
        "http://127.0.0.1:1/v1", "m", "KEY")


def test_an_unknown_provider_kind_from_another_harness_is_refused() -> None:
    settings = SimpleNamespace(provider="carrier-pigeon", command=(), url="", model="", api_key_env="", timeout=1.0)
    with pytest.raises(Exception, match="unknown learning provider"):
        provider_from_config(settings)


@pytest.mark.parametrize(("text", "where"), [
    ('[learning]\nprovider = "command"\n', "learning.command: must name a program"),
    ('[learning]\nprovider = "http"\nmodel = "m"\n', "learning.url: must be set"),
    ('[learning]\nprovider = "http"\nurl = "http://h"\n', "learning.model: must be set"),
    ('[learning]\nprovider = "openai"\n', "learning.provider: must be one of"),
    ('[learning]\nurl = "ftp://h"\n', "learning.url: must be an http"),
    ('[learning]\napi_key_env = "MY KEY"\n', "learning.api_key_env"),
    ('[learning]\ndomains = ["Behavior"]\n', "learning.domains[0]"),
    ('[learning]\nmax_rules = 0\n', "learning.max_rules"),
    ('[learning]\ntimeout = "0s"\n', "learning.timeout"),
])
def test_an_impossible_learning_setting_names_its_key(text: str, where: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(text, "cfg.toml")
    assert str(caught.value).startswith(f"cfg.toml: {where}")


def test_the_learning_defaults_are_no_model_and_the_rules_budget() -> None:
    learning = parse_config("", "c").learning
    assert (learning.provider, learning.max_rules, learning.max_chars, learning.timeout) == ("none", 15, 1600, 300.0)
    assert learning.domains == () and learning.transcripts == ()

"""The one model call behind reflection and learning: a prompt in, text out.

Learning needs a model only to turn a person's words into a reusable directive
and to rewrite a rule set; everything else is code. So the interface is as small
as it can be -- `complete(prompt) -> str` -- and two providers cover what people
run: any command-line tool that reads a prompt on stdin and answers on stdout
(`CommandProvider`), and an OpenAI-compatible chat endpoint (`HttpProvider`).

No provider at all is a real mode, not an error: `provider_from_config` returns
None and the callers fall back to the person's own words and to counting.

A provider never writes to the store and never sees an API key in a record: the
key is read from the environment variable the configuration names, at call time.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from lessons.errors import InvalidInput, LessonsError
from lessons.redaction.redact import redact

PROVIDER_KINDS = ("none", "command", "http")
DEFAULT_TIMEOUT = 300.0
# A reply longer than this is not a directive or a rule set; keep what fits.
MAX_REPLY_CHARS = 200_000
_ERROR_SNIPPET = 300


class ProviderError(LessonsError):
    """The model could not be asked or did not answer; nothing was recorded."""


class Provider(Protocol):
    """Anything that completes a prompt."""

    def complete(self, prompt: str) -> str: ...


@dataclass(frozen=True)
class CommandProvider:
    """Pipe the prompt to a command's stdin and read its answer from stdout.

    `argv` is an argument list, never a shell line: a prompt full of transcript
    text must not reach a shell. The command runs in its own process group so a
    timeout ends everything it started, not only the first process.
    """

    argv: tuple[str, ...]
    timeout: float = DEFAULT_TIMEOUT
    cwd: str | None = None
    env: Mapping[str, str] | None = None

    def complete(self, prompt: str) -> str:
        if not self.argv:
            msg = "the learning command is empty"
            raise ProviderError(msg, hint='set learning.command, e.g. ["llm", "-m", "my-model"]')
        try:
            process = subprocess.Popen(
                list(self.argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                cwd=self.cwd, env=dict(self.env) if self.env is not None else None, start_new_session=True,
            )
        except OSError as exc:
            msg = f"cannot run the learning command {self.argv[0]!r}: {exc.strerror or exc}"
            raise ProviderError(msg, hint="check learning.command in .failres.toml") from None
        try:
            out, err = process.communicate(prompt.encode("utf-8"), timeout=self.timeout)
        except subprocess.TimeoutExpired:
            _kill_group(process)
            msg = f"the learning command {self.argv[0]!r} did not answer within {self.timeout:g}s"
            raise ProviderError(msg, hint="raise learning.timeout or check the command") from None
        if process.returncode != 0:
            msg = f"the learning command {self.argv[0]!r} exited {process.returncode}: {_last_line(err)}"
            raise ProviderError(msg)
        return out.decode("utf-8", "replace")[:MAX_REPLY_CHARS]


def _kill_group(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    process.communicate()


def _last_line(raw: bytes) -> str:
    lines = [line.strip() for line in raw.decode("utf-8", "replace").splitlines() if line.strip()]
    # Error output may echo a token it was given; it is shown to a person, so redact it.
    return redact(lines[-1][:_ERROR_SNIPPET]) if lines else "no error output"


def chat_completions_url(url: str) -> str:
    """The endpoint to post to: `url` itself when it names `/chat/completions`, else
    `url` taken as the API base (`.../v1` or a bare host) with the path added."""
    base = url.rstrip("/")
    if base.endswith("/chat/completions"):
        return base
    if base.endswith("/v1"):
        return base + "/chat/completions"
    return base + "/v1/chat/completions"


@dataclass(frozen=True)
class HttpProvider:
    """An OpenAI-compatible `/v1/chat/completions` endpoint (a hosted API, a local server).

    The API key, when one is needed, comes from the environment variable named
    by `api_key_env`, so it never sits in `.failres.toml` or in the store.
    """

    url: str
    model: str
    api_key_env: str = ""
    timeout: float = DEFAULT_TIMEOUT
    environ: Mapping[str, str] = field(default_factory=lambda: os.environ)

    def request_body(self, prompt: str) -> dict:
        # temperature 0: the same evidence should argue for the same rules.
        return {"model": self.model, "messages": [{"role": "user", "content": prompt}], "temperature": 0}

    def complete(self, prompt: str) -> str:
        endpoint = chat_completions_url(self.url)
        scheme = urllib.parse.urlsplit(endpoint).scheme
        if scheme not in ("http", "https"):
            msg = f"learning.url must be an http or https URL, got {self.url!r}"
            raise ProviderError(msg)
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key_env:
            key = self.environ.get(self.api_key_env, "")
            if not key:
                msg = f"the environment variable {self.api_key_env} (learning.api_key_env) is not set"
                raise ProviderError(msg, hint=f"export {self.api_key_env}=... before running failres")
            headers["Authorization"] = f"Bearer {key}"
        data = json.dumps(self.request_body(prompt)).encode("utf-8")
        request = urllib.request.Request(endpoint, data=data, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310 - scheme checked
                raw = response.read(MAX_REPLY_CHARS * 4 + 1)
        except urllib.error.HTTPError as exc:
            detail = exc.read(_ERROR_SNIPPET).decode("utf-8", "replace").strip()
            msg = f"the model endpoint answered HTTP {exc.code}: {redact(detail) or exc.reason}"
            raise ProviderError(msg) from None
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            msg = f"cannot reach the model endpoint {endpoint}: {reason}"
            raise ProviderError(msg) from None
        return reply_text(raw)[:MAX_REPLY_CHARS]


def reply_text(raw: bytes) -> str:
    """The assistant's text from a chat-completions response body."""
    try:
        document = json.loads(raw.decode("utf-8"))
        content = document["choices"][0]["message"]["content"]
    except (UnicodeDecodeError, ValueError, KeyError, IndexError, TypeError, RecursionError):
        msg = "the model endpoint's answer is not a chat-completions response"
        raise ProviderError(msg) from None
    if isinstance(content, list):  # some servers answer in content parts
        content = "".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    if not isinstance(content, str):
        msg = "the model endpoint's answer has no text"
        raise ProviderError(msg)
    return content


class ProviderSettings(Protocol):
    """What a configuration says about the provider (failres's `[learning]` section is one)."""

    provider: str
    command: Sequence[str]
    url: str
    model: str
    api_key_env: str
    timeout: float


def provider_from_config(settings: ProviderSettings, *, cwd: str | None = None) -> Provider | None:
    """The provider a configuration names; None for `provider = "none"`."""
    kind = settings.provider
    if kind == "none":
        return None
    if kind == "command":
        return CommandProvider(tuple(settings.command), timeout=settings.timeout, cwd=cwd)
    if kind == "http":
        return HttpProvider(settings.url, settings.model, settings.api_key_env, timeout=settings.timeout)
    msg = f"unknown learning provider {kind!r} (one of {', '.join(PROVIDER_KINDS)})"
    raise InvalidInput(msg)

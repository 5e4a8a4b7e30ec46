"""Failure signatures: the same failure twice gets the same string.

A signature is `fail_class|<first line of the message>` with whatever changes from run to
run replaced by a stable token. The stop-loss halt and lesson retrieval compare signatures
for equality, so two demands pull against each other:

- what differs between two runs of the *same* failure must vanish: clocks, temp dirs,
  the user's home, pids, object addresses, hashes, durations, line numbers, ports;
- what tells two *different* failures apart must stay: exit status 1 vs 2, HTTP 404 vs 500,
  "3 failed", file names, words. Plain numbers are therefore never touched; only numbers
  in a volatile *position* (after `pid`, `line`, `port`, a file name and a colon) are.

The tokens: `<ts>` timestamps and clock times; `<dur>` durations; `<tmp>` a temp directory
(the path below it is kept, minus its generated-looking components); `<home>` a user's
home (the path below it is kept); `<path>` any other absolute path on a well-known
filesystem root, of which only the basename is kept, because the directories above it
(install prefixes, virtualenvs, CI checkouts) differ between machines while the basename
names the thing that failed; `<hex>` hashes, commit ids and UUIDs; `<addr>` memory
addresses; `:<n>`, `(<n>,<n>)`, `line <n>`, `column <n>` positions in a file; `pid <n>`;
`<port>`; the size of a test suite (`<n> passed`, `<n> skipped`, `Ran <n> tests`, `<n>
total`: pytest, jest, cargo, go's gotestsum, unittest, mocha, rspec), while failure and
error counts stay. Absolute paths under other roots (`/api/v1/users` in an HTTP error) are kept:
there the directories *are* the meaning.

Messages are read as plain text first (`lessons.terminal`: a coloured line is the same line
uncoloured, and `ESC[31m` is no duration) and redacted before anything else, so a signature
can never carry a secret.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

from lessons.redaction.redact import redact
from lessons.terminal import plain_text

MAX_SIGNATURE_TEXT = 300
# A single replacement pass can create the context another rule needs (a path replaced
# by `<home>/...` leaves a remainder that is scanned as free text the next time), so
# normalise runs to a fixed point. Two passes are the norm; the cap only bounds the loop.
_MAX_PASSES = 6
_LOOKBACK = 256

# ── building blocks ───────────────────────────────────────────────────────────

# Where an absolute path may begin: start of text, after whitespace or a delimiter. Not
# after `>`, so the remainder of an already normalised `<home>/src/a.py` is not re-read as
# an absolute path, and not after `/`, so the path part of a URL is left alone.
_PATH_START = r"(?<![^\s'\"`(\[{=,;:])"
_SEGMENT = r"[^\s'\"`:;,()\[\]{}<>|?\\/]"
_SEP = r"(?:\\{1,2}|/)"
_REST = rf"(?:{_SEP}+{_SEGMENT}+)*{_SEP}*"

_UNIX_TEMP_BASE = (
    r"(?:/private)?/(?:tmp|var/tmp|dev/shm"
    # macOS per-user temp dirs: /var/folders/<2 chars>/<random>/T; all three generated.
    r"|var/folders(?:/[^\s/'\"`:;,]+){0,3})"
)
_WINDOWS_TEMP_BASE = (
    rf"(?i:[a-z]:{_SEP}(?:users{_SEP}[^\s\\/'\"]+{_SEP}appdata{_SEP}local{_SEP}temp|windows{_SEP}temp))"
)
_HOME_BASE = rf"(?:/home/{_SEGMENT}+|/Users/{_SEGMENT}+|/root|(?i:[a-z]:{_SEP}users{_SEP}){_SEGMENT}+)"
_KNOWN_ROOTS = (
    "usr|opt|var|etc|srv|mnt|media|nix|gnu|lib|lib32|lib64|bin|sbin|snap|boot|proc|sys|dev|run"
    "|app|apps|workspace|workspaces|work|builds|build|github|__w|data|code|src|private|cygdrive"
    "|Library|System|Applications|Volumes"
)
_OTHER_ABS_BASE = rf"(?:/(?:{_KNOWN_ROOTS})|(?i:[a-z]:)(?={_SEP}))"
_PATH_END = rf"(?={_SEP}|[\s'\"`:;,()\[\]{{}}<>|?]|$)"

_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sept?|Oct|Nov|Dec)"
_WEEKDAY = r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)"
_CLOCK = r"\d{1,2}:\d{2}:\d{2}(?:[.,]\d{1,9})?"
_ZONE = r"(?:Z|\s?UTC|\s?GMT|\s?[+-]\d{2}:?\d{2})?"

# Stage one: every rule that can be decided from the matched text alone. One combined
# pattern scanned left to right, so a timestamp is consumed whole before its digits
# could be read as line numbers, and a path whole before its hex could be read as an id.
# At one position the first alternative that matches wins, hence the order.
_STAGE_ONE_RULES: tuple[tuple[str, str], ...] = (
    ("marker", r"\[REDACTED:[a-z0-9-]+\]"),
    ("temp", rf"{_PATH_START}(?:{_UNIX_TEMP_BASE}|{_WINDOWS_TEMP_BASE}){_PATH_END}{_REST}"),
    ("home", rf"{_PATH_START}{_HOME_BASE}{_PATH_END}{_REST}"),
    ("abspath", rf"{_PATH_START}{_OTHER_ABS_BASE}{_PATH_END}{_REST}"),
    ("uuid", r"(?<![0-9A-Za-z])[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}(?![0-9A-Za-z])"),
    (
        "timestamp",
        r"(?<![\w.])(?:"
        rf"\d{{4}}-\d{{2}}-\d{{2}}(?:[T ]\d{{2}}:\d{{2}}(?::\d{{2}}(?:[.,]\d{{1,9}})?)?{_ZONE})?"
        rf"|\d{{4}}/\d{{2}}/\d{{2}}(?:[T ]{_CLOCK}{_ZONE})?"
        r"|\d{8}T\d{6}(?:[.,]\d+)?Z?|\d{8}[-_]\d{6}"
        rf"|\d{{2}}/{_MONTH}/\d{{4}}:{_CLOCK}(?: [+-]\d{{4}})?"
        rf"|(?:{_WEEKDAY},? )?\d{{1,2}} {_MONTH} \d{{4}} {_CLOCK}{_ZONE}"
        rf"|(?:{_WEEKDAY} )?{_MONTH} {{1,2}}\d{{1,2}},? (?:\d{{4}} )?{_CLOCK}(?: \d{{4}})?{_ZONE}"
        r")(?![\w])",
    ),
    ("clock", r"(?<![\w.:])\d{1,2}:\d{2}:\d{2}(?:[.,]\d{1,9})?(?:\s?[AP]M)?(?![\w:])"),
    # Seconds or milliseconds since 1970 from 2001 on; counts that long are not meaning.
    ("epoch", r"(?<![\w.])\d{10,13}(?:\.\d{1,9})?(?![\w.])"),
    # Heap addresses have 9+ hex digits; `0x80070005` and other 8-digit values are error
    # codes and flags, which tell failures apart.
    ("address", r"(?<![0-9A-Za-z])0[xX][0-9a-fA-F]{9,16}(?![0-9A-Za-z])"),
    # A letter and a digit both: `deadbeef` and `1234567` are a word and a number.
    (
        "hex",
        r"(?<![0-9A-Za-z])(?=[0-9a-fA-F]*[a-fA-F])(?=[0-9a-fA-F]*[0-9])[0-9a-fA-F]{7,128}(?![0-9A-Za-z])",
    ),
    (
        "duration",
        # "too many 503s" names a status class, not a duration.
        r"(?<![\w.])(?![1-5]\d\ds(?!\w))"
        r"(?:\d+(?:\.\d+)?(?:ms|ns|us|µs|min|s|m|h)(?![a-zA-Z]))+(?!\w)"
        r"|(?<![\w.])\d+(?:\.\d+)?\s?(?:milliseconds?|msecs?|ms|seconds?|secs?|minutes?|mins?|hours?|hrs?)(?!\w)",
    ),
    ("pid", r"(?<![\w])(?i:pid)(?:\s*[:=]\s*|\s)\d+(?!\d)"),
    ("port", r"(?<![\w])(?i:port)(?:\s*[:=]\s*|\s)\d{1,5}(?!\d)"),
    ("position", r"(?<![\w])(?P<posword>[Ll]ine|LINE|[Cc]olumn|COLUMN|[Cc]ol|COL)(?P<possep>\s?[:=]?\s?)\d+(?!\d)"),
    # How big the suite is: one more passing test must not make the same failure a new one.
    # Failure and error counts stay: "3 failed" and "4 failed" are different outcomes.
    ("tally", r"(?<![\w.])\d+(?=\s(?:passed|passing|skipped|deselected|xfailed|xpassed|warnings?|rerun|total"
              r"|ignored|measured|filtered out|pending|todo|tests?|examples?|assertions?|suites?)(?![\w-]))"),
    ("tallied", r"(?<![\w])(?P<tallyword>Ran|[Tt]ests|TESTS|[Aa]ssertions|[Ss]kipped|SKIPPED|[Pp]assed|PASSED)"
                r"(?P<tallysep>[:=] ?| )\d+(?![\w.])(?! ?[A-Za-z])"),
)

# Stage two: numbers whose meaning depends on the token before them (`a.py:12` is a line,
# `db.internal:5432` a port, `exit:1` neither), read after stage one has settled paths.
_STAGE_TWO = (
    r"(?P<colon>(?::\d+)+)(?!\d|\.\d)"
    r"|(?P<paren>\(\d+(?:,\s?\d+)?\))"
    r"|(?P<bracket>\[\d{2,7}\])(?=:)"
)

_SOURCE_EXTENSIONS = frozenset(
    "py pyi pyx js mjs cjs jsx ts tsx go rs rb java kt kts scala c h cc cpp cxx hpp hh cs fs vb "
    "swift m mm php pl pm sh bash zsh fish ps1 lua r jl ex exs erl hs ml mli clj dart zig nim "
    "sql json jsonl yaml yml toml ini cfg conf xml html htm css scss vue svelte md rst txt csv "
    "log lock gradle cmake mk proto graphql tf hcl nix ipynb tpl j2 jinja gz bz2 xz zip tar whl".split()
)
_HOST_SUFFIXES = frozenset(
    "com org net io dev ai app cloud local localdomain internal lan svc cluster test example "
    "invalid co uk de fr nl jp cn ru us eu ca au in br it es se ch at be gov edu info biz xyz".split()
)
_EXTENSIONLESS_FILES = frozenset(
    "Makefile makefile GNUmakefile Dockerfile Containerfile Jenkinsfile Rakefile Gemfile "
    "Justfile justfile Vagrantfile Procfile Snakefile BUILD WORKSPACE".split()
)
_IPV4 = re.compile(r"(?:\d{1,3}\.){3}\d{1,3}$")
_HOSTNAME = re.compile(r"[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*$")
_TOKEN_BEFORE = re.compile(r"[^\s'\"`(\[{=,;]*$")
_PROCESS_NAME_BEFORE = re.compile(r"[A-Za-z][\w.-]*$")
_RANDOM_SUFFIX = re.compile(r"[-_.][a-z0-9_]{8}$")
_DIGIT = re.compile(r"\d")
_WHITESPACE = re.compile(r"\s+")


# ── public API ────────────────────────────────────────────────────────────────


def signature(fail_class: str, message: str) -> str:
    """`fail_class|<normalised first line>`: equal for the same failure on any run or machine."""
    # Redacted whole before the first line is taken: a secret can span lines (a key body).
    text = normalise(first_line(redact(plain_text(message))))[:MAX_SIGNATURE_TEXT].rstrip()
    return f"{_collapse_whitespace(fail_class)}|{text}"


def current_form(stored: str) -> str:
    """A signature as this version of failres writes it, from one a record holds.

    Signatures are compared for equality (the stop-loss streak, the advisory block's
    grouping); one an older version stored lacks later rules (test counts such as
    `276 passed` were kept before), so every reader compares the current form of
    both sides. `normalise` is idempotent, so a current signature is its own current form.
    """
    fail_class, bar, text = stored.partition("|")
    if not bar:
        return stored
    return f"{fail_class}|{normalise(text)[:MAX_SIGNATURE_TEXT].rstrip()}"


def first_line(message: str) -> str:
    """The first line with anything on it, stripped; "" for a blank message.

    The first line, because that is where tools put the error; later lines are
    tracebacks and context that vary far more than the failure does.
    """
    for line in message.splitlines():
        if line.strip():
            return line.strip()
    return ""


def normalise(text: str) -> str:
    """Replace volatile parts of `text` by stable tokens and collapse whitespace to one line."""
    current = _collapse_whitespace(text)
    for _ in range(_MAX_PASSES):
        following = _collapse_whitespace(_normalise_once(current))
        if following == current:
            break
        current = following
    return current


# ── the passes ────────────────────────────────────────────────────────────────


def _collapse_whitespace(text: str) -> str:
    # `\s` covers every character str.splitlines() breaks on, so the result is one line.
    return _WHITESPACE.sub(" ", text).strip()


def _normalise_once(text: str) -> str:
    return _stage_two().sub(_replace_stage_two, _stage_one().sub(_replace_stage_one, text))


def _replace_stage_one(match: re.Match[str]) -> str:
    name = match.lastgroup
    if name == "position":
        return f"{match.group('posword').lower()}{match.group('possep')}<n>"
    if name == "tallied":
        return f"{match.group('tallyword')}{match.group('tallysep')}<n>"
    return _STAGE_ONE_REPLACEMENTS[name](match.group(name))


def _keep(text: str) -> str:
    return text


def _replace_temp(path: str) -> str:
    base = _stage_one_base("temp").match(path)
    return _token_with_rest("<tmp>", path[base.end():], drop_volatile=True)


def _replace_home(path: str) -> str:
    base = _stage_one_base("home").match(path)
    return _token_with_rest("<home>", path[base.end():], drop_volatile=False)


def _replace_abspath(path: str) -> str:
    body, trailing = _split_trailing_dots(path)
    parts = [part for part in re.split(_SEP, body) if part]
    if re.match(r"(?i)[a-z]:", body):
        parts = parts[1:]  # the drive letter is not a basename
    if not parts:
        return "<path>" + trailing
    return f"<path>/{_normalise_once(parts[-1])}{trailing}"


def _token_with_rest(token: str, rest: str, *, drop_volatile: bool) -> str:
    body, trailing = _split_trailing_dots(rest)
    parts = [part for part in re.split(_SEP, body) if part]
    if drop_volatile:
        parts = _without_generated(parts, ends_with_file=not re.search(rf"{_SEP}$", body))
    if not parts:
        return token + trailing
    return f"{token}/{_normalise_once('/'.join(parts))}{trailing}"


def _split_trailing_dots(path: str) -> tuple[str, str]:
    # "... in /tmp/x/a.py." ends a sentence; the full stop is not part of the file name.
    body = path.rstrip(".")
    return body, path[len(body):]


def _without_generated(parts: list[str], *, ends_with_file: bool) -> list[str]:
    kept = []
    for index, part in enumerate(parts):
        # pytest's `pytest-<n>/<test name><n>`: the test's directory is generated too.
        below_numbered_run = index > 0 and re.fullmatch(r"pytest-\d+", parts[index - 1]) is not None
        is_basename = ends_with_file and index == len(parts) - 1
        if not below_numbered_run and not _looks_generated(part, is_basename=is_basename):
            kept.append(part)
    return kept


def _looks_generated(name: str, *, is_basename: bool) -> bool:
    """Whether a component below a temp dir was made up by whoever created the dir.

    mkdtemp names are `tmp` + 8 random characters (or a caller's prefix + 8); pytest's are
    `pytest-of-<user>/pytest-<n>/<test name><n>`. A directory with a digit in it under a
    temp dir is a counter, pid or random id far more often than a name. For the basename
    only the unmistakable shapes count, so `test_2.py` keeps telling files apart.
    """
    lowered = name.lower()
    if lowered.startswith(("tmp", "pytest-")):
        return True
    if _RANDOM_SUFFIX.search(lowered) and (not is_basename or "." not in lowered.lstrip(".")):
        return True
    return not is_basename and bool(_DIGIT.search(name))


_STAGE_ONE_REPLACEMENTS: dict[str, Callable[[str], str]] = {
    "marker": _keep,
    "temp": _replace_temp,
    "home": _replace_home,
    "abspath": _replace_abspath,
    "uuid": lambda _: "<hex>",
    "timestamp": lambda _: "<ts>",
    "clock": lambda _: "<ts>",
    "epoch": lambda _: "<ts>",
    "address": lambda _: "<addr>",
    "hex": lambda _: "<hex>",
    "duration": lambda _: "<dur>",
    "pid": lambda _: "pid <n>",
    "port": lambda _: "port <port>",
    "tally": lambda _: "<n>",
}
# Every rule but `marker` starts only where no ASCII letter or digit comes before (each
# says so in its own lookbehind), and a marker starts with `[`. Said once in front of the
# alternation, a position inside a word is refused by one test instead of by each rule in
# turn: the same matches, a fifth of the time (stage one was most of a bulk import's
# signatures). `test_signature` checks the premise on every rule.
_STAGE_ONE_START = r"(?:(?<![0-9A-Za-z])|(?=\[))"
_STAGE_ONE = _STAGE_ONE_START + "(?:" + "|".join(f"(?P<{name}>{pattern})"
                                                  for name, pattern in _STAGE_ONE_RULES) + ")"
_STAGE_ONE_BASES = {"temp": rf"(?:{_UNIX_TEMP_BASE}|{_WINDOWS_TEMP_BASE})", "home": _HOME_BASE}


# Compiled on first use, not on import: every process that records or reads a lesson
# imports this module, and compiling these took about 5 ms of cpu where a green task
# never normalises a message (it quarantines nothing). `re`'s own cache would forget them
# among a run's other patterns.
@functools.cache
def _stage_one() -> re.Pattern[str]:
    return re.compile(_STAGE_ONE)


@functools.cache
def _stage_two() -> re.Pattern[str]:
    return re.compile(_STAGE_TWO)


@functools.cache
def _stage_one_base(name: str) -> re.Pattern[str]:
    return re.compile(_STAGE_ONE_BASES[name])


def _replace_stage_two(match: re.Match[str]) -> str:
    # Only a bounded stretch is looked at: a token longer than this is not a file name.
    window = max(0, match.start() - _LOOKBACK)
    before = _TOKEN_BEFORE.search(match.string, window, match.start()).group()
    if match.lastgroup == "bracket":
        if _PROCESS_NAME_BEFORE.search(match.string, window, match.start()):
            return "[pid <n>]"
        return match.group()
    kind = _classify_token(before)
    if match.lastgroup == "paren":
        # `file.cs(12,5)` is a position; `foo(1,2)` in an assertion is data.
        return re.sub(r"\d+", "<n>", match.group()) if kind == "file" else match.group()
    if kind == "file":
        return re.sub(r"\d+", "<n>", match.group())
    if kind == "host" and match.group().count(":") == 1:
        return ":<port>"
    return match.group()


def _classify_token(token: str) -> str:
    """'file', 'host' or 'other' for the token right before a `:<digits>`."""
    if not token:
        return "other"
    if token.startswith("<") and token.endswith(">"):
        return "file"  # `<stdin>`, `<string>`, and the path tokens of stage one
    authority = re.split(r"://|@", token)[-1] if ("://" in token or "@" in token) else None
    if authority is not None and "/" not in authority and "\\" not in authority:
        return "host" if authority else "other"
    if "/" in token or "\\" in token:
        return "file"
    if token in _EXTENSIONLESS_FILES:
        return "file"
    if token == "localhost" or token.endswith("]") or _IPV4.match(token):
        return "host"
    if "." not in token:
        return "other"
    suffix = token.rsplit(".", 1)[1].lower()
    if suffix in _SOURCE_EXTENSIONS:
        return "file"
    if _HOSTNAME.match(token) and (suffix in _HOST_SUFFIXES or token.count(".") >= 2):
        return "host"
    return "file"

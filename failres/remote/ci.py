"""`git failres ci github|gitlab PLAN`: a CI workflow whose N identical jobs work one plan together.

Every job runs `git failres run PLAN --remote origin`: the claims on the repository's
own remote split the plan between the jobs, so no job needs to know how many there
are or which it is. The written file names, for each agent the configuration's
seats run, the one secret that agent reads (an API key), and nothing else: no
secret is passed that the seats do not need. Pushing the claims, the task branches
and the store needs write access to the repository: on GitHub the job's own token
(`permissions: contents: write`); on GitLab a project access token in one CI/CD
variable, since a job token cannot push.

Rendering is pure (text from plain values); only `write_workflow` touches the disk.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from failres.config.model import Config
from failres.errors import UsageError

KINDS = ("github", "gitlab")
DEFAULT_INSTALL = "python -m pip install failres"
PUSH_TOKEN = "FAILRES_PUSH_TOKEN"


@dataclass(frozen=True)
class Agent:
    """An agent program the seats run: the secret it reads, and how a CI job installs it."""

    program: str
    secrets: tuple[str, ...]
    install: str | None


_KNOWN = {
    "claude": Agent("claude", ("ANTHROPIC_API_KEY",), "npm install -g @anthropic-ai/claude-code"),
    "codex": Agent("codex", ("OPENAI_API_KEY",), "npm install -g @openai/codex"),
    "aider": Agent("aider", ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"), "python -m pip install aider-chat"),
}


def agents_of(config: Config) -> list[Agent]:
    """The agents the configured seats run, once each, in seat order; unknown programs need no secret."""
    found: dict[str, Agent] = {}
    for seat in ("implementer", "fixer", "resolver"):
        name = getattr(config.seats, seat, "") or ""
        if not name or name not in config.bindings:
            continue
        command = list(config.bindings[name].command)
        program = PurePosixPath(command[0]).name if command else ""
        agent = _KNOWN.get(program, Agent(program, (), None))
        if program == "aider":
            agent = Agent("aider", _aider_secrets(command), agent.install)
        found.setdefault(program, agent)
    return list(found.values())


def _aider_secrets(command: list[str]) -> tuple[str, ...]:
    """aider reads the key of the provider its `--model` names; without one, either may be its choice."""
    model = next((command[i + 1] for i, word in enumerate(command[:-1]) if word == "--model"), "").lower()
    if any(word in model for word in ("claude", "sonnet", "opus", "haiku", "anthropic")):
        return ("ANTHROPIC_API_KEY",)
    if any(word in model for word in ("gpt", "openai", "o1", "o3", "o4")):
        return ("OPENAI_API_KEY",)
    return ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")


def secrets_of(agents: list[Agent]) -> list[str]:
    return sorted({secret for agent in agents for secret in agent.secrets})


@dataclass(frozen=True)
class Workflow:
    kind: str
    slug: str
    plan: str  # the plan's path from the repository top, as the jobs see it
    branch: str  # the integration branch
    runners: int
    jobs: int
    install: str
    agents: tuple[Agent, ...]


def _q(text: str) -> str:
    """A YAML scalar that reads back as exactly `text` (a JSON string is a YAML double-quoted one)."""
    return json.dumps(text, ensure_ascii=True)


def _run_line(flow: Workflow) -> str:
    jobs = f" --jobs {flow.jobs}" if flow.jobs != 1 else ""
    return f"git failres run {shlex.quote(flow.plan)} --remote origin{jobs}"


def _branch_line(flow: Workflow) -> str:
    # A CI checkout is often detached, or of another branch: tasks start from the integration branch.
    ref = shlex.quote(f"+refs/heads/{flow.branch}:refs/heads/{flow.branch}")
    return f"git fetch --no-tags --update-head-ok origin {ref}"


def render_github(flow: Workflow) -> str:
    secrets = secrets_of(list(flow.agents))
    lines = [
        f"# Written by `git failres ci github {flow.plan}`: {flow.runners} identical jobs work the plan",
        f"# {flow.slug} together. Each job claims a task by pushing refs/failres/claims/{flow.slug}/<task>",
        "# to this repository, so the jobs split the plan between them; a job that dies loses only its",
        "# claim, which another takes over once its [remote] lease has run out.",
    ]
    if secrets:
        lines.append("# Secrets the agents need (Settings > Secrets and variables > Actions): "
                     + ", ".join(secrets) + ".")
    lines += [
        f"name: {_q('failres ' + flow.slug)}",
        "on:",
        "  workflow_dispatch:",
        "permissions:",
        "  contents: write  # the claims, the task branches and the store are pushed to this repository",
        "jobs:",
        "  runner:",
        "    name: runner ${{ matrix.runner }}",
        "    runs-on: ubuntu-latest",
        "    timeout-minutes: 360",
        "    strategy:",
        "      fail-fast: false  # every job works the plan to its end, whatever another's task did",
        "      matrix:",
        f"        runner: [{', '.join(str(i) for i in range(1, flow.runners + 1))}]",
        "    steps:",
        "      - uses: actions/checkout@v4",
        "        with:",
        "          fetch-depth: 0",
        "      - uses: actions/setup-python@v5",
        "        with:",
        '          python-version: "3.11"',
        "      - name: Install failres",
        f"        run: {_q(flow.install)}",
    ]
    for agent in flow.agents:
        if agent.install:
            lines += [f"      - name: {_q('Install ' + agent.program)}", f"        run: {_q(agent.install)}"]
    lines += [
        "      - name: The integration branch",
        f"        run: {_q(_branch_line(flow))}",
        "      - name: Work the plan",
        f"        run: {_q(_run_line(flow))}",
    ]
    if secrets:
        lines.append("        env:")
        lines += [f"          {name}: ${{{{ secrets.{name} }}}}" for name in secrets]
    return "\n".join(lines) + "\n"


def render_gitlab(flow: Workflow) -> str:
    secrets = secrets_of(list(flow.agents))
    job = f"failres-{flow.slug}"
    lines = [
        f"# Written by `git failres ci gitlab {flow.plan}`: {flow.runners} identical jobs work the plan",
        f"# {flow.slug} together. Each job claims a task by pushing refs/failres/claims/{flow.slug}/<task>",
        "# to this repository, so the jobs split the plan between them; a job that dies loses only its",
        "# claim, which another takes over once its [remote] lease has run out.",
        "# Include it from .gitlab-ci.yml (include: - local: <this file>) and run it from the web.",
        "# CI/CD variables (Settings > CI/CD > Variables, masked): " + ", ".join(
            [*secrets, f"{PUSH_TOKEN} (a project access token with write_repository: a job token cannot push)"]) + ".",
        f"{job}:",
        "  image: python:3.11",
        f"  parallel: {flow.runners}",
        "  timeout: 6h",
        "  rules:",
        "    - if: $CI_PIPELINE_SOURCE == \"web\"",
        "  variables:",
        '    GIT_DEPTH: "0"',
        "    GIT_STRATEGY: clone",
        "  script:",
    ]
    checks = [f'test -n "${name}" || {{ echo "error: set the CI/CD variable {name}" >&2; exit 1; }}'
              for name in [*secrets, PUSH_TOKEN]]
    credential = ("git config --global credential.helper "
                  "'!f() { echo username=failres; echo \"password=$" + PUSH_TOKEN + "\"; }; f'")
    steps = [
        *checks,
        credential,
        'git remote set-url origin "https://${CI_SERVER_HOST}/${CI_PROJECT_PATH}.git"',
        flow.install,
        *[agent.install for agent in flow.agents if agent.install],
        _branch_line(flow),
        _run_line(flow),
    ]
    lines += [f"    - {_q(step)}" for step in steps]
    return "\n".join(lines) + "\n"


def default_output(kind: str, slug: str) -> PurePosixPath:
    if kind == "github":
        return PurePosixPath(".github", "workflows", f"failres-{slug}.yml")
    return PurePosixPath(".gitlab", f"failres-{slug}.yml")


def plan_path_in_repo(top: Path, plan: Path) -> str:
    """The plan's path from the repository top: the jobs read it from their checkout."""
    resolved = plan.resolve()
    try:
        relative = resolved.relative_to(top.resolve())
    except ValueError:
        msg = f"the plan {plan} is outside the repository: the CI jobs could not read it"
        raise UsageError(msg, hint="move it into the repository and commit it") from None
    return relative.as_posix()


def require_kind(kind: str) -> None:
    if kind not in KINDS:
        msg = f"unknown CI service {kind!r}: github or gitlab"
        raise UsageError(msg, hint="git failres ci github PLAN, or git failres ci gitlab PLAN")


def write_workflow(top: Path, flow: Workflow, output: Path | None, *, force: bool) -> Path:
    """Write the workflow file (refusing to replace one unless `force`); its path."""
    require_kind(flow.kind)
    for name, value in (("--runners", flow.runners), ("--jobs", flow.jobs)):
        if not 1 <= value <= 200:  # GitLab runs at most 200 parallel jobs of one job
            msg = f"{name} must be between 1 and 200, not {value}"
            raise UsageError(msg)
    target = output if output is not None else top / default_output(flow.kind, flow.slug)
    if target.exists() and not force:
        msg = f"{target} exists"
        raise UsageError(msg, hint="add --force to replace it, or --output FILE to write elsewhere")
    text = render_github(flow) if flow.kind == "github" else render_gitlab(flow)
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f".{target.name}.tmp")
    temporary.write_text(text, encoding="utf-8")
    temporary.replace(target)
    return target

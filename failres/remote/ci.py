"""`git failres ci github|gitlab PLAN`: a CI workflow whose N identical jobs work one plan together.

Every job runs `git failres run PLAN --remote origin`: the claims on the repository's
own remote split the plan between the jobs, so no job needs to know how many there
are or which it is. The written file names, for each agent the configuration's
seats run, the one secret that agent reads (an API key), and nothing else: no
secret is passed that the seats do not need.

A job holds two secrets, and each reaches only what needs it. The push credential
(on GitHub the job's own token, `permissions: contents: write` and nothing more; on
GitLab a project access token, since a job token cannot push) is never written into
`.git/config`: the checkout keeps none (`persist-credentials: false`, the runner's
URL replaced), and git finds it through a credential helper given in git's
environment (`GIT_CONFIG_*`) that reads FAILRES_PUSH_TOKEN, a variable no seat or gate
environment holds. The agent's API key is in the seat's environment only, never the
gate's (`engine.gates.gate_env`). The job fails closed: it installs bubblewrap, and
FAILRES_SANDBOX_MODE=required refuses to dispatch where no seat world starts, since a
seat without one could read the job's environment through /proc.

Rendering is pure (a document of plain dicts and lists, written by `ci_yaml.emit`,
every value quoted); only `write_workflow` touches the disk.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from failres.config.loading import SANDBOX_MODE_VARIABLE
from failres.config.model import Config
from failres.errors import UsageError
from failres.remote.ci_yaml import emit, quoted, refuse_unprintable

KINDS = ("github", "gitlab")
PUSH_TOKEN = "FAILRES_PUSH_TOKEN"
# Ubuntu 24.04 lets AppArmor stop unprivileged user namespaces, which bubblewrap needs;
# the key does not exist on older kernels, where nothing stops them.
APPARMOR_USERNS = "/proc/sys/kernel/apparmor_restrict_unprivileged_userns"


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
    install: str  # the shell command that installs a pinned failres
    agents: tuple[Agent, ...]


def refuse_unfit_values(flow: Workflow) -> None:
    """UsageError for a value no workflow should carry: a control character anywhere, or
    `${{` where GitHub would evaluate it as an expression inside a script."""
    for what, value in (("plan path", flow.plan), ("plan slug", flow.slug), ("integration branch", flow.branch),
                        ("install command", flow.install)):
        refuse_unprintable(what, value)
    for what, value in (("plan path", flow.plan), ("plan slug", flow.slug), ("integration branch", flow.branch)):
        if "${{" in value:
            msg = f"the {what} {value!r} holds '${{{{', which GitHub would run as an expression"
            raise UsageError(msg, hint="rename it")


def _run_line(flow: Workflow) -> str:
    jobs = f" --jobs {flow.jobs}" if flow.jobs != 1 else ""
    return f"git failres run {shlex.quote(flow.plan)} --remote origin{jobs}"


def _branch_line(flow: Workflow) -> str:
    # A CI checkout is often detached, or of another branch: tasks start from the integration branch.
    ref = shlex.quote(f"+refs/heads/{flow.branch}:refs/heads/{flow.branch}")
    return f"git fetch --no-tags --update-head-ok origin {ref}"


def credential_helper(username: str) -> str:
    """A git credential helper that answers `get` with FAILRES_PUSH_TOKEN, read when git asks:
    the token is never written anywhere, and where the variable is absent (a seat's or a
    gate's environment) it answers with no password."""
    return f'!f() {{ test "$1" = get && echo username={username} && echo "password=${{{PUSH_TOKEN}}}"; }}; f'


def _helper_env(username: str) -> dict[str, str]:
    return {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "credential.helper",
            "GIT_CONFIG_VALUE_0": credential_helper(username)}


def _seat_world_line(*, sudo: str, packages: tuple[str, ...], apparmor: bool) -> str:
    """Install bubblewrap (and what the agents' installs need); on a VM of our own (GitHub's
    runners), lift AppArmor's user-namespace restriction, which a container cannot change."""
    install = f"{sudo}apt-get update -q && {sudo}apt-get install -y -q --no-install-recommends {' '.join(packages)}"
    if not apparmor:
        return install
    return (f"{install} && if [ -e {APPARMOR_USERNS} ]; then "
            f"{sudo}sysctl -w kernel.apparmor_restrict_unprivileged_userns=0; fi")


def _header(flow: Workflow) -> list[str]:
    return [
        f"Written by `git failres ci {flow.kind}` for the plan {quoted(flow.plan)}: {flow.runners} identical jobs",
        f"work the plan {quoted(flow.slug)} together. Each job claims a task by pushing a ref under",
        "refs/failres/claims/ to this repository, so the jobs split the plan between them; a job that",
        "dies loses only its claim, which another takes over once its [remote] lease has run out.",
        "Task branches are pushed under failres/: let the job's credential push nowhere else",
        "(docs/remote.md, \"CI\": a branch ruleset on GitHub, protected branches on GitLab).",
    ]


def github_document(flow: Workflow) -> dict:
    """The GitHub Actions workflow, as the data its YAML reads back as."""
    secrets = secrets_of(list(flow.agents))
    push = {PUSH_TOKEN: "${{ github.token }}", **_helper_env("x-access-token")}
    steps: list[dict] = [
        {"uses": "actions/checkout@v4", "with": {"fetch-depth": 0, "persist-credentials": False}},
        {"uses": "actions/setup-python@v5", "with": {"python-version": "3.11"}},
        {"name": "Install failres", "run": flow.install},
        *({"name": f"Install {agent.program}", "run": agent.install} for agent in flow.agents if agent.install),
        {"name": "The seat world", "run": _seat_world_line(sudo="sudo ", packages=("bubblewrap",), apparmor=True)},
        {"name": "The integration branch", "run": _branch_line(flow), "env": dict(push)},
        {"name": "Work the plan", "run": _run_line(flow),
         "env": {SANDBOX_MODE_VARIABLE: "required", **push,
                 **{name: f"${{{{ secrets.{name} }}}}" for name in secrets}}},
    ]
    return {
        "name": f"failres {flow.slug}",
        "on": {"workflow_dispatch": {}},
        "permissions": {},
        "jobs": {"runner": {
            "name": "runner ${{ matrix.runner }}",
            "runs-on": "ubuntu-latest",
            "timeout-minutes": 360,
            # The claims, the task branches and the store are pushed to this repository.
            "permissions": {"contents": "write"},
            "strategy": {"fail-fast": False, "matrix": {"runner": list(range(1, flow.runners + 1))}},
            "steps": steps,
        }},
    }


def render_github(flow: Workflow) -> str:
    refuse_unfit_values(flow)
    secrets = secrets_of(list(flow.agents))
    comments = _header(flow)
    if secrets:
        comments.append("Secrets the agents need (Settings > Secrets and variables > Actions): "
                        + ", ".join(secrets) + ".")
    return emit(github_document(flow), tuple(comments))


def gitlab_document(flow: Workflow) -> dict:
    """The GitLab CI job, as the data its YAML reads back as."""
    secrets = secrets_of(list(flow.agents))
    npm = any(agent.install and agent.install.startswith("npm ") for agent in flow.agents)
    checks = [f'test -n "${name}" || {{ echo "error: set the CI/CD variable {name}" >&2; exit 1; }}'
              for name in [*secrets, PUSH_TOKEN]]
    helper = " ".join(f"{name}={shlex.quote(value)}" for name, value in _helper_env("failres").items())
    script = [
        *checks,
        # In the script, not in `variables:`, which GitLab expands: the token would be in the value.
        f"export {helper}",
        # The runner's clone URL (and any helper it configured) carries the job token: replaced.
        'git remote set-url origin "${CI_SERVER_URL}/${CI_PROJECT_PATH}.git"',
        "git config --local --unset-all credential.helper || true",
        _seat_world_line(sudo="", packages=("bubblewrap", *(("nodejs", "npm") if npm else ())), apparmor=False),
        flow.install,
        *[agent.install for agent in flow.agents if agent.install],
        _branch_line(flow),
        _run_line(flow),
    ]
    return {f"failres-{flow.slug}": {
        "image": "python:3.11-bookworm",
        "parallel": flow.runners,
        "timeout": "6h",
        "rules": [{"if": '$CI_PIPELINE_SOURCE == "web"'}],
        "variables": {"GIT_DEPTH": "0", "GIT_STRATEGY": "clone", SANDBOX_MODE_VARIABLE: "required"},
        "script": script,
    }}


def render_gitlab(flow: Workflow) -> str:
    refuse_unfit_values(flow)
    secrets = secrets_of(list(flow.agents))
    comments = [
        *_header(flow),
        "Include it from .gitlab-ci.yml (include: - local: <this file>) and run it from the web.",
        "The runner must let bubblewrap make user namespaces (docs/remote.md, \"CI\").",
        "CI/CD variables (Settings > CI/CD > Variables, masked): " + ", ".join(
            [*secrets, f"{PUSH_TOKEN} (a project access token with write_repository: a job token cannot push)"]) + ".",
    ]
    return emit(gitlab_document(flow), tuple(comments))


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

"""`git failres ci github|gitlab PLAN`: write a CI workflow of N runners working one plan."""

from __future__ import annotations

from pathlib import Path

import typer

from failres.cli.app import app
from failres.cli.common import console, open_context
from failres.clidoc.model import LOOP


@app.command(rich_help_panel=LOOP, epilog="git failres ci github plans/release.toml --runners 4")
def ci(
    kind: str = typer.Argument(..., metavar="github|gitlab", help="Which CI service the workflow is for."),
    plan: Path = typer.Argument(..., help="The plan file, inside the repository (the jobs read it there)."),
    runners: int = typer.Option(3, "--runners", metavar="N", help="How many identical jobs work the plan."),
    jobs: int = typer.Option(1, "--jobs", "-j", metavar="N", help="Tasks each job runs at once."),
    output: Path = typer.Option(None, "--output", "-o", metavar="FILE",
                                help="Where to write it (default: .github/workflows/failres-SLUG.yml, "
                                     ".gitlab/failres-SLUG.yml)."),
    install: str = typer.Option(None, "--install", metavar="COMMAND",
                                help="How a job installs a pinned failres (default: from the git commit or "
                                     "archive this failres was installed from, where a CI machine can fetch it)."),
    force: bool = typer.Option(False, "--force", help="Replace a workflow file that exists."),
) -> None:
    """Write a CI workflow whose jobs each run `git failres run PLAN --remote origin`."""
    from failres.engine.plan import load_plan
    from failres.remote.ci import Workflow, agents_of, plan_path_in_repo, require_kind, secrets_of, write_workflow
    from failres.remote.ci_install import install_command

    require_kind(kind)
    ctx = open_context()
    loaded = load_plan(plan, ctx.config)
    agents = agents_of(ctx.config)
    in_repo = plan_path_in_repo(ctx.top, plan)
    flow = Workflow(kind=kind, slug=loaded.slug, plan=in_repo,
                    branch=ctx.config.integration.branch, runners=runners, jobs=jobs, install=install_command(install),
                    agents=tuple(agents))
    written = write_workflow(ctx.top, flow, output, force=force)
    out = console()
    out.print(f"wrote {written}: {runners} runner{'s' if runners != 1 else ''} of plan {loaded.slug}", markup=False)
    needed = secrets_of(agents)
    if needed:
        out.print("secrets the agents need: " + ", ".join(needed), markup=False)
    if kind == "gitlab":
        out.print("include it from .gitlab-ci.yml, and set FAILRES_PUSH_TOKEN to a token that may push", markup=False)

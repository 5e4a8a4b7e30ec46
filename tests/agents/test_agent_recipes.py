"""The agent recipes: what `init --agent X` writes, the README's copies, the gate-derived rules."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import ROOT, git
from failres.agents.recipes import AGENTS, DEFAULT_GATE, claude_bash_rule, claude_bash_rules, gate_command_for, recipe_toml
from failres.config.loading import load_config, parse_config
from failres.config.placeholders import placeholders_in


@pytest.mark.parametrize(("gate", "rule"), [
    (["python3", "-m", "pytest", "-q"], "Bash(python3:*)"),
    (["npm", "test"], "Bash(npm:*)"),
    (["/usr/bin/make", "check"], "Bash(/usr/bin/make:*)"),
    (["bash", "lib/gates.sh", "gate0", "{mode}", "{worktree}"], "Bash(bash lib/gates.sh:*)"),
    (["sh", "{worktree}/check.sh"], "Bash(sh:*)"),
    (["./run tests", "--fast"], "Bash('./run tests':*)"),
])
def test_claude_bash_rule_allows_the_gates_program_and_a_shells_script(gate, rule):
    assert claude_bash_rule(gate) == rule


def test_claude_bash_rule_is_none_for_a_program_filled_in_at_run_time():
    assert claude_bash_rule(["{worktree}/check"]) is None
    assert claude_bash_rule([]) is None


def test_claude_bash_rules_name_each_program_once_in_gate_order():
    gates = [["python3", "-m", "pytest"], ["npm", "test"], ["python3", "-m", "mypy"]]
    assert claude_bash_rules(gates) == ("Bash(python3:*)", "Bash(npm:*)")


@pytest.mark.parametrize(("names", "gate"), [
    (["pyproject.toml", "package.json"], DEFAULT_GATE),
    (["package.json", "README.md"], ("npm", "test")),
    (["Cargo.toml"], ("cargo", "test")),
    (["go.mod"], ("go", "test", "./...")),
    (["README.md"], DEFAULT_GATE),
])
def test_the_gate_is_guessed_from_the_projects_top_level_files(names, gate):
    assert gate_command_for(names) == gate


@pytest.mark.parametrize("agent", AGENTS)
def test_every_recipe_loads_as_a_configuration_with_its_binding_in_both_seats(agent):
    config = parse_config(recipe_toml(agent), "recipe")
    assert config.seats.implementer == config.seats.fixer == agent
    assert config.gates["tests"].command == DEFAULT_GATE
    assert config.gates["tests"].cwd == "worktree"


@pytest.mark.parametrize("agent", AGENTS)
def test_no_recipe_hands_the_seat_the_persons_repository(agent):
    binding = parse_config(recipe_toml(agent), "recipe").bindings[agent]
    assert "repo" not in placeholders_in(binding.command)
    assert not any("{repo}" in value for value in binding.env.values())


def test_every_flag_line_of_a_recipe_command_says_why_or_is_the_program():
    for agent in ("claude", "codex", "aider"):
        text = recipe_toml(agent)
        command = text.split("command = [\n", 1)[1].split("\n]", 1)[0].splitlines()
        unexplained = [line for line in command[1:] if "#" not in line]
        assert unexplained == [], agent


def test_the_claude_recipe_allows_the_configured_gates_program():
    config = parse_config(recipe_toml("claude", ("npm", "test")), "recipe")
    command = config.bindings["claude"].command
    assert command[command.index("--allowedTools") + 1] == "Bash(npm:*)"
    assert command[command.index("--output-format") + 1] == "json"


def test_the_claude_recipe_allows_no_command_when_the_gate_program_is_a_placeholder():
    config = parse_config(recipe_toml("claude", ("{worktree}/check",)), "recipe")
    assert "--allowedTools" not in config.bindings["claude"].command


def test_agent_state_goes_to_the_dispatch_dir_never_the_workspace():
    def env(agent: str) -> dict:
        return dict(parse_config(recipe_toml(agent), "recipe").bindings[agent].env)

    assert env("claude") == {"CLAUDE_CONFIG_DIR": "{dispatch_dir}/claude"}
    assert env("codex") == {"CODEX_HOME": "{dispatch_dir}/codex"}
    aider = parse_config(recipe_toml("aider"), "recipe").bindings["aider"].command
    for flag in ("--chat-history-file", "--input-history-file", "--llm-history-file"):
        assert aider[aider.index(flag) + 1].startswith("{dispatch_dir}/")
    for flag in ("--no-gitignore", "--no-auto-commits", "--no-dirty-commits", "--yes-always"):
        assert flag in aider
    assert aider[aider.index("--map-tokens") + 1] == "0"


def test_no_recipe_asks_for_an_unknown_agent():
    with pytest.raises(ValueError, match='no recipe for agent "cursor"'):
        recipe_toml("cursor")


# ---- what init writes ----

@pytest.mark.parametrize("agent", AGENTS)
def test_init_with_an_agent_writes_its_recipe_into_a_loadable_configuration(repo: Path, cli, agent: str):
    result = cli(repo, "init", "--agent", agent)
    assert result.code == 0, result.err
    text = (repo / ".failres.toml").read_text()
    assert text.endswith(recipe_toml(agent))
    config = load_config(repo)
    assert config.seats.implementer == agent
    assert config.integration.branch == "main"


def test_init_with_an_agent_guesses_the_gate_from_the_project(repo: Path, cli):
    (repo / "package.json").write_text("{}\n")
    assert cli(repo, "init", "--agent", "claude").code == 0
    config = load_config(repo)
    assert config.gates["tests"].command == ("npm", "test")
    command = config.bindings["claude"].command
    assert command[command.index("--allowedTools") + 1] == "Bash(npm:*)"


def test_init_without_an_agent_writes_no_binding(repo: Path, cli):
    assert cli(repo, "init").code == 0
    assert load_config(repo).bindings == {}


def test_init_with_an_unknown_agent_is_refused_and_writes_nothing(repo: Path, cli):
    before = git(repo, "for-each-ref")
    result = cli(repo, "init", "--agent", "cursor")
    assert result.code == 2
    assert result.err.splitlines() == ['error: no recipe for agent "cursor"',
                                       "hint: choose one of: claude, codex, aider, script"]
    assert not (repo / ".failres.toml").exists()
    assert git(repo, "for-each-ref") == before
    assert not (repo / ".git" / "hooks" / "post-merge").exists()


# ---- the README shows exactly the recipes ----

def readme_recipes() -> dict[str, str]:
    """Each ```toml block the README marks with `<!-- recipe: AGENT -->` on the line before."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"<!-- recipe: (\w+) -->\n```toml\n(.*?)```\n", text, flags=re.DOTALL)
    return dict(blocks)


def test_the_readme_shows_each_recipe_exactly_as_init_writes_it():
    shown = readme_recipes()
    assert sorted(shown) == sorted(AGENTS)
    for agent, block in shown.items():
        assert block == recipe_toml(agent), f"README's {agent} recipe differs from `init --agent {agent}`"

"""Reading `.failres.toml`: defaults, strict refusals that name file and key, the example file."""

from __future__ import annotations

import os
import re
import subprocess
import tomllib
from pathlib import Path

import pytest

from failres.config.loading import load_config, parse_config, worktrees_root
from failres.config.model import CONFIG_FILE, Config, RepoPaths, branch_name_problem
from failres.config.schema import key_paths
from failres.errors import ConfigError

EXAMPLE = Path(__file__).resolve().parents[2] / ".failres.toml.example"
SOURCE = "cfg.toml"

MINIMAL_GATE = '[gates.gate0]\ncommand = ["make", "check"]\n'
MINIMAL_BINDING = '[bindings.agent]\ncommand = ["agent", "{prompt_file}"]\n'


def refusal(text: str) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        parse_config(text, SOURCE)
    return caught.value


def uncommented(example: str) -> str:
    """The example with every shown setting switched on ("# " removed; "##" prose stays)."""
    return re.sub(r"(?m)^# ", "", example)


# ---- defaults and the example ----

def test_an_empty_file_gives_the_defaults():
    config = parse_config("", SOURCE)
    assert config == Config()
    assert config.integration.branch == "main"
    assert config.store.ref == "refs/failres/store"
    assert config.repair.max_attempts == 1
    assert config.probe.backoff == 30.0
    assert config.engine_down.exit_codes == (126, 127)
    assert config.default_gate() is None


def test_a_missing_file_gives_the_defaults_and_remembers_its_path(tmp_path):
    config = load_config(tmp_path)
    assert config == Config()
    assert config.source == str(tmp_path / CONFIG_FILE)


def test_load_config_names_the_file_it_read_in_errors(tmp_path):
    (tmp_path / CONFIG_FILE).write_text("[repair]\nmax_attempts = 99\n")
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    assert str(caught.value) == (
        f"{tmp_path / CONFIG_FILE}: repair.max_attempts: must be between 0 and 20, got 99"
    )


def test_the_example_as_shipped_loads_and_says_only_the_defaults():
    assert parse_config(EXAMPLE.read_text(), str(EXAMPLE)) == Config()


def test_the_example_with_every_setting_switched_on_loads():
    config = parse_config(uncommented(EXAMPLE.read_text()), str(EXAMPLE))
    assert config.default_gate().name == "gate0"
    assert config.seat_binding("fixer").name == "my-agent"
    assert config.taxonomy.rules[0].fail_class == "lockfile-drift"


def test_the_example_shows_the_true_default_of_every_plain_section():
    config = parse_config(uncommented(EXAMPLE.read_text()), str(EXAMPLE))
    defaults = Config()
    # seats, gates, bindings and taxonomy rules are shown by example, not by default.
    for section in ("integration", "store", "worktrees", "repair", "scope", "stop_loss", "probe",
                    "engine_down", "output"):
        assert getattr(config, section) == getattr(defaults, section), section


def _holds(raw: object, dotted: str) -> bool:
    head, _, rest = dotted.partition(".")
    if head == "*":
        return isinstance(raw, dict) and any(_holds(entry, rest) for entry in raw.values())
    if head.endswith("[]"):
        items = raw.get(head[:-2]) if isinstance(raw, dict) else None
        return isinstance(items, list) and any(_holds(item, rest) for item in items)
    if not isinstance(raw, dict) or head not in raw:
        return False
    return _holds(raw[head], rest) if rest else True


def test_every_key_the_reader_knows_is_documented_in_the_example():
    raw = tomllib.loads(uncommented(EXAMPLE.read_text()))
    missing = [dotted for dotted in key_paths(Config) if not _holds(raw, dotted)]
    assert missing == []


# ---- malformed TOML ----

def test_malformed_toml_names_file_line_and_column():
    error = refusal('[repair]\nmax_attempts = = 2\n')
    assert str(error).startswith(f"{SOURCE}: line 2, column 16: malformed TOML: ")


def test_malformed_toml_at_the_end_says_so():
    error = refusal('[integration]\nbranch = "main')
    assert str(error).startswith(f"{SOURCE}: at end of document: malformed TOML: Unterminated string")


# ---- unknown keys and sections ----

@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("[integration]\nbogus = 1\n", "integration.bogus"),
        ("[store]\nbogus = 1\n", "store.bogus"),
        ("[worktrees]\nbogus = 1\n", "worktrees.bogus"),
        (MINIMAL_GATE + "bogus = 1\n", "gates.gate0.bogus"),
        (MINIMAL_BINDING + "bogus = 1\n", "bindings.agent.bogus"),
        ("[seats]\nbogus = 1\n", "seats.bogus"),
        ("[repair]\nbogus = 1\n", "repair.bogus"),
        ("[scope]\nbogus = 1\n", "scope.bogus"),
        ("[stop_loss]\nbogus = 1\n", "stop_loss.bogus"),
        ("[probe]\nbogus = 1\n", "probe.bogus"),
        ("[engine_down]\nbogus = 1\n", "engine_down.bogus"),
        ("[output]\nbogus = 1\n", "output.bogus"),
        ("[taxonomy]\nbogus = 1\n", "taxonomy.bogus"),
        ('[[taxonomy.rules]]\nclass = "x"\nmatch = "y"\nbogus = 1\n', "taxonomy.rules[0].bogus"),
    ],
)
def test_an_unknown_key_in_any_section_is_refused_by_name(text, where):
    assert str(refusal(text)) == f"{SOURCE}: {where}: unknown key"


def test_an_unknown_key_hints_at_the_nearest_known_one():
    error = refusal("[repair]\nmax_attempt = 2\n")
    assert str(error) == f"{SOURCE}: repair.max_attempt: unknown key"
    assert error.hint == 'did you mean "max_attempts"?'


def test_an_unknown_section_is_refused_with_a_suggestion():
    error = refusal("[repiar]\nenabled = true\n")
    assert str(error) == f"{SOURCE}: repiar: unknown section"
    assert error.hint == 'did you mean "repair"?'


def test_a_key_written_before_any_section_is_refused_with_the_known_sections():
    error = refusal('branch = "main"\n[repair]\n')
    assert str(error) == f"{SOURCE}: branch: a key outside any section"
    assert error.hint.startswith("known sections: integration, store, worktrees, gates, bindings,")


def test_a_config_path_that_is_a_directory_is_refused(tmp_path):
    (tmp_path / CONFIG_FILE).mkdir()
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    assert str(caught.value).startswith(f"{tmp_path / CONFIG_FILE}: cannot be read")


@pytest.mark.parametrize("section", ["polcy", "learnings"])
def test_a_misspelt_section_is_refused(section):
    assert str(refusal(f"[{section}]\n")).startswith(f"{SOURCE}: {section}: unknown section")


# ---- wrong types ----

@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[repair]\nmax_attempts = "3"\n', 'repair.max_attempts: expected an integer, got a string ("3")'),
        ("[repair]\nmax_attempts = true\n", "repair.max_attempts: expected an integer, got a boolean"),
        ("[repair]\nenabled = 1\n", "repair.enabled: expected a boolean (true or false), got an integer (1)"),
        ('[gates.gate0]\ncommand = "make check"\n',
         'gates.gate0.command: expected an array of strings, got a string ("make check")'),
        ('[gates.gate0]\ncommand = ["make", 3]\n', "gates.gate0.command[1]: expected a string, got an integer (3)"),
        ("integration = 3\n", "integration: expected a table, got an integer (3)"),
        ("[scope]\nprotected = [1.5]\n", "scope.protected[0]: expected a string, got a float (1.5)"),
        ("[engine_down]\nexit_codes = [\"126\"]\n",
         'engine_down.exit_codes[0]: expected an integer, got a string ("126")'),
        ("[probe]\nbackoff = 30\n", 'probe.backoff: expected a duration string such as "30s", got an integer (30)'),
        (MINIMAL_BINDING + "env = { A = 1 }\n", "bindings.agent.env.A: expected a string, got an integer (1)"),
        ("taxonomy = { rules = { class = \"x\" } }\n", "taxonomy.rules: expected an array of tables, got a table"),
    ],
)
def test_a_wrong_type_names_the_key_the_expected_and_the_given_type(text, message):
    assert str(refusal(text)) == f"{SOURCE}: {message}"


# ---- durations ----

@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('[probe]\nbackoff = "30"\n', "probe.backoff"),
        ('[probe]\nbackoff = "0s"\n', "probe.backoff"),
        (MINIMAL_GATE + 'timeout = "fast"\n', "gates.gate0.timeout"),
        (MINIMAL_BINDING + 'timeout = "30m1h"\n', "bindings.agent.timeout"),
    ],
)
def test_a_bad_duration_is_refused_by_key(text, where):
    assert str(refusal(text)).startswith(f"{SOURCE}: {where}: ")


def test_durations_are_read_as_seconds():
    config = parse_config(MINIMAL_GATE + 'timeout = "1h30m"\n[probe]\nbackoff = "500ms"\n', SOURCE)
    assert config.gate("gate0").timeout == 5400.0
    assert config.probe.backoff == 0.5


# ---- seats and bindings ----

def test_a_seat_naming_an_undefined_binding_is_refused_with_a_suggestion():
    error = refusal('[bindings.claude]\ncommand = ["claude"]\n[seats]\nfixer = "claud"\n')
    assert str(error) == f'{SOURCE}: seats.fixer: names binding "claud" which is not defined in [bindings]'
    assert error.hint == 'did you mean "claude"?'


def test_a_seat_naming_a_binding_when_none_exist_hints_how_to_define_it():
    error = refusal('[seats]\nimplementer = "agent"\n')
    assert str(error).startswith(f"{SOURCE}: seats.implementer: ")
    assert error.hint == f"define it as [bindings.agent] in {CONFIG_FILE}"


def test_seats_resolve_to_their_bindings_and_empty_seats_to_none():
    config = parse_config(MINIMAL_BINDING + '[seats]\nimplementer = "agent"\n', SOURCE)
    assert config.seat_binding("implementer").command == ("agent", "{prompt_file}")
    assert config.seat_binding("fixer") is None


def test_asking_for_an_undefined_binding_names_the_file_and_the_known_ones():
    config = parse_config(MINIMAL_BINDING, SOURCE)
    with pytest.raises(ConfigError) as caught:
        config.binding("other")
    assert str(caught.value) == f'{SOURCE}: no binding named "other" is defined in [bindings]'
    assert caught.value.hint == "defined in [bindings]: agent"


def test_binding_defaults_and_environment_are_read():
    config = parse_config(MINIMAL_BINDING + 'env = { MODEL = "small" }\n', SOURCE)
    binding = config.binding("agent")
    assert binding.health == ()
    assert binding.timeout == 1800.0
    assert dict(binding.env) == {"MODEL": "small"}


def test_an_environment_variable_with_an_impossible_name_is_refused():
    error = refusal(MINIMAL_BINDING + 'env = { "MY-VAR" = "x", "A B" = "y" }\n')
    assert str(error) == f'{SOURCE}: bindings.agent.env.MY-VAR: "MY-VAR" is not a valid environment variable name'


def test_a_key_that_needs_quotes_is_shown_quoted():
    error = refusal(MINIMAL_BINDING + 'env = { "A B" = "y" }\n')
    assert str(error).startswith(f'{SOURCE}: bindings.agent.env."A B": ')


def test_a_binding_or_gate_without_a_command_is_refused():
    assert str(refusal('[gates.lint]\ncwd = "repo"\n')) == f"{SOURCE}: gates.lint.command: missing required key"
    assert str(refusal('[bindings.agent]\n')) == f"{SOURCE}: bindings.agent.command: missing required key"
    assert str(refusal('[gates.lint]\ncommand = []\n')).startswith(f"{SOURCE}: gates.lint.command: must list")


# ---- gates ----

def test_the_default_gate_is_the_first_in_file_order():
    config = parse_config('[gates.zeta]\ncommand = ["z"]\n[gates.alpha]\ncommand = ["a"]\n', SOURCE)
    assert list(config.gates) == ["zeta", "alpha"]
    assert config.default_gate().name == "zeta"


def test_a_gate_name_with_a_space_is_refused():
    error = refusal('[gates."my gate"]\ncommand = ["x"]\n')
    assert str(error).startswith(f'{SOURCE}: gates."my gate": "my gate" is not a valid gate name')


def test_a_gate_cwd_outside_the_choices_is_refused_with_the_choices():
    error = refusal(MINIMAL_GATE + 'cwd = "worktre"\n')
    assert str(error) == f'{SOURCE}: gates.gate0.cwd: must be one of "repo", "worktree", got "worktre"'
    assert error.hint == 'did you mean "worktree"?'


# ---- placeholders ----

def test_an_unknown_placeholder_in_a_gate_is_refused_at_load_time():
    error = refusal('[gates.gate0]\ncommand = ["check", "{worktre}"]\n')
    assert str(error).startswith(f"{SOURCE}: gates.gate0.command[1]: unknown placeholder {{worktre}}")


def test_an_unknown_placeholder_in_a_health_command_is_refused_at_load_time():
    error = refusal(MINIMAL_BINDING + 'health = ["agent", "--ping={host}"]\n')
    assert str(error).startswith(f"{SOURCE}: bindings.agent.health[1]: unknown placeholder {{host}}")


def test_escaped_braces_are_accepted_in_commands():
    config = parse_config('[gates.gate0]\ncommand = ["jq", "{{.ok}}", "{worktree}"]\n', SOURCE)
    assert config.gate("gate0").command == ("jq", "{{.ok}}", "{worktree}")


# ---- regular expressions and the taxonomy ----

def test_a_pattern_that_does_not_compile_is_refused_by_index():
    error = refusal('[engine_down]\npatterns = ["ok", "unbalanced("]\n')
    assert str(error).startswith(f"{SOURCE}: engine_down.patterns[1]: not a valid regular expression")


def test_a_taxonomy_rule_with_a_bad_regex_is_refused():
    error = refusal('[[taxonomy.rules]]\nclass = "drift"\nmatch = "[oops"\n')
    assert str(error).startswith(f"{SOURCE}: taxonomy.rules[0].match: not a valid regular expression")


def test_a_taxonomy_rule_may_not_reuse_a_built_in_class():
    error = refusal('[[taxonomy.rules]]\nclass = "seat-timeout"\nmatch = "x"\n')
    assert str(error) == (
        f'{SOURCE}: taxonomy.rules[0].class: "seat-timeout" is a built-in failure class; '
        "a rule must name a class of its own"
    )


def test_a_taxonomy_rule_may_not_use_an_action_outside_the_safe_ones():
    error = refusal('[[taxonomy.rules]]\nclass = "flaky"\nmatch = "x"\naction = "pass-gate"\n')
    assert str(error).startswith(f"{SOURCE}: taxonomy.rules[0].action: must be one of ")


def test_taxonomy_rules_keep_file_order_defaults_and_match_case_insensitively():
    config = parse_config(
        '[[taxonomy.rules]]\nclass = "a"\nmatch = "Lockfile"\n[[taxonomy.rules]]\nclass = "b"\nmatch = "x"\n',
        SOURCE,
    )
    first, second = config.taxonomy.rules
    assert (first.fail_class, first.on, first.action) == ("a", "any", "quarantine")
    assert second.fail_class == "b"
    assert first.compiled().search("the LOCKFILE is stale")


def test_engine_down_patterns_match_case_insensitively():
    patterns = Config().engine_down.compiled_patterns()
    assert any(pattern.search("Error: Connection Refused") for pattern in patterns)
    assert any(pattern.search("HTTP 529 from upstream") for pattern in patterns)
    assert not any(pattern.search("HTTP 5290 from upstream") for pattern in patterns)


# ---- ranges and other impossible values ----

@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[repair]\nmax_attempts = 21\n", "repair.max_attempts: must be between 0 and 20, got 21"),
        ("[repair]\nmax_attempts = -1\n", "repair.max_attempts: must be between 0 and 20, got -1"),
        ("[probe]\nattempts = 0\n", "probe.attempts: must be between 1 and 10, got 0"),
        ("[stop_loss]\nthreshold = 0\n", "stop_loss.threshold: must be at least 1, got 0"),
        ("[output]\nhead_bytes = 100\n", "output.head_bytes: must be between 1024 and 67108864, got 100"),
        ("[output]\ntail_bytes = 1023\n", "output.tail_bytes: must be between 1024 and 67108864, got 1023"),
        ("[engine_down]\nexit_codes = [0]\n", "engine_down.exit_codes[0]: must be between 1 and 255, got 0"),
        ('[stop_loss]\nmode = "sometimes"\n', 'stop_loss.mode: must be one of "on", "off", got "sometimes"'),
        ('[store]\nref = "failres/store"\n',
         'store.ref: must be a ref under "refs/failres/" (such as "refs/failres/store"), got "failres/store"'),
        ('[integration]\nbranch = ""\n', "integration.branch: must not be empty"),
        ('[scope]\nprotected = [""]\n', "scope.protected[0]: must not be empty"),
    ],
)
def test_an_out_of_range_value_is_refused_by_key(text, message):
    assert str(refusal(text)) == f"{SOURCE}: {message}"


@pytest.mark.parametrize("branch", ["has space", "a..b", "-rf", "ends.lock", "x/", "a~1"])
def test_an_integration_branch_git_would_refuse_is_refused(branch):
    error = refusal(f'[integration]\nbranch = "{branch}"\n')
    assert str(error).startswith(f'{SOURCE}: integration.branch: "{branch}" is not a valid branch name')


@pytest.mark.parametrize(
    "branch",
    ["main", "feature/x", "a..b", "-x", "x.lock", "x.lock/y", "x/.y", "x.", "x/", "/x", "a//b", "@", "a@{1",
     "a b", "a~1", "a^", "a:b", "a?", "a*", "a[b", "a\\b", "a\tb", "a.b/c", "héllo", "x@y"],
)
def test_branch_names_are_judged_as_git_judges_them(branch):
    git_accepts = subprocess.run(["git", "check-ref-format", "--branch", branch], capture_output=True).returncode == 0
    assert (branch_name_problem(branch) is None) == git_accepts


def test_a_remote_that_looks_like_an_option_is_refused():
    error = refusal('[integration]\nremote = "--upload-pack=x"\n')
    assert str(error).startswith(f"{SOURCE}: integration.remote: ")


def test_a_store_ref_git_would_refuse_is_refused():
    error = refusal('[store]\nref = "refs/failres/a..b"\n')
    assert str(error).startswith(f'{SOURCE}: store.ref: "refs/failres/a..b" is not a valid ref name')


# ---- worktrees ----

def test_workspaces_go_to_the_cache_outside_checkout_and_git_dir_by_default(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    repo = RepoPaths(top=tmp_path / "top", common_dir=tmp_path / "top" / ".git")
    root = worktrees_root(Config(), repo)
    assert root.parent == tmp_path / "cache" / "failres" / "workspaces"
    assert root.name.startswith("top-")
    other = worktrees_root(Config(), RepoPaths(top=tmp_path / "b" / "top", common_dir=tmp_path / "b" / "top" / ".git"))
    assert other != root  # two repositories of the same name never share workspaces


def test_a_relative_worktrees_dir_is_relative_to_the_repository_top(tmp_path):
    repo = RepoPaths(top=tmp_path / "top", common_dir=tmp_path / "top" / ".git")
    config = parse_config('[worktrees]\ndir = "../wt"\n', SOURCE)
    assert worktrees_root(config, repo) == Path(os.path.realpath(tmp_path / "wt"))


def test_an_absolute_worktrees_dir_is_used_as_is(tmp_path):
    repo = RepoPaths(top=tmp_path / "top", common_dir=tmp_path / "top" / ".git")
    config = parse_config(f'[worktrees]\ndir = "{tmp_path / "elsewhere"}"\n', SOURCE)
    assert worktrees_root(config, repo) == tmp_path / "elsewhere"


"""Reading plans: tasks with their scope and gate, refusals that name the plan file and key."""

from __future__ import annotations

from pathlib import Path

import pytest

from failres.config.model import Config
from failres.config.loading import parse_config
from failres.errors import ConfigError, UsageError
from failres.engine.plan import Plan, Task, load_plan

TWO_GATES = parse_config('[gates.gate0]\ncommand = ["a"]\n[gates.lint]\ncommand = ["b"]\n', "cfg.toml")

TASK = 'id = "t1"\nprompt = "Fix it."\nfiles = ["src/a.py"]\n'


@pytest.fixture
def write_plan(tmp_path):
    def write(text: str) -> Path:
        path = tmp_path / "plan.toml"
        path.write_text(text)
        return path

    return write


def refusal(path: Path, config: Config = TWO_GATES) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        load_plan(path, config)
    return caught.value


def test_a_plan_reads_into_tasks_with_titles_and_gates_filled_in(write_plan):
    path = write_plan(
        'slug = "release-readiness"\n'
        '[[tasks]]\nid = "t1"\ntitle = "Fix the date parser"\nprompt = "Make it pass."\n'
        'files = ["src/dates.py", "src/util/*.py"]\ngate = "lint"\n'
        '[[tasks]]\nid = "t2"\nprompt = "Second."\nfiles = ["docs/"]\n'
    )
    plan = load_plan(path, TWO_GATES)
    assert plan == Plan(
        slug="release-readiness",
        tasks=(
            Task(id="t1", title="Fix the date parser", prompt="Make it pass.",
                 files=("src/dates.py", "src/util/*.py"), gate="lint"),
            Task(id="t2", title="t2", prompt="Second.", files=("docs/",), gate="gate0"),
        ),
        path=path,
    )


def test_a_task_without_a_gate_has_none_when_the_config_defines_none(write_plan):
    plan = load_plan(write_plan(f'slug = "s"\n[[tasks]]\n{TASK}'), Config())
    assert plan.tasks[0].gate is None


def test_a_task_naming_an_undefined_gate_is_refused_with_a_suggestion(write_plan):
    path = write_plan(f'slug = "s"\n[[tasks]]\n{TASK}[[tasks]]\nid = "t2"\nprompt = "p"\nfiles = ["a"]\ngate = "lnt"\n')
    error = refusal(path)
    assert str(error) == f'{path}: tasks[1].gate: gate "lnt" is not defined in cfg.toml'
    assert error.hint == 'did you mean "lint"?'


def test_a_repeated_task_id_is_refused(write_plan):
    path = write_plan(f'slug = "s"\n[[tasks]]\n{TASK}[[tasks]]\n{TASK}')
    assert str(refusal(path)) == f'{path}: tasks[1].id: "t1" is already the id of tasks[0]'


def test_an_empty_files_list_is_refused(write_plan):
    path = write_plan('slug = "s"\n[[tasks]]\nid = "t1"\nprompt = "p"\nfiles = []\n')
    assert str(refusal(path)) == f"{path}: tasks[0].files: must list at least 1 item(s)"


@pytest.mark.parametrize("entry", ["/etc/passwd", "../outside/*.py", "src/../../x"])
def test_a_scope_entry_outside_the_repository_is_refused(write_plan, entry):
    path = write_plan(f'slug = "s"\n[[tasks]]\nid = "t1"\nprompt = "p"\nfiles = ["{entry}"]\n')
    assert str(refusal(path)).startswith(f"{path}: tasks[0].files[0]: ")


@pytest.mark.parametrize(
    ("text", "where"),
    [
        (f"[[tasks]]\n{TASK}", "slug"),
        ('slug = "s"\n', "tasks"),
        ('slug = "s"\n[[tasks]]\nprompt = "p"\nfiles = ["a"]\n', "tasks[0].id"),
        ('slug = "s"\n[[tasks]]\nid = "t1"\nfiles = ["a"]\n', "tasks[0].prompt"),
        ('slug = "s"\n[[tasks]]\nid = "t1"\nprompt = "p"\n', "tasks[0].files"),
    ],
)
def test_a_missing_required_key_is_refused_by_name(write_plan, text, where):
    path = write_plan(text)
    assert str(refusal(path)) == f"{path}: {where}: missing required key"


def test_a_plan_without_tasks_is_refused(write_plan):
    path = write_plan('slug = "s"\ntasks = []\n')
    assert str(refusal(path)) == f"{path}: tasks: must have at least 1 [[tasks]] table(s)"


@pytest.mark.parametrize(
    ("text", "where"),
    [
        (f'slug = "s"\nowner = "me"\n[[tasks]]\n{TASK}', "owner"),
        (f'slug = "s"\n[[tasks]]\n{TASK}priority = 1\n', "tasks[0].priority"),
    ],
)
def test_an_unknown_key_is_refused_by_name(write_plan, text, where):
    path = write_plan(text)
    assert str(refusal(path)) == f"{path}: {where}: unknown key"


@pytest.mark.parametrize(
    ("slug", "task_id"),
    [("Release", "t1"), ("s", "-t1"), ("a..b", "t1"), ("s", "t1.lock"), ("s", "t1."), ("s p", "t1"), ("s", "")],
)
def test_slugs_and_ids_that_cannot_be_in_a_branch_name_are_refused(write_plan, slug, task_id):
    path = write_plan(f'slug = "{slug}"\n[[tasks]]\nid = "{task_id}"\nprompt = "p"\nfiles = ["a"]\n')
    error = str(refusal(path))
    assert error.startswith(f"{path}: slug: ") or error.startswith(f"{path}: tasks[0].id: ")


def test_a_wrong_type_in_a_task_is_refused_by_key(write_plan):
    path = write_plan('slug = "s"\n[[tasks]]\nid = "t1"\nprompt = "p"\nfiles = "src/a.py"\n')
    assert str(refusal(path)) == f'{path}: tasks[0].files: expected an array of strings, got a string ("src/a.py")'


def test_malformed_plan_toml_names_file_line_and_column(write_plan):
    path = write_plan('slug = "s"\n[[tasks]\n')
    assert str(refusal(path)).startswith(f"{path}: line 2, column 8: malformed TOML: ")


def test_a_plan_that_does_not_exist_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError) as caught:
        load_plan(tmp_path / "nope.toml", TWO_GATES)
    assert str(caught.value) == f"{tmp_path / 'nope.toml'}: no such plan file"


def test_a_plan_that_is_not_utf8_is_refused(write_plan, tmp_path):
    path = tmp_path / "plan.toml"
    path.write_bytes(b'slug = "\xff"\n')
    assert str(refusal(path)) == f"{path}: not UTF-8 text (byte 8)"


def test_asking_for_a_task_by_id_returns_it(write_plan):
    plan = load_plan(write_plan(f'slug = "s"\n[[tasks]]\n{TASK}'), TWO_GATES)
    assert plan.task("t1").prompt == "Fix it."


def test_asking_for_an_unknown_task_is_a_usage_error_listing_the_ids(write_plan):
    path = write_plan(f'slug = "s"\n[[tasks]]\n{TASK}[[tasks]]\nid = "other"\nprompt = "p"\nfiles = ["a"]\n')
    plan = load_plan(path, TWO_GATES)
    with pytest.raises(UsageError) as caught:
        plan.task("zzz")
    assert not isinstance(caught.value, ConfigError)
    assert caught.value.exit_code == 2
    assert str(caught.value) == f'{path}: plan "s" has no task "zzz"'
    assert caught.value.hint == "tasks in this plan: t1, other"


def test_asking_for_a_misspelt_task_suggests_the_nearest_id(write_plan):
    plan = load_plan(write_plan(f'slug = "s"\n[[tasks]]\n{TASK}'), TWO_GATES)
    with pytest.raises(UsageError) as caught:
        plan.task("t11")
    assert caught.value.hint == 'did you mean "t1"?'

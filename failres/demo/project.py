"""The demo's throw-away project: a small real package with failing checks, and its agents' scripts."""

from __future__ import annotations

import json
import sys
from pathlib import Path

FILES = {
    "src/calc/__init__.py": (
        '"""A tiny calculator with bugs, for failres\'s demo."""\n\n'
        "from calc.util import clamp\n\n\n"
        "def add(a, b):\n    return a - b\n\n\n"
        "def mean(values):\n    return sum(values) / len(values)\n\n\n"
        "def percent(part, whole):\n    return clamp(part / whole * 100, 0, 100)\n"
    ),
    "src/calc/util.py": "def clamp(x, low, high):\n    return max(low, min(high, x))\n",
    "tests/run_tests.py": (
        '"""The judge: `python3 tests/run_tests.py TASK` checks what that task must fix."""\n\n'
        "import sys\n\nsys.path.insert(0, 'src')\nimport calc  # noqa: E402\n\n"
        "CHECKS = {\n"
        "    't1': lambda: calc.add(2, 3) == 5,\n"
        "    't2': lambda: calc.mean([]) == 0 and calc.mean([1, 2, 3]) == 2,\n"
        "    't3': lambda: calc.percent(1, 0) == 0,\n"
        "    't4': lambda: calc.add(0.1, 0.2) == 0.3,\n"
        "}\n\n"
        "task = sys.argv[1]\n"
        "try:\n    ok = CHECKS[task]()\nexcept Exception as exc:  # a crash is a red gate too\n"
        "    print(f'FAILED {task}: {type(exc).__name__}: {exc}')\n    sys.exit(1)\n"
        "print(('1 passed' if ok else f'FAILED {task}: check returned False'))\n"
        "sys.exit(0 if ok else 1)\n"
    ),
    "README.md": "# calc\n\nA throw-away project made by `git failres demo`.\n",
}

# Edits as (old, new) replacements, so each task changes only its own lines.
ADD_WRONG = [["return a - b", "return a * b"]]
ADD_FIXED = [["return a * b", "return a + b"]]
MEAN_USES_SAFE_DIV = [["from calc.util import clamp", "from calc.util import clamp, safe_div"],
                      ["return sum(values) / len(values)", "return safe_div(sum(values), len(values))"]]
UTIL_SAFE_DIV = [["return max(low, min(high, x))\n",
                  "return max(low, min(high, x))\n\n\ndef safe_div(a, b):\n    return a / b if b else 0\n"]]
PERCENT_GUARDED = [["return clamp(part / whole * 100, 0, 100)", "return clamp(part / whole * 100, 0, 100) if whole else 0"]]

PLAN = """slug = "demo"

[[tasks]]
id = "t1"
title = "Make add add"
prompt = "tests/run_tests.py t1 must pass."
files = ["src/calc/__init__.py"]

[[tasks]]
id = "t2"
title = "The mean of nothing is 0"
prompt = "tests/run_tests.py t2 must pass."
files = ["src/calc/__init__.py"]

[[tasks]]
id = "t3"
title = "A percentage of nothing is 0"
prompt = "tests/run_tests.py t3 must pass."
files = ["src/calc/__init__.py"]

[[tasks]]
id = "t4"
title = "Exact decimal addition"
prompt = "tests/run_tests.py t4 must pass (0.1 + 0.2 == 0.3)."
files = ["src/calc/__init__.py"]
"""


def agent_script() -> dict[str, list[dict]]:
    """What each seat does, per task and mode, call after call."""
    return {
        # t1: the implementer gets it wrong; the first fixer cannot repair it, the upgraded one can.
        "implementer:t1:implement": [{"replace": {"src/calc/__init__.py": ADD_WRONG}, "print": "changed add"}],
        "fixer:t1:fix": [{"print": "I think the test is wrong; leaving it."}],
        "fixer-v2:t1:fix": [{"replace": {"src/calc/__init__.py": ADD_FIXED}, "print": "add now adds"}],
        # t2: the right fix needs util.py, outside the task's scope.
        "implementer:t2:implement": [
            {"replace": {"src/calc/__init__.py": MEAN_USES_SAFE_DIV, "src/calc/util.py": UTIL_SAFE_DIV},
             "print": "added safe_div to util and used it"},
            {"print": "SCOPE-REQUEST: src/calc/util.py — mean needs safe_div, which belongs in util"},
            {"replace": {"src/calc/__init__.py": MEAN_USES_SAFE_DIV, "src/calc/util.py": UTIL_SAFE_DIV},
             "print": "used the widened scope"},
        ],
        # t3: the engine is down on the first call, then fine.
        "implementer:t3:implement": [
            {"stderr": "Error: connect ECONNREFUSED 127.0.0.1:8443", "exit": 1},
            {"replace": {"src/calc/__init__.py": PERCENT_GUARDED}, "print": "guarded the division"},
        ],
        # t4: hopeless with floats; every attempt fails the same way.
        "implementer:t4:implement": [{"print": "floats are floats"}],
        "fixer:t4:fix": [{"print": "cannot make 0.1 + 0.2 == 0.3 with floats"}],
        "fixer-v2:t4:fix": [{"print": "cannot make 0.1 + 0.2 == 0.3 with floats"}],
    }


def config_text(agents_dir: str, fixer: str = "fixer", state_dir: str = "") -> str:
    agent = json.dumps([sys.executable, f"{agents_dir}/agent.py"])[:-1]
    health = json.dumps([sys.executable, f"{agents_dir}/health.py"])
    # The scripted agents count their turns outside the demo repository (a seat that writes
    # into the person's checkout, an ignored file included, is quarantined for it), in a
    # directory their bindings may write: the seat world shows it to them, and only it.
    state_dir = state_dir or str(Path(agents_dir).parent / "state")
    write = json.dumps([state_dir]) + f"\nenv = {{ DEMO_AGENT_STATE = {json.dumps(state_dir)} }}"
    return f"""# Made by `git failres demo`: scripted agents stand in for real ones.
[integration]
branch = "main"

[worktrees]
dir = "../workspaces"                 # beside the throw-away repository, not in your cache

[gates.tests]
command = ["{sys.executable}", "tests/run_tests.py", "{{task}}"]
cwd = "worktree"
timeout = "1m"

[bindings.implementer]
command = {agent}, "implementer"]
health = {health}
timeout = "1m"
write = {write}

[bindings.fixer]
command = {agent}, "fixer"]
timeout = "1m"
write = {write}

[bindings.fixer-v2]
command = {agent}, "fixer-v2"]
timeout = "1m"
write = {write}

[seats]
implementer = "implementer"
fixer = "{fixer}"

[repair]
max_attempts = 1

[probe]
attempts = 2
backoff = "200ms"
"""


HEALTH = '''"""The demo engine's health check: down on the first probe, up after that."""
import os
import sys
from pathlib import Path

# Where the agents keep their state, outside the demo repository (the probe runs under the
# tamper check); beside this file when run by hand.
flag = Path(os.environ.get("DEMO_AGENT_STATE") or Path(__file__).parent) / "engine-restarted"
if not flag.exists():
    flag.write_text("the engine came back\\n")
    print("engine unreachable")
    sys.exit(1)
print("engine ok")
'''

"""Which ready task a runner tries first, and how long an idle runner waits: no stampede.

When every runner tried the plan's tasks in plan order, fifty runners starting together all
pushed a claim of the first task, forty-nine lost, all pushed the second, and so on: up to
R(R+1)/2 pushes (1,275 for fifty) to hand out the first fifty tasks. Here each runner orders
the ready tasks by a hash of its own run id and the task id (rendezvous hashing): every
runner has its own order, stable across its polls, so two runners want the same task next
only by chance (about one in the number of ready tasks), and the loser's next choice is just
as unlikely to collide again.

An idle runner (nothing it may claim: every task held by someone else, or waiting for an
`after`) polls less and less often, with full jitter, so a crowd of idle runners does not
poll in step; the wait is capped so a dead runner's task is still taken over soon after its
lease ends, and it starts short again the moment the runner has something to do.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable


def runner_order(run_id: str, tasks: Iterable[str]) -> list[str]:
    """`tasks` in this runner's own order: by sha256 of (run id, task id), ties (none in practice) by id."""
    def weight(task: str) -> bytes:
        return hashlib.sha256(f"{run_id}\0{task}".encode()).digest()

    return sorted(tasks, key=lambda task: (weight(task), task))


def poll_seconds(lease: float) -> float:
    """How often a runner with work in flight looks at the claims: often enough to take over soon
    after a lease ends."""
    return max(0.5, min(lease / 4, 3.0))


def idle_seconds(idle_polls: int, lease: float, draw: float) -> float:
    """The wait before the next look after `idle_polls` looks in a row found nothing to claim.

    Doubling from a tenth of the busy poll, capped at half the lease (a dead runner's task is
    taken at most that late), its upper half jittered by `draw` in [0, 1): runners that went idle
    together drift apart instead of fetching in step.
    """
    base = poll_seconds(lease) / 10
    cap = max(poll_seconds(lease), lease / 2)
    return min(cap, base * 2 ** min(idle_polls, 30)) * (0.5 + draw / 2)

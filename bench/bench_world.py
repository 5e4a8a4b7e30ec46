"""What the seat world costs a dispatch, against the same dispatch with `[sandbox] mode = "off"`.

    python bench/bench_world.py [--tasks 6] [--rounds 5]

The same plan (independent tasks, a seat that makes its one edit at once, a gate that
checks it) runs through `git failres run --jobs 1` in fresh repositories, once with the
world and once with it off, `--rounds` times; the two runs of a round go in turns
(world first in one round, off first in the next), so a machine that gets busier
half-way weighs on both alike. Each task starts three worlds: the gate at the
integration head (preflight), the seat, the gate on the workspace. The figure is the
median of the rounds' ratios (world wall time / mode off wall time: goal at most 1.1),
with their range, the fastest world run against the fastest run with it off, and the
median extra time per task; the same for cpu time (the run's and every process it
started), which a busy machine disturbs much less than wall time. Seats and
gates that take no time make it the world's whole cost, which a real agent's seconds
would hide.

Beside it, one world's start alone: `bwrap` with the mounts of a real gate's world
running `true` (network "off": no forwarder), the same for a seat whose network is
"open" (the forwarder starts `true`, the bridge serves it), against a bare world (`/usr`
and a fresh `/dev` and `/proc`) and `true` alone.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import bench_jobs

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def measure_rounds(tasks: int, rounds: int) -> list[dict[str, tuple[float, float]]]:
    """Each round's (wall, cpu) seconds by mode ("auto": the world, "off"), its two runs in turns.

    The cpu time is the run's and all its processes' (bubblewrap's and the namespace's
    init too: failres reaps those), user and system: a busy machine stretches the
    wall time of a run that starts more processes, and this much less.
    """
    out = []
    with tempfile.TemporaryDirectory(prefix="failres-bench-world-", dir="/var/tmp") as tmp:
        for n in range(rounds):
            times: dict[str, tuple[float, float]] = {}
            for mode in (("auto", "off") if n % 2 == 0 else ("off", "auto")):
                repo = bench_jobs.make_project(Path(tmp) / f"{mode}-{n}", tasks, 0)
                config = repo / ".failres.toml"
                config.write_text(config.read_text() + f'[sandbox]\nmode = "{mode}"\n')
                before = _children_cpu()
                wall = bench_jobs.timed_run(repo, 1)
                times[mode] = (wall, _children_cpu() - before)
            out.append(times)
    return out


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def measure(tasks: int, rounds: int = 1) -> tuple[float, float]:
    """(with the world, with mode off): the median wall time of `rounds` runs each."""
    runs = measure_rounds(tasks, rounds)
    return statistics.median(r["auto"][0] for r in runs), statistics.median(r["off"][0] for r in runs)


def bare_start(rounds: int = 30) -> dict[str, float]:
    """The median start, in seconds, of `true` alone, in a bare world, in a gate's world, in a seat's."""
    from failres.sandbox.probe import machine_sandbox

    found = machine_sandbox()
    if not found.available:
        raise SystemExit(f"no seat world here: {found.why}")
    flags = ["--unshare-pid", "--die-with-parent", "--new-session"]
    bare = [found.program, *flags, "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib",
            "/lib", "--symlink", "usr/lib64", "/lib64", "--dev", "/dev", "--proc", "/proc", "--", "/usr/bin/true"]
    with tempfile.TemporaryDirectory(prefix="failres-bench-world-", dir="/var/tmp") as tmp:
        gate, seat, world = _gate_world(Path(tmp), found.program)

        def median(argv: list[str]) -> float:
            times = []
            for _ in range(rounds):
                start = time.perf_counter()
                subprocess.run(argv, check=True)
                times.append(time.perf_counter() - start)
            return statistics.median(times)

        try:
            return {"true": median(["/usr/bin/true"]), "bare world": median(bare), "gate's world": median(gate),
                    "seat's world (forwarder, bridge)": median(seat)}
        finally:
            world.close()


def _gate_world(tmp: Path, bwrap: str):
    """The commands a gate and a seat of the bench's plan run as, with `true` for their own, and the world."""
    from failres.config.loading import load_config
    from failres.sandbox.world import SeatWorld

    repo = bench_jobs.make_project(tmp, 1, 0)
    workspace = tmp / "workspace"
    subprocess.run(["git", "clone", "-q", "--shared", str(repo), str(workspace)], check=True, capture_output=True)
    config = load_config(repo)
    world = SeatWorld.for_task(config, top=repo, workspace=workspace, git_dir=repo / ".git",
                               workspaces_root=tmp / "workspaces", dispatch_root=tmp / "t0.dispatch")
    if world is None:
        raise SystemExit("no seat world here")
    env = {"PATH": "/usr/bin:/bin"}
    return (world.wrap(["/usr/bin/true"], env=env, role="gate"),
            world.wrap(["/usr/bin/true"], env=env, network="open", who="[bindings.bench]"), world)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    runs = measure_rounds(args.tasks, args.rounds)
    print(f"{args.tasks} tasks, one dispatch and one gate each (three world starts a task), --jobs 1, "
          f"{args.rounds} rounds")
    for label, at in (("wall", 0), ("cpu", 1)):
        world, off = [r["auto"][at] for r in runs], [r["off"][at] for r in runs]
        ratios = sorted(w / o for w, o in zip(world, off))
        extra = statistics.median((w - o) / args.tasks for w, o in zip(world, off))
        print(f"{label}: world {statistics.median(world):.2f} s, mode off {statistics.median(off):.2f} s (medians); "
              f"ratio {statistics.median(ratios):.2f} (median of the rounds, range {ratios[0]:.2f}-{ratios[-1]:.2f}; "
              f"fastest against fastest {min(world) / min(off):.2f}); {extra * 1000:.0f} ms more a task")
    starts = bare_start()
    print("one start: " + ", ".join(f"{name} {seconds * 1000:.1f} ms" for name, seconds in starts.items()))


if __name__ == "__main__":
    main()

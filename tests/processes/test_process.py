"""Seats and gates run as real child processes: scripted fake agents, real pipes, real signals."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from failres.processes.process import EXIT_NOT_FOUND, printable_text, run_process

REPO_ROOT = Path(__file__).resolve().parents[2]
FORBIDDEN_CONTROLS = {chr(code) for code in (*range(0x20), *range(0x7F, 0xA0))} - {"\n", "\t"}


@pytest.fixture
def seat_env(tmp_path: Path) -> dict[str, str]:
    """A seat's whole environment: PATH to find tools, a throw-away HOME, nothing else."""
    home = tmp_path / "home"
    home.mkdir()
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home)}


def write_seat(directory: Path, name: str, body: str) -> Path:
    """A fake agent: an executable bash script."""
    seat = directory / name
    seat.write_text("#!/bin/bash\n" + textwrap.dedent(body))
    seat.chmod(0o755)
    return seat


def run_seat(seat: Path, env: dict[str, str], *, stdin_data: bytes | None = None, timeout: float = 30, **limits):
    return run_process([str(seat)], cwd=seat.parent, env=env, stdin_data=stdin_data, timeout=timeout, **limits)


def is_gone(pid: int) -> bool:
    """No longer running: absent, or a zombie nobody reaped (init here does not reap)."""
    try:
        process_stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    state = process_stat[process_stat.rfind(")") + 2 :].split()[0]
    return state in ("Z", "X")


def test_exit_code_of_the_child_is_reported(tmp_path, seat_env):
    result = run_seat(write_seat(tmp_path, "seat", "echo working\nexit 3\n"), seat_env)
    assert (result.exit_code, result.timed_out, result.not_found, result.signal) == (3, False, False, None)
    assert result.text == "working\n"


def test_stdout_and_stderr_arrive_merged_in_write_order(tmp_path, seat_env):
    seat = write_seat(
        tmp_path, "seat",
        """
        for i in 1 2 3; do
          echo "out $i"
          echo "err $i" >&2
        done
        """,
    )
    result = run_seat(seat, seat_env)
    assert result.text == "out 1\nerr 1\nout 2\nerr 2\nout 3\nerr 3\n"


def test_seat_runs_in_cwd_with_exactly_the_given_environment(tmp_path, seat_env):
    workdir = tmp_path / "worktree"
    workdir.mkdir()
    env = {**seat_env, "FAILRES_TASK": "t1"}
    result = run_process(
        ["bash", "-c", "pwd; /usr/bin/env | sort"], cwd=workdir, env=env, stdin_data=None, timeout=30
    )
    lines = result.text.splitlines()
    assert lines[0] == str(workdir)
    # bash exports PWD, SHLVL and _ itself; everything else must come from the mapping.
    inherited = {line.split("=", 1)[0] for line in lines[1:]} - {"PWD", "SHLVL", "_"}
    assert inherited == {"PATH", "HOME", "FAILRES_TASK"}


def test_fifty_megabytes_of_invalid_utf8_stay_within_the_head_and_tail_bounds(tmp_path):
    """The output is read in chunks; only head and tail are kept, so memory stays flat."""
    seat = tmp_path / "noisy-seat"
    seat.write_text(
        f"#!{sys.executable}\nimport os, sys\n"
        "for _ in range(50):\n    sys.stdout.buffer.write(b'\\xff\\x00\\xc3' + os.urandom((1 << 20) - 3))\n"
    )
    seat.chmod(0o755)
    driver = textwrap.dedent(
        """
        import json, os, resource, sys
        from pathlib import Path
        from failres.processes.process import run_process
        before_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        result = run_process([sys.argv[1]], cwd=Path(sys.argv[2]), env=dict(os.environ),
                             stdin_data=None, timeout=600)
        text = result.text
        after_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(json.dumps({"exit": result.exit_code, "total": result.total_bytes,
                          "head": len(result.head), "tail": len(result.tail),
                          "truncated": result.truncated, "growth_kb": after_kb - before_kb,
                          "text": text}))
        """
    )
    completed = subprocess.run(
        [sys.executable, "-c", driver, str(seat), str(tmp_path)],
        capture_output=True, check=True, env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
    )
    report = json.loads(completed.stdout)
    assert report["exit"] == 0
    assert report["total"] == 50 * (1 << 20)
    assert report["head"] + report["tail"] <= 2 * 65536
    assert report["truncated"] is True
    # Holding the output would grow the process by 50 MB or more; the buffers are 128 KiB.
    assert report["growth_kb"] < 20 * 1024
    assert f"[... {50 * (1 << 20) - 2 * 65536} bytes omitted ...]" in report["text"]
    assert not FORBIDDEN_CONTROLS & set(report["text"])


def test_truncated_text_shows_head_marker_and_tail(tmp_path, seat_env):
    seat = write_seat(tmp_path, "seat", "printf 'HEAD '; printf 'x%.0s' $(seq 1000); printf -- ' TAIL'\n")
    result = run_seat(seat, seat_env, head_bytes=5, tail_bytes=5)
    assert (result.head, result.tail, result.total_bytes) == (b"HEAD ", b" TAIL", 1010)
    assert result.truncated
    assert result.text == "HEAD \n[... 1000 bytes omitted ...]\n TAIL"


def test_truncated_text_leaves_out_the_words_the_cut_went_through(tmp_path, seat_env):
    """What is left of a cut token may be a secret too short to be recognised by its shape."""
    seat = write_seat(tmp_path, "seat", "printf 'ok ghp_R4nd0m'; printf 'x%.0s' $(seq 1000); printf -- 'T0k3n end'\n")
    result = run_seat(seat, seat_env, head_bytes=14, tail_bytes=9)
    assert result.text == "ok \n[... 999 bytes omitted ...]\n end"


def test_output_that_fits_is_kept_whole_without_a_marker(tmp_path, seat_env):
    result = run_seat(write_seat(tmp_path, "seat", "echo short\n"), seat_env, head_bytes=4, tail_bytes=64)
    assert not result.truncated
    assert result.head + result.tail == b"short\n"
    assert result.text == "short\n"


def test_text_removes_nul_and_escapes_and_marks_invalid_bytes(tmp_path, seat_env):
    seat = write_seat(tmp_path, "seat", r"printf 'a\0b\033[31mred\007\r\n\xff\tend'" + "\n")
    result = run_seat(seat, seat_env)
    assert result.head == b"a\x00b\x1b[31mred\x07\r\n\xff\tend"
    assert result.text == "abred\n\ufffd\tend"
    assert result.raw_text.encode("utf-8", "surrogateescape") == result.head


def test_a_progress_line_redrawn_with_carriage_returns_keeps_its_last_state(tmp_path, seat_env):
    seat = write_seat(tmp_path, "seat", r"printf 'get  10%%\rget  60%%\rget 100%%\r\ndone\r\n'" + "\n")
    assert run_seat(seat, seat_env).text == "get 100%\ndone\n"


@given(st.binary(max_size=512))
def test_printable_text_never_contains_control_characters(data):
    assert not FORBIDDEN_CONTROLS & set(printable_text(data))


def test_missing_executable_is_reported_not_raised(tmp_path, seat_env):
    result = run_process(
        [str(tmp_path / "no-such-agent"), "--go"], cwd=tmp_path, env=seat_env, stdin_data=b"prompt", timeout=30
    )
    assert (result.not_found, result.exit_code, result.timed_out) == (True, EXIT_NOT_FOUND, False)
    assert result.text == f"cannot run {str(tmp_path / 'no-such-agent')!r}: No such file or directory\n"


def test_file_without_execute_permission_is_reported_as_not_found(tmp_path, seat_env):
    seat = write_seat(tmp_path, "seat", "echo never\n")
    seat.chmod(stat.S_IRUSR | stat.S_IWUSR)
    result = run_seat(seat, seat_env)
    assert (result.not_found, result.exit_code) == (True, EXIT_NOT_FOUND)
    assert "Permission denied" in result.text


def test_missing_working_directory_is_a_caller_error(tmp_path, seat_env):
    with pytest.raises(NotADirectoryError, match="does not exist"):
        run_process(["true"], cwd=tmp_path / "gone", env=seat_env, stdin_data=None, timeout=30)


def test_timeout_kills_the_whole_group_including_grandchildren_that_ignore_sigterm(tmp_path, seat_env):
    seat = write_seat(
        tmp_path, "seat",
        """
        sleep 1000 &
        echo $! > plain.pid
        (trap '' TERM; exec sleep 1000) &
        echo $! > stubborn.pid
        echo started
        sleep 1000
        """,
    )
    result = run_seat(seat, seat_env, timeout=1)
    assert (result.timed_out, result.exit_code) == (True, None)
    assert result.text == "started\n"
    for pid_file in ("plain.pid", "stubborn.pid"):
        assert is_gone(int((tmp_path / pid_file).read_text()))


def test_a_seat_ignoring_sigterm_is_killed_and_the_signal_reported(tmp_path, seat_env):
    seat = write_seat(tmp_path, "seat", "trap '' TERM\necho $$ > seat.pid\nsleep 1000\n")
    result = run_seat(seat, seat_env, timeout=1)
    assert (result.timed_out, result.exit_code, result.signal) == (True, None, signal.SIGKILL)
    assert is_gone(int((tmp_path / "seat.pid").read_text()))


def test_leftover_background_process_holding_the_pipe_is_killed_after_a_normal_exit(tmp_path, seat_env):
    seat = write_seat(tmp_path, "seat", "sleep 1000 &\necho $! > leftover.pid\necho done\n")
    result = run_seat(seat, seat_env)
    assert (result.exit_code, result.timed_out, result.text) == (0, False, "done\n")
    assert is_gone(int((tmp_path / "leftover.pid").read_text()))


def test_a_seat_killed_by_a_signal_reports_128_plus_the_signal(tmp_path, seat_env):
    result = run_seat(write_seat(tmp_path, "seat", "kill -KILL $$\n"), seat_env)
    assert (result.exit_code, result.signal, result.timed_out) == (128 + signal.SIGKILL, signal.SIGKILL, False)


def test_a_seat_that_never_reads_stdin_and_writes_a_lot_does_not_deadlock(tmp_path, seat_env):
    seat = write_seat(tmp_path, "seat", "head -c 3000000 /dev/zero | tr '\\0' 'z'\necho\necho finished\n")
    result = run_seat(seat, seat_env, stdin_data=b"p" * 4_000_000)
    assert (result.exit_code, result.timed_out, result.total_bytes) == (0, False, 3_000_010)
    assert result.text.endswith("z\nfinished\n")


def test_a_seat_that_closes_stdin_early_is_fine(tmp_path, seat_env):
    seat = write_seat(tmp_path, "seat", "exec 0<&-\necho closed\n")
    result = run_seat(seat, seat_env, stdin_data=b"p" * 1_000_000)
    assert (result.exit_code, result.text) == (0, "closed\n")


def test_a_seat_that_reads_all_stdin_receives_every_byte(tmp_path, seat_env):
    prompt = os.urandom(3_000_000)
    seat = write_seat(tmp_path, "seat", "sha256sum | cut -d' ' -f1\n")
    result = run_seat(seat, seat_env, stdin_data=prompt)
    assert (result.exit_code, result.text) == (0, hashlib.sha256(prompt).hexdigest() + "\n")


def test_without_stdin_data_the_seat_reads_end_of_file(tmp_path, seat_env):
    seat = write_seat(tmp_path, "seat", "cat\necho eof\n")
    result = run_seat(seat, seat_env, stdin_data=None)
    assert (result.exit_code, result.timed_out, result.text) == (0, False, "eof\n")


@pytest.mark.parametrize(
    ("argv", "limits", "message"),
    [
        ([], {}, "empty command"),
        (["true"], {"timeout": 0}, "timeout must be a positive"),
        (["true"], {"head_bytes": -1}, "must not be negative"),
    ],
)
def test_impossible_arguments_are_refused_before_anything_runs(tmp_path, seat_env, argv, limits, message):
    arguments = {"timeout": 30, **limits}
    with pytest.raises(ValueError, match=message):
        run_process(argv, cwd=tmp_path, env=seat_env, stdin_data=None, **arguments)


def wait_until_gone(pid: int, seconds: float = 10.0) -> bool:
    give_up = time.monotonic() + seconds
    while time.monotonic() < give_up:
        if is_gone(pid):
            return True
        time.sleep(0.05)
    return is_gone(pid)


def test_a_process_that_left_the_group_with_setsid_is_killed_when_the_seat_exits(tmp_path, seat_env):
    seat = write_seat(tmp_path, "seat", "setsid sleep 1000 > /dev/null 2>&1 < /dev/null &\necho $! > escaped.pid\n"
                                        "sleep 0.2\necho done\n")
    result = run_seat(seat, seat_env)
    assert (result.exit_code, result.text) == (0, "done\n")
    assert is_gone(int((tmp_path / "escaped.pid").read_text()))


def test_a_double_forked_daemon_that_keeps_writing_files_is_dead_when_the_run_returns(tmp_path, seat_env):
    seat = write_seat(tmp_path, "seat", """
        ( ( exec -a daemon bash -c 'echo $$ > daemon.pid; while true; do date >> late.txt; sleep 0.05; done' ) & ) &
        sleep 0.3
        echo done
        """)
    result = run_seat(seat, seat_env)
    assert result.exit_code == 0
    assert is_gone(int((tmp_path / "daemon.pid").read_text()))
    size = (tmp_path / "late.txt").stat().st_size
    time.sleep(0.3)
    assert (tmp_path / "late.txt").stat().st_size == size  # nothing writes after the dispatch


def test_a_seat_that_kills_its_supervisor_still_leaves_nothing_behind(tmp_path, seat_env):
    from failres.processes import reaper

    assert reaper.become_subreaper()
    seat = write_seat(tmp_path, "seat", """
        setsid bash -c 'echo $$ > orphan.pid; exec sleep 1000' > /dev/null 2>&1 < /dev/null &
        sleep 0.2
        kill -KILL $PPID
        sleep 1000
        """)
    result = run_seat(seat, seat_env, timeout=20)
    assert not result.timed_out
    assert wait_until_gone(int((tmp_path / "orphan.pid").read_text()))
    assert reaper.leftovers() == []


def test_cancelling_a_run_stops_the_seat_like_a_timeout(tmp_path, seat_env):
    seat = write_seat(tmp_path, "seat", "echo $$ > seat.pid\necho started\nsleep 1000\n")
    began = time.monotonic()
    result = run_process([str(seat)], cwd=tmp_path, env=seat_env, stdin_data=None, timeout=300,
                         cancelled=lambda: (tmp_path / "seat.pid").exists() and time.monotonic() - began > 0.5)
    assert result.timed_out and result.exit_code is None
    assert is_gone(int((tmp_path / "seat.pid").read_text()))


def test_the_seat_pid_is_reported_as_soon_as_it_runs(tmp_path, seat_env):
    seen: list[int] = []
    seat = write_seat(tmp_path, "seat", "echo $$ > seat.pid\n")
    run_process([str(seat)], cwd=tmp_path, env=seat_env, stdin_data=None, timeout=30, on_start=seen.append)
    assert seen == [int((tmp_path / "seat.pid").read_text())]


def test_an_unsupervised_command_reports_its_pid_as_it_starts(tmp_path, seat_env):
    seen: list[int] = []
    seat = write_seat(tmp_path, "seat", "echo $$ > seat.pid\n")
    run_process([str(seat)], cwd=tmp_path, env=seat_env, stdin_data=None, timeout=30, on_start=seen.append,
                supervised=False)
    assert seen == [int((tmp_path / "seat.pid").read_text())]


def test_a_hard_kill_of_failres_stops_the_seat_and_everything_it_started(tmp_path, seat_env):
    seat = write_seat(tmp_path, "seat", """
        setsid bash -c 'echo $$ > escaped.pid; exec sleep 1000' > /dev/null 2>&1 < /dev/null &
        echo $$ > seat.pid
        sleep 1000
        """)
    stand_in = tmp_path / "stand_in.py"
    stand_in.write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(REPO_ROOT)!r})
        from pathlib import Path
        from failres.processes.process import run_process
        run_process([{str(seat)!r}], cwd=Path({str(tmp_path)!r}), env={seat_env!r}, stdin_data=None, timeout=600)
        """))
    proc = subprocess.Popen([sys.executable, str(stand_in)])
    give_up = time.monotonic() + 20
    while not ((tmp_path / "escaped.pid").exists() and (tmp_path / "seat.pid").exists()):
        assert time.monotonic() < give_up, "the seat never started"
        time.sleep(0.05)
    proc.kill()
    proc.wait()
    for name in ("seat.pid", "escaped.pid"):
        assert wait_until_gone(int((tmp_path / name).read_text())), name


def test_an_unsupervised_command_takes_its_process_group_and_escapees_with_it(tmp_path, seat_env):
    from failres.processes import reaper

    assert reaper.become_subreaper()
    seat = write_seat(tmp_path, "gate", """
        sleep 1000 &
        echo $! > grouped.pid
        setsid bash -c 'echo $$ > escaped.pid; exec sleep 1000' > /dev/null 2>&1 < /dev/null &
        sleep 0.2
        echo judged
        exit 3
        """)
    result = run_process([str(seat)], cwd=tmp_path, env=seat_env, stdin_data=None, timeout=30, supervised=False)
    assert (result.exit_code, result.text) == (3, "judged\n")
    assert wait_until_gone(int((tmp_path / "grouped.pid").read_text()))
    assert wait_until_gone(int((tmp_path / "escaped.pid").read_text()))


def test_an_unsupervised_command_past_its_deadline_is_stopped(tmp_path, seat_env):
    seat = write_seat(tmp_path, "gate", "echo $$ > gate.pid\nsleep 1000\n")
    result = run_process([str(seat)], cwd=tmp_path, env=seat_env, stdin_data=None, timeout=1, supervised=False)
    assert result.timed_out and result.exit_code is None
    assert is_gone(int((tmp_path / "gate.pid").read_text()))


def test_a_stop_that_lands_between_reaping_the_seat_and_recording_it_still_ends_the_supervisor(tmp_path):
    """A supervisor once spun for ever at 40% of a core after its failres was killed: the stop's
    signal arrived between the wait that reaped the seat and the line that records its status.
    The signal's moment is the one thing faked here: the first wait that reaps the seat raises
    the stop, as the handler would at that bytecode; the supervisor must still end."""
    driver = tmp_path / "driver.py"
    driver.write_text(textwrap.dedent(f"""
        import os, sys
        sys.path.insert(0, {str(REPO_ROOT / "failres" / "processes")!r})
        import supervise

        real_wait = os.waitpid

        def wait_then_stop(pid, options):
            found = real_wait(pid, options)
            if found[0] and not options:
                supervise._stop_requested = True
                raise supervise._Stop  # the status of what was just reaped is lost, as in the race
            return found

        os.waitpid = wait_then_stop
        sys.exit(supervise.main([{str(tmp_path / "status")!r}, str(os.getppid()), "-", "--", "true"]))
    """))
    done = subprocess.run([sys.executable, "-I", "-S", str(driver)], timeout=30, capture_output=True, text=True)
    assert done.returncode == 1, done.stderr
    assert (tmp_path / "status").read_text().splitlines()[-1] == "exit - - lost track of the seat"

"""The world's mount plan as bubblewrap's words (pure): the order is the guarantee."""

from __future__ import annotations

from failres.sandbox.layout import (NET_INSIDE, NOBODY, OBJECTS_INSIDE, SystemEntry, WorldPlan, isolation_words,
                                    layout_argv, ordered)


def plan(**overrides) -> WorldPlan:
    values = dict(top="/home/p/proj", workspace="/home/p/.cache/failres/workspaces/proj-1/s/t1", home="/home/p",
                  cwd="/home/p/proj", system=(SystemEntry("/usr"), SystemEntry("/bin", "usr/bin")),
                  readable=("/home/p/.local", "/home/p/.local/bin", "/opt/node"),
                  writable=("/home/p/.cache/failres/workspaces/proj-1/s/t1.dispatch/1",),
                  environment=(".venv",), objects="/home/p/proj/.git/objects",
                  alternates="/home/p/.cache/failres/workspaces/proj-1/s/t1.dispatch/world/alternates")
    values.update(overrides)
    return WorldPlan(**values)


def position(words: list[str], *wanted: str) -> int:
    for index in range(len(words) - len(wanted) + 1):
        if tuple(words[index:index + len(wanted)]) == wanted:
            return index
    raise AssertionError(f"{wanted} not in {words}")


def test_the_workspace_is_mounted_at_the_repository_top_after_the_private_home():
    words = layout_argv(plan(), "bwrap", ["agent"])
    home = position(words, "--tmpfs", "/home/p")
    workspace = position(words, "--bind", plan().workspace, "/home/p/proj")
    assert home < workspace
    assert position(words, "--ro-bind-try", "/home/p/.local", "/home/p/.local") > home


def test_the_persons_environment_dirs_and_objects_come_read_only_after_the_workspace():
    words = layout_argv(plan(), "bwrap", ["agent"])
    workspace = position(words, "--bind", plan().workspace, "/home/p/proj")
    assert position(words, "--ro-bind-try", "/home/p/proj/.venv", "/home/p/proj/.venv") > workspace
    assert position(words, "--ro-bind", "/home/p/proj/.git/objects", OBJECTS_INSIDE) > workspace
    assert position(words, "--ro-bind-try", plan().alternates, "/home/p/proj/.git/objects/info/alternates") > workspace


def test_a_seat_is_in_its_own_pid_namespace_and_dies_with_its_parent():
    words = layout_argv(plan(), "bwrap", ["agent", "--flag"])
    assert words[:4] == ["bwrap", "--die-with-parent", "--new-session", "--unshare-pid"]
    assert words[-3:] == ["--", "agent", "--flag"]
    assert position(words, "--chdir", "/home/p/proj") < len(words) - 3


def test_a_world_always_has_a_network_namespace_of_its_own():
    assert "--unshare-net" in layout_argv(plan(), "bwrap", ["agent"])


def test_the_bridge_is_bound_read_only_and_the_forwarder_starts_the_command():
    words = layout_argv(plan(bridge="/tmp/failres-net-x", launcher=("py", "fw.py", "--")), "bwrap", ["agent"])
    assert position(words, "--ro-bind", "/tmp/failres-net-x", NET_INSIDE) > position(words, "--tmpfs", "/run")
    assert words[-5:] == ["--", "py", "fw.py", "--", "agent"]


def test_a_world_without_a_bridge_has_no_forwarder():
    words = layout_argv(plan(), "bwrap", ["agent"])
    assert NET_INSIDE not in words and words[-2:] == ["--", "agent"]


def test_a_path_below_another_readable_path_is_not_bound_again():
    assert ordered(["/home/p/.local/bin", "/home/p/.local", "/opt/x", "/opt/x/"]) == ["/opt/x", "/home/p/.local"]


def test_system_links_stay_links_and_scratch_dirs_are_private():
    words = layout_argv(plan(), "bwrap", ["agent"])
    assert position(words, "--symlink", "usr/bin", "/bin") >= 0
    for scratch in ("/tmp", "/var/tmp", "/run"):
        assert position(words, "--tmpfs", scratch) >= 0
    assert position(words, "--dev", "/dev", "--proc", "/proc") >= 0


def test_every_world_is_a_user_namespace_without_capabilities_and_with_its_own_ipc_uts_and_cgroup():
    words = layout_argv(plan(uid=1000, gid=1001), "bwrap", ["agent"])
    assert position(words, "--unshare-user", "--uid", "1000", "--gid", "1001") < position(words, "--", "agent")
    assert position(words, "--cap-drop", "ALL") >= 0
    for namespace in ("--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"):
        assert namespace in words


def test_root_is_nobody_inside_so_a_nested_user_namespace_can_be_made():
    """Mapping uid 0 into a child namespace takes CAP_SETFCAP, which a seat has not."""
    assert isolation_words(0, 0)[:5] == ["--unshare-user", "--uid", str(NOBODY), "--gid", str(NOBODY)]
    assert isolation_words(1000, 0)[:5] == ["--unshare-user", "--uid", "1000", "--gid", "0"]

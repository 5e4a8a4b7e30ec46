"""The seat world: the OS sandbox every seat, workspace gate and gate setup runs in.

A seat is untrusted code, and the tamper check (`containment`) can only undo what git
and the file system show after the fact. Here the seat cannot reach what it must not
touch in the first place: on Linux, bubblewrap puts it in a mount and PID namespace
where the task's workspace stands at the path of the person's repository top (so an
editable install, a `.pth` or a `node_modules` link resolves to the workspace's files,
and the gate judges what will be committed), the person's checkout, home, other
workspaces and other repositories are not there, `/tmp` is private, and every process
ends with the dispatch. `probe` says whether this machine gives one, `layout` is the
pure mount plan, `world` gathers a run's facts into it, `environment` looks for an
environment that points into the checkout where no world runs, `doctor` is the
machine report.
"""

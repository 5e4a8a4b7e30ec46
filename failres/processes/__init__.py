"""Running a child process so that nothing of it outlives its run.

`process` runs a seat or a gate with bounded output (`output`) and a deadline, under
the `supervise` program that is the subreaper of everything below it; `reaper` makes
failres itself the last subreaper, records the processes failres starts, and sweeps
what escaped. Git, the tamper check and the loop all start their children here.
"""

"""The task loop: from a plan task (`plan`) to a commit on its branch, or a quarantine with a reason.

`loop` is the flow, `dispatching` one seat dispatch under the checks, `run_steps` the gate,
probe, commit and quarantine; the pure decisions (`taxonomy`, `ladder`, `state`, `prompts`,
`tally`) sit beside it, and `entry` is what the command line calls.
"""

"""Many runners, one plan: tasks claimed through the git remote every runner already shares.

A claim is a ref on the remote (`refs/failres/claims/<slug>/<task>`) moved only by
compare-and-swap pushes, so the remote's own atomic ref update is the lock; nothing
else coordinates the runners. `claims` is the record and the pure rules, `transport`
the git at the edge, `holder` one runner's hold on one task, `runner` the schedule
of `run --remote`, `view` what `status`/`cancel --remote` read and write, `ci` the
workflows that start runners on a CI service. The store travels the same remote: `sync`
(fetch, join, push with a lease) and `store_origin` (`init` in a clone takes the remote's
store instead of starting an empty one).
"""

"""Containment: what a seat must never change, and one live run per task.

`tamper` and `checkout` record the person's repository (refs, config, hooks, the
checkout) around a dispatch and undo what a seat changed there, keeping what it
left in `evidence`; `locks` keep one live run per task, even against a seat that
swaps the lock file, and let a later run find one that died; `interrupts` turn signals
into a clean stop; `cancel` stops a run from another terminal; `left` makes a workspace
that outlives its run (a killed one's too) inert for the person. Running the seat
itself, so that none of its processes outlives it, is `failres.processes`.
"""

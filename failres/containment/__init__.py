"""Containment: what keeps a seat in its box.

`process` runs a seat or gate with bounded output and a deadline, under the
`supervise` program that kills every process below it; `reaper` makes failres the
last subreaper and sweeps what escaped; `tamper` and `checkout` record the person's
repository around a dispatch and undo what a seat changed there; `locks`,
`interrupts` and `cancel` keep one live run per task and stop runs cleanly.
"""

"""Bounded, lossless knowledge: how far each store may grow, and nothing lost when it is full.

`policy` is the knowledge policy; `capacity` is the one manager every bounded store goes
through (a record past the bound is evicted to the archive), `retention` what each store
keeps first, `counts` how many records each holds (told without walking it), `archive` where
evicted records live and how one is restored. `facts` are
project facts with a timeline, bounded the same way.
"""

__all__ = ["archive", "capacity", "facts", "policy"]

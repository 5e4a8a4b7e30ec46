"""The command line described as plain data, and what is made from that description.

`model` reads the typer/click command tree once into frozen dataclasses; `text`
renders a command's help the way git's own commands print theirs, `roff` renders
the `git-failres(1)` manual page, and `completion` answers a shell's "what could
come next" and writes the bash and zsh scripts that ask it. All four read the same
description, so the help a person reads, the manual `man git-failres` opens and
what <TAB> offers cannot disagree.
"""

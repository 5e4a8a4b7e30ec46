"""The git hooks: installing them (`install`) and what they run (`run`).

Imported on every merge by the installed hooks: standard library only here.
"""

"""Records as files in commits on one private ref, and what reads, guards and joins them.

`store` moves the ref by compare-and-swap (`store_view` is its reading side, which runs over
pygit2's repository or `plain_repo`'s, read through git itself for commands that only look) (`trees` builds a changed tree, `bulk` writes big
batches through `git fast-import`), `records` is how a JSON document becomes a file and
back, `guard` refuses a store that is not sound and never silently recreates a missing one,
`index` with `index_db` is the disposable SQLite index, `treediff` the files that differ
between two trees, `shared_dir` the git dir every worktree of a repository shares. Between replicas: `history` (undo, the union merge, built level by level
in `treemerge`, whose new trees `packs` writes as one pack), `settle` (a joined line made whole), `remote_copies` (which remotes hold the
store, read without the network).
"""

__all__ = ["bulk", "guard", "history", "index", "records", "remote_copies", "settle", "plain_repo", "shared_dir", "store",
           "store_view", "treediff", "trees"]

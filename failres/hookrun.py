"""Where hooks installed by failres 0.1.0 before its packages were regrouped point:
`<python> -m failres.hookrun`. It runs exactly what `failres.hooks.run` runs; the next
`git failres hooks install` rewrites such a hook to call that module directly.
Standard library only, like the hook path it serves.
"""

from __future__ import annotations

import sys

from failres.hooks.run import main

if __name__ == "__main__":
    sys.exit(main())

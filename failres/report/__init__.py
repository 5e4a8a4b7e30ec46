"""The report: `build` (what failed, what resolved it, what it cost) and `html` (one self-contained page)."""

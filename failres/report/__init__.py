"""The report: `build` (what failed, what resolved it, what it cost), `trends`, `html` (one self-contained page), `learned_rules`."""

"""The report's "Learned rules" section: whether learning helps, from the validation ledger.

Each learned rule rides in the prompt of every run while it is active; the ledger
records, for each run, which rules rode in it and what came of the run. Tallied
per rule (how often it rode, how many of those runs committed, were quarantined or
regressed with the rule to blame), a person can see which rules were never followed
by a better outcome and retire them (`git failres rules retire ID`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def learned_rule_rows(store) -> list[dict]:
    """Every learned rule of every domain with its ledger tally, live ones first."""
    from lessons.rulebook.ledger import read_validations, rule_tallies
    from lessons.rulebook.rules import rules_in_force

    force = rules_in_force(store)
    tallies = rule_tallies(read_validations(store)[0])
    rows = []
    for domain, _, learned in force.sets:
        for rule in learned:
            tally = tallies[rule.id].to_dict() if rule.id in tallies else {}
            rows.append({"domain": domain, "id": rule.id or "", "text": rule.text, "active": rule.active(),
                         "evidence": rule.based_on_count or 0, "rode": tally.get("observations", 0),
                         "committed": tally.get("committed", 0), "quarantined": tally.get("quarantined", 0),
                         "regressions": tally.get("attributed_regressions", 0),
                         "lastValidated": tally.get("last_validated") or ""})
    rows.sort(key=lambda r: (not r["active"], r["domain"], r["id"]))
    return rows


def text_lines(rows: Sequence[Mapping]) -> list[str]:
    """The section as the text report prints it ("" lines included); nothing when no rule was learned."""
    if not rows:
        return []
    lines = ["", "Learned rules (rode: runs whose prompt carried it; then how those runs ended)"]
    for r in rows:
        state = "active" if r["active"] else "inactive"
        lines.append(f"  {r['id'] or '(no id)'}  {r['domain']}  {state}  rode {r['rode']}, committed {r['committed']}, "
                     f"quarantined {r['quarantined']}, regressions {r['regressions']}  {' '.join(r['text'].split())[:80]}")
    if any(r["active"] and r["rode"] and not r["committed"] for r in rows):
        lines.append("  a rule that rode in runs none of which committed may not help: git failres rules retire ID")
    return lines


def html_section(rows: Sequence[Mapping], escape, table) -> list[str]:
    """The section as the HTML report shows it, built with the page's own `escape` and `table`."""
    cells = [(escape(r["id"]), escape(r["domain"]), "active" if r["active"] else "inactive", str(r["rode"]),
              str(r["committed"]), str(r["quarantined"]), str(r["regressions"]), escape(r["text"])) for r in rows]
    return [f'<section class="card"><h2>Learned rules ({len(rows)})</h2>',
            table("table-learned-rules", [("rule", False), ("domain", False), ("state", False), ("rode", True),
                                          ("committed", True), ("quarantined", True), ("regressions", True),
                                          ("text", False)], cells, "no rule learned yet"),
            "</section>"]

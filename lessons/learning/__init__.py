"""Learning: from what people did in agents' sessions to rules a person accepts.

`transcripts` reads each harness's session files into one message model (`messages`);
`interventions` finds where a person stepped in, `followups` what a later turn is (with
`directives`: which of its words are the person's, and which the directive; `symptoms`:
a correction said without a word of correction),
`provenance` (with `locality`, `shell_text` and `trusted_commands`) where each piece of evidence came from,
`belonging` which repository a session's lessons belong to. The `reflector` turns a moment
into a directive, the `learner` (with `candidates` and `outcomes`) a candidate rule set,
written as a proposal (`proposals`) that changes nothing until a person accepts it;
`providers` is the one model call, `store_io` their records in the store.
"""

__all__ = ["belonging", "directives", "interventions", "learner", "locality", "messages", "outcomes", "proposals",
           "provenance", "providers", "reflector", "store_io", "symptoms", "transcripts", "trusted_commands"]

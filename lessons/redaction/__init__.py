"""Where a secret is recognised and cut: nothing that looks like a credential reaches a record.

`redact` is the one pass every write goes through; `secret_shapes` holds the shapes
secrets take and the decisions that tell them from look-alikes, `secret_gates` what a text
must hold before each shape can match (so most text skips most shapes), `key_bodies` what a key's
body encodes without its BEGIN line, `known_secrets` the values a harness names.
"""

__all__ = ["known_secrets", "redact", "secret_shapes"]

"""Stage 3 of the pipeline: from a reply to a reward.

`answer` parses the reply (JSON Schema, bounded); `pattern_guard` refuses rules whose
matching could blow up before they are compiled; `scanner` applies the rules to the
held-out records under a CPU budget, run alone in a `scan_worker` process that
`scan_pool` keeps; `reward` turns what was removed into the reward; `score` runs those
steps for one episode; `summary` averages episodes. `stack` gives parsing a fixed stack
depth so a verdict never depends on the caller's.

This is the code the source digest vouches for and the audit re-runs. Public names are
re-exported by the top-level package and the contract; this ``__init__`` imports
nothing, so the layout adds no imports and no import cycles."""

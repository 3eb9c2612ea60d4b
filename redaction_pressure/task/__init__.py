"""Stage 2 of the pipeline: from a split and a seed to a task.

`splits` names the public splits and derives the private one's seeds from a secret;
`tasks` cuts a `RedactionTask` (shown and held-out records, build identity) from a
seed's stream; `prompt` renders what the model reads. Public names are re-exported
by the top-level package and the contract."""

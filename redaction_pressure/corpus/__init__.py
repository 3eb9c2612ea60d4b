"""Stage 1 of the pipeline: the seeded record streams tasks are cut from.

`rng` (the only source of randomness) and `names` feed `families` (secret and decoy
families as tables, with their oracle regexes) and `templates` (the record shapes);
`house`, `policy` and `context` draw a stream's open world, assembled by `world`;
`stream` mixes all of it into labelled records, and `catalog` describes the families
to readers. Its output is fixed by the golden fingerprints in tests/unit/test_corpus.py.

The public names are re-exported by the top-level package; this ``__init__`` imports
nothing, so the layout adds no imports and no import cycles."""

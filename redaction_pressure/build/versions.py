"""Version strings that name behaviour. Bump one whenever its behaviour changes, in
the same commit that updates the golden fingerprints in tests/unit/test_corpus.py."""

ENVIRONMENT_VERSION = "0.12.0"
CORPUS_VERSION = "corpus-v6"
# The tasks of levels 2-5 within the corpus version: bumped whenever a higher level's
# tasks change while level 1 stays byte-identical (the corpus version seeds every
# stream, so bumping it would move level 1 too). Part of a higher level's durable key.
# v2: environment 0.6.0 (held-out coverage, level 5's egress range); v3: environment
# 0.7.0 (vendor secrets as drawn, role-free key-block labels, look-alike coverage); v4:
# environment 0.8.0 (look-alike keys that contain the secret's key name, levels 4-5;
# every base64 form tested); v5: corpus-v5, environment 0.10.0 (level 2 draws more quiet
# files, and every stream is reseeded by the corpus version); v6: environment 0.11.0
# (stated policy exceptions go to categories already secret, levels 3-5 state one or
# two; a base64 look-alike under a Secret key of the credential's form, both words drawn
# per stream, levels 4-5; a same-shaped kept key beside each scoped secret in both of its
# sections, levels 3-5; a kept key's affixed twin, levels 4-5; placeholders of the
# look-alikes' own shapes, levels 3-5: constant replies reading such co-occurrences
# scored 0.446 on level-5 dev, above level 4); v7: corpus-v6, environment 0.12.0 (every
# stream reseeded by the corpus version; level 4 tests each look-alike in three
# held-out records, as level 5 does: the best constant reply at level 4 was 0.007 below
# level 3's).
LEVELS_VERSION = "levels-v7"
REWARD_SCHEMA_VERSION = "reward-v1"
ANSWER_SCHEMA_VERSION = "answer-v2"

"""Version strings that name behaviour. Bump one whenever its behaviour changes, in
the same commit that updates the golden fingerprints in tests/unit/test_corpus.py."""

ENVIRONMENT_VERSION = "0.7.0"
CORPUS_VERSION = "corpus-v3"
REWARD_SCHEMA_VERSION = "reward-v1"
ANSWER_SCHEMA_VERSION = "answer-v2"

"""corpus-v1: determinism (golden fingerprints, across processes and hash seeds),
the family and template tables, fairness and solvability of every task."""

from __future__ import annotations

import os
import subprocess
import sys
import unittest
from pathlib import Path

from redaction_pressure import CORPUS_VERSION, load_task
from redaction_pressure.corpus.families import DECOYS, SECRETS
from redaction_pressure.corpus.templates import TEMPLATES
from tests.support import tasks as shared
from tests.support.util import fingerprint

ROOT = Path(__file__).resolve().parents[2]

# Changing any of these means the corpus changed: bump CORPUS_VERSION and update them
# in the same commit, saying why. (They cover the prompt's text too.) corpus-v3: every
# structured record a valid file of its format, vendor structure (npm CRC32, Slack
# configuration tokens, Azure secret versions), percent-encoded URL passwords,
# placeholders of the stream's vendors, Datadog keys in the environment, Kubernetes
# Secrets as JSON. Environment 0.5.0 changed the system prompt's text only (every
# record, label and user prompt byte-identical): limits stated as the validator now
# applies them (thinking not counted, sets charged once per member, compiling outside
# the budget). Environment 0.6.0 changed levels 4-5 only (GOLDEN_LEVELS; levels 1-3
# byte-identical): held-out records hold every family the stream shows
# (heldout_coverage), level 5 draws more of each kind and states an egress range that
# splits an octet (egress_prefix), and an oracle over 24 rules joins a group's patterns
# into one alternation. Environment 0.7.0 changed levels 4-5 only (levels 1-3
# byte-identical), so that memorised replies do worse at every step up: the catalogue's
# vendor secrets stay as drawn (heldout_coverage places the stream's own families
# only), levels 4-5 draw fewer of them, level 4 has one quiet file fewer, level 5
# covers each family once and draws one key block, key blocks are named by words
# that say nothing of their role (neutral_block_labels), each look-alike is tested in
# two (level 4) or three (level 5) held-out records (lookalike_coverage), and a quiet
# file takes a secret no other held-out file can hold; LEVELS_VERSION levels-v3 names
# it in the keys. corpus-v4 (environment 0.8.0; every stream reseeded by the version):
# a key-scoped value has one length per stream, so every held-out value has a length
# the shown ones have (corpus-v3 drew each from a range: in 42 of 64 level-1 dev tasks
# a held-out value was longer or shorter than every shown one, and model replies that
# took the length from the examples leaked it); levels 4-5 name some of a key-scoped
# secret's look-alike keys with its own key name inside, one end at level 4 and both at
# level 5 (affixed_lookalikes, LEVELS_VERSION levels-v4), and a quiet held-out file
# becomes a file of a secret's type when no held-out file can take it (a credential's
# base64 form needs a Kubernetes Secret, which 41% of level-5 dev streams lacked).
# Environment 0.9.0 changed the system prompt only (records, labels and prompts
# byte-identical): it states the reward's weights, the 16-unit base cost of a pattern
# and what full case folding charges, and that a fence starts a line.
# Environment 0.10.0 changed the system prompt only (records, labels and prompts
# byte-identical): which answer is read (a {"rules": ...} object after the last answer
# block wins) and that any error in the answer voids the whole reply.
# corpus-v5 (environment 0.10.0; every stream reseeded by the version): level 1 (and
# level 2 with it) holds more of what a reply that removes every value of a kind must
# pay for: 4-5 of 16 held-out files with no secret (quiet_records), 4-6 decoys per file,
# three look-alikes per house format, 2-3 catalogue vendors; and each vendor placeholder
# is drawn once per stream and shown beside its credential from level 1
# (placeholder_kinds; corpus-v4 drew a kind per value at levels 1-2, and model replies
# removed held-out placeholders of a kind no shown record kept).
# levels-v6 (environment 0.11.0; level 1 byte-identical): a constant reply that read
# co-occurrences inside a record scored 0.446 on level-5 dev, above level 4. Stated
# policy exceptions go to categories already secret (levels 3-5 state one or two, and
# client addresses are no longer secret in every level-5 stream); a look-alike
# base64-encoded under a Secret key of the credential's form, words drawn per stream
# (levels 4-5); a same-shaped kept key beside each scoped secret in both sections
# (levels 3-5); a kept key's affixed twin (levels 4-5); placeholders of the look-alikes'
# own shapes (levels 3-5). Its system prompt says a '
# needs no backslash, and a policy with no secret category reads "treats as secret:
# none of its optional categories" (was "nothing"): level-1 records and labels are
# byte-identical, its prompts and fingerprints are not.
# corpus-v6 (environment 0.12.0; every stream reseeded by the version): a Kubernetes
# Secret's data keys in sorted order, as kubectl prints them (in planned order the
# first key was the secret in 95% of level-5 held-out Secrets); level 4 tests each
# look-alike in three held-out records (lookalike_coverage, as level 5).
# corpus-v7 (environment 0.13.0; every stream reseeded by the version): a vendor's
# documented value (published sample key, test fixture) drawn once per stream, so the
# tested value is the shown one; level 5 (levels-v8) draws five or six house formats,
# four or five key-scoped and three or four section-scoped secrets.
# environment 0.13.1 (corpus-v7, levels-v8 unchanged): the system prompt says a " in a
# pattern needs a backslash (\"): records, labels and verdicts byte-identical, prompts
# and so fingerprints not.
# corpus-v8 (environment 0.14.0; every stream reseeded by the version): AWS's
# documentation keys drawn once per stream, each under its own kind of key, as the
# other documented values are (corpus-v7 tested example keys some streams never showed).
# Its system prompt (environment 0.14.0 too) states the pattern size the guard charges
# exactly (\R, (?|...), which sets ending in "-" cost one more, a one-member set under
# full folding: a review found each stated below its charge or above it), the cap on
# embedded {"rules": tries, and that an echo of the format's example is passed over:
# records and labels as in corpus-v8's first draw, prompts not.
# environment 0.14.1 (corpus-v8, levels-v8 unchanged): the system prompt says a reply
# holding <think> and no </think> has no answer, a tag written in prose too (as
# verifiers reads it): records, labels and oracles byte-identical (300 tasks, levels
# 1-5, compared with 0.14.0), the system prompt and so fingerprints not.
# corpus-v9 (environment 0.15.0, levels-v9; every stream reseeded by the version): records
# survive the real tools (an independent check with them, 2026-12-03): private keys load,
# public keys and certificates are real DER, ssh-ed25519 lines and PyPI macaroons parse,
# INI values unquoted, one app per YAML header, log times in file order, combined access
# logs, logfmt pairs, no shell expansion in a typed echo, one module system per JS file,
# a traceback local once per frame, 64-column key blocks; the system prompt says a
# {"rules": []} after a fenced answer does not replace it.
# corpus-v10 (environment 0.16.0; streams drawn under corpus-v9's label, STREAM_DRAWS):
# a PGP key block is a whole secret key gpg imports. The records of every golden of
# corpus-v9 hold (none holds a PGP block; train 3 holds one and pins the new bytes); the
# fingerprints moved with the system prompt (reading rules for placeholder and empty
# objects, the size of flag groups and comments, the records' final line break).
# Environment 0.16.2: every fingerprint here and in GOLDEN_LEVELS moved with the system
# prompt alone (what a placeholder is, what "an object with rules" is, blockquoted
# objects); with 0.16.1's system prompt put back, all fourteen are the old values.
# corpus-v11 (environment 0.18.0; streams still drawn under corpus-v9's label): vendors'
# current formats (GitHub refresh and stateless installation tokens, GitLab routable
# tokens, Mailgun's 32-8-8 keys, Sentry's padded org tokens, Discord snowflakes of the
# past, OpenSSH keys whose public key is the seed's, .npmrc tokens where npm reads them,
# a Datadog call with both keys that works as typed).
# Every fingerprint moved with the system prompt (the size of a conditional with no "no"
# branch and of a backreference under full case folding); the records, labels and
# oracles of dev 0..63 moved in 23 / 25 / 15 / 11 / 10 tasks of levels 1-5 (those that
# draw a changed family or a .npmrc), and are unchanged in every other.
# Level 4 draws 4-5 context look-alikes per context secret (levels-v10 drew 3-4, as level 3
# does): with corpus-v11 the best constant reply tied at levels 3 and 4 (0.425).
# corpus-v12 (environment 0.19.0; streams still drawn under corpus-v9's label): a DSA
# private key holds a real group and y = g^x mod p (OpenSSL's key check passes it). No
# golden above holds one, and each holds; train 200 does and pins the new bytes, as
# level 5 dev 40 does below (the only dev task of levels 1-5 with one: the records,
# labels and oracles of every other dev 0..63 task hash as under corpus-v11).
# Environment 0.21.3: every fingerprint here and in GOLDEN_LEVELS moved with two
# phrases of the system prompt alone (a comment or prose around the object is not part
# of the answer; a lone surrogate is an unpaired JSON escape); records, labels, levels
# and reward unchanged.
# Environment 0.21.2: every fingerprint moved again with the brace sentence's words
# alone (a { "may be read as" fuzzy matching, digits too); records, labels, levels and
# reward unchanged.
# Environment 0.21.1: every fingerprint here and in GOLDEN_LEVELS moved with the system
# prompt's words alone (a literal { before e, i, d or s is written \{; a match that ends
# before it starts voids the reply; {m,m} costs as {m}); with 0.21.0's prompt put back,
# all eighteen are corpus-v13's values (records, labels, levels and reward unchanged).
# Environment 0.20.2: every fingerprint here and in GOLDEN_LEVELS moved with the prompts'
# words alone (the system prompt: labels follow only from what a rule can see, never a
# checksum, and an exact answer within the limits exists; the policy sentence: email
# addresses are those at the company's own mail domains); with 0.20.1's words put back,
# all sixteen are the old values (records, labels, levels and reward are unchanged).
# Environment 0.20.1: every fingerprint here and in GOLDEN_LEVELS moved with the system
# prompt alone (never write either think tag in prose; write the answer last: an object
# with a rule after it is read instead); with 0.20.0's system prompt put back, all
# sixteen are the old values (the corpus, levels and reward are unchanged).
# corpus-v13 (environment 0.21.0; streams still drawn under corpus-v9's label): a .pem
# planned with no value holds a public block, an app's INI value no lone % (a realism
# audit: OpenSSL and ConfigParser() refused them). Only records that held comments only
# or a lone % moved (and, in a stream whose held-out .pem needed a block and no shown
# record held one, the first shown .pem): no golden above holds one, and each holds;
# dev 14 (three shown .pem files) and dev 29 (a shown INI file) do and pin the new bytes,
# as level 2 train 77 and level 5 dev 40 do below.
# corpus-v14 (environment 0.22.0; streams still drawn under corpus-v9's label): a .env or
# tfvars file names one app and environment, sshd clients use ephemeral ports, a 204 has
# no body, psycopg2 names port 5432, a GitLab log no "Job N finished" line. Only those
# files moved (their own draws): dev 0, 31 and 14 and train 0, 123456 and 3 hold one;
# dev 63 and 29 and train 200 do not, and held. Then, in the same version: a CI log's
# "Step N/9" lines count up (their drawn numbers sorted, none repeated; no draw changed)
# and a traceback is laid out as `traceback` prints captured locals (no "Locals:" line,
# each frame's locals sorted by name). Dev 0 (a CI log whose steps counted back) and
# train 0 and 3 (tracebacks) moved again; dev 63's five CI logs were in order and held.
# Then each build step prints its own Dockerfile instruction ("Step 1/9 : FROM ...", all
# read "RUN make build"), "Successfully built" only after step 9/9 (else that id's
# "---> <id>" line), and a traceback frame's locals hold the arguments its source line
# reads (settings, pool_size; a wrapper's args, fn, kwargs): no draw changed. Dev 0 and
# 63 (CI logs) and train 0 and 3 (tracebacks) moved again; the others hold neither.
GOLDEN = {
    ("dev", 0): "f2ac13b405e4e21cac6ed6cd5a815cbabf3ba51c207d9d9ef2a618ead013bb81",
    ("dev", 31): "a61f7eba376d582af6d4c80ddb86c2733cee7bdfbda0a9b76e9b382324fc4bbb",
    ("dev", 63): "17e5cc866d5173b43a2b31b378c17be72d9277e013f80238347421711633738d",
    ("train", 0): "78ea28d3c9ed33c997638e12c1922632f4f442b3d64c2b28de45439871688fb5",
    ("train", 123456): "e9090e7aeda369848a2687e2fbd3c405198d03a6d6257802aa3a7b77ffd9d5e6",
    ("train", 3): "9b5ba12b5cc60d12ef3f26febbb1a97344993901ad1562fdf31e671b23e268c7",
    ("train", 200): "f96845bf3702578974f9e8944aa0b3e0b303843d40a00d6139fe6542aeddc922",
    ("dev", 14): "362f53669317b978982b0c8eba884aa09f209f2643ec8ad7193cbb7664d95a06",
    ("dev", 29): "0b40567f937e7a8a5a25053a6a1396c8163dbffe0c70837110f4be8272820ed3",
}


# Higher levels (corpus-v3, part 2): their own streams, additive over level 1. Moved
# once since: every file a level needs kept (scoped, k8s, block), one length per scoped
# secret, smaller key blocks, more quiet files at levels 2-4. Moved again at levels 3-5
# only (levels 1 and 2 byte-identical): placeholders of the stream's own formats
# (house_placeholders) and of every vendor with a placeholder shape, in
# placeholder_kinds kinds, each drawn once and shown beside a real secret of its format;
# those formats' credentials never look like placeholders and their oracle leaves them.
# levels-v10 (environment 0.17.0): level 3 train 77 and level 5 moved (section-scoped
# secrets may sit in a JSON config's top-level objects; level 5 names both sections of
# each by role-free words and draws four or five); levels 1 and 2 are byte-identical
# (every golden here and in GOLDEN held, and the records, labels and oracles of dev
# 0..23 at levels 1-2 hash as under levels-v9), as are level 3 dev 0 and level 4's two.
# levels-v11 (environment 0.20.0): the shown encodings of a base64-encoded credential
# differ right past what every encoding of it shares (levels 4-5). Level 4 dev 0 and
# train 77, level 5 train 77 and dev 40 hold one and moved with their shown records (the
# held-out records of every dev 0..63 task hash as under levels-v10); levels 1-3 and
# level 5 dev 0 held.
# corpus-v13 (environment 0.21.0): level 2 train 77 (two shown and three held-out .pem
# files of comments only) and level 5 dev 40 (one shown) moved, each .pem now holding a
# public block; every other golden here held.
# corpus-v14 (environment 0.22.0): level 2 dev 0 and train 77, level 3 dev 0 and train 77
# and level 4 dev 0 hold a file of a changed kind and moved; level 4 train 77 and level 5
# dev 0, train 77 and dev 40 held. Then CI steps in order and tracebacks in `traceback`'s
# layout: level 3 train 77 (four tracebacks) moved again; the others hold neither. Then
# Dockerfile steps and traceback frames' arguments: level 3 train 77 moved again, alone.
GOLDEN_LEVELS = {
    (2, "dev", 0): "dd2b674631a79101ebfbaa5f397d3bacd7ae287bd700f5b227a0175ff3f5e459",
    (2, "train", 77): "dc84d5cae2eaea8288cf81cd8388254374fda31fa0abbd5db9692b0a643cf715",
    (3, "dev", 0): "1c9cc69110aaa1343f52c4ed91ba05760a395b1dbe43f1baf6a429bf301c2fcd",
    (3, "train", 77): "b7305fe12bb337e94f5cc6f1210c1024dbffc71a47042398fb2fc4824a73b03b",
    (4, "dev", 0): "28f7866a4f6625e413b0f99a93db216578fd5dfd7e7c15105c22eb9f13ba05ff",
    (4, "train", 77): "afc12e192ed8a8829e8c95d559f3f9b390e98c6014e7fabdfd62baa9ec9f9714",
    (5, "dev", 0): "10ea75aea049bab213cfd886c3462d794ab2914cfd87ad81456a4f7f121428c4",
    (5, "train", 77): "89d2ef5198735adf3ab380daf5ab32b83e887c1718c9957ab1559e2207264e69",
    (5, "dev", 40): "bbe2aa880170eab1560a53f87e811173e4d2b573220f3e9b956e4a67cd90ab72",
}


class GoldenFingerprints(unittest.TestCase):
    def test_version(self):
        self.assertEqual(CORPUS_VERSION, "corpus-v14")

    def test_golden_fingerprints(self):
        for (split, index), want in GOLDEN.items():
            with self.subTest(split=split, index=index):
                self.assertEqual(fingerprint(load_task(split, index)), want)

    def test_golden_fingerprints_of_every_level(self):
        for (lv, split, index), want in GOLDEN_LEVELS.items():
            with self.subTest(level=lv, split=split, index=index):
                self.assertEqual(fingerprint(load_task(split, index, level=lv)), want)

    def test_same_bytes_in_other_processes_and_hash_seeds(self):
        code = ("from redaction_pressure import load_task; from tests.support.util import fingerprint;"
                "print(fingerprint(load_task('dev', 5)), fingerprint(load_task('train', 77)))")
        here = f"{fingerprint(load_task('dev', 5))} {fingerprint(load_task('train', 77))}"
        for hashseed in ("0", "1", "4242", "random"):
            env = dict(os.environ, PYTHONHASHSEED=hashseed, LC_ALL="C")
            out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env,
                                 capture_output=True, text=True, check=True).stdout.strip()
            self.assertEqual(out, here, hashseed)


class Tables(unittest.TestCase):
    def test_sizes(self):
        self.assertGreaterEqual(len(TEMPLATES), 12)
        self.assertGreaterEqual(len(SECRETS), 40)
        self.assertGreaterEqual(len(DECOYS), 10)
        # corpus-v2 has more families than a reply has rules: each family's oracle stays
        # small, and test_core_reward checks that every task's oracle fits in 24 rules.
        self.assertLessEqual(max(len(f.oracle) for f in SECRETS), 2)

    def test_every_decoy_says_why(self):
        for d in DECOYS:
            self.assertGreater(len(d.why), 40, d.name)
            self.assertFalse(d.oracle, d.name)

    def test_names_unique(self):
        names = [f.name for f in SECRETS + DECOYS]
        self.assertEqual(len(names), len(set(names)))


class TaskShape(unittest.TestCase):
    def test_fair_and_nonempty_on_many_tasks(self):
        for split, count in (("dev", 64), ("train", 300)):
            for index in range(count):
                task = shared.task(split, index)
                shown = {s.family for r in task.shown for s in r.secrets + r.decoys}
                evaluated = {s.family for r in task.heldout for s in r.secrets + r.decoys}
                self.assertLessEqual(evaluated, shown, task.id)
                self.assertGreaterEqual(sum(len(r.secrets) for r in task.heldout), 1, task.id)
                for r in task.shown + task.heldout:
                    for s in r.secrets + r.decoys:
                        self.assertTrue(0 <= s.start < s.end <= len(r.text))

    def test_tasks_differ_in_their_mix(self):
        mixes = {(load_task("dev", i).templates, load_task("dev", i).secret_families) for i in range(16)}
        self.assertGreater(len(mixes), 12)


if __name__ == "__main__":
    unittest.main()

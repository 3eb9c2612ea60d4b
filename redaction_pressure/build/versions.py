"""Version strings that name behaviour. Bump one whenever its behaviour changes, in
the same commit that updates the golden fingerprints in tests/unit/test_corpus.py."""

ENVIRONMENT_VERSION = "0.22.0"
# 0.22.0 (corpus-v14; streams drawn as in corpus-v9): filler lines say what their
# readers expect, as a realism audit (2026-12-04) found five did not, each in every
# file of its kind or most: a .env's header and its NODE_ENV, and a tfvars file's
# header, `environment` and `tags`, name one app and environment (731 of 1,088 and 773
# of 1,147 disagreed over dev 0..63 and train 0..299 at levels 1-5); an sshd client
# connects from an ephemeral port (every one was a service's: 80, 5432, 8443); an access
# log's 204 has no body; a psycopg2 error names Postgres's port 5432 (88% named another);
# a GitLab job log holds no "Job N finished in Nms" line, which no runner writes (233
# files named two job ids). Only those files' own draws changed (each record draws from
# its own stream): 7,588 of 43,680 records moved, in 1,075 of 1,820 tasks. Then two
# more the audit left: a CI log's "Step N/9" lines ran back or repeated a step (132 and
# 35 of 1,649 files), and now count up (the drawn numbers sorted and spread, no draw
# changed); a traceback wrote an "  Locals:" line under each frame, which no Python
# prints, and now is what `traceback` prints with capture_locals=True (Python 3.10 and
# 3.13, run): each frame's locals as `    name = repr` under its source line, sorted by
# name (all 1,818 tracebacks). Those moved 1,985 more records (167 CI logs, 1,818
# tracebacks) in 375 tasks, no label's value changed. Then two more: every build step
# read "Step N/9 : RUN make build" (step 1 too) and "Successfully built" stood anywhere
# (after step 1/9, or with no step shown); now each step prints its instruction of one
# nine-step Dockerfile (FROM python:3.12-slim ... CMD), and "Successfully built" only
# after step 9/9 (another is that id's "---> <id>" line: 842 files); and a traceback
# frame lacked the arguments its source line reads (`connect` read settings and
# pool_size, `load` settings, the retry wrapper args, fn and kwargs), which `traceback`
# prints among the locals: now there, an object as `<settings.Settings object at
# 0x7f...>` (its address fixed by the file, draw-free). Text only, no draw changed:
# 3,100 more records moved (1,282 CI logs, 1,818 tracebacks) in 474 tasks, no label's
# value changed: against 0.21.3, 9,092 of 43,680 records in 1,172 of 1,820 tasks.
# `induce` (0.9794 / 0.9901 / 0.9952 / 0.9950 / 1.0000) and the oracle (1.0) score
# every dev level as on 0.21.3.
# 0.21.3 (corpus, levels and reward unchanged): a review of the contract (2026-12-04)
# found two sentences of the system prompt not exactly true. "JSON allows no comments"
# read as if a // line before the object in its fence voided it, while the object in
# the text is read as prose around it is: it now says so (inside the object a comment
# or trailing comma voids it). "a lone surrogate (\ud800-\udfff)" read as the regex
# escape, which is allowed: it now names the unpaired JSON escape. The validator now
# does what the list "refused before compiling" says: \L<name> is refused by the guard
# (regex's parser failed it as "undefined named list", a compile error), and so is a
# scoped (?L:...), which was accepted.
# 0.21.2 (corpus, levels and reward unchanged): the brace sentence of 0.21.1 said a {
# before e, i, d or s "opens" fuzzy matching, which a review (2026-12-04) found not
# exactly true: a digit may open one too ({1<=e}), a { inside a set or starting a
# repeat does not, and {2x} is literal text. It now says such a { "may be read as one",
# outside a set and not starting a repeat, when e, i, d, s or a digit follows; the
# compile error's hint is given only for an error about a fuzzy constraint.
# 0.21.1 (corpus, levels and reward unchanged): the system prompt states three rules a
# review of honest replies (2026-12-04) found a model could trip without warning: in
# `regex` an unescaped { before e, i, d or s opens fuzzy matching ("{s}", "${env:X}",
# literal text to Python's `re`), so a literal { is written \{; a match that ends before
# it starts (\K under (?r) can yield one) voids the reply, as the scanner always did; and
# a repeat {m,m} costs as {m} does (the prompt said m+1, more than the guard charges).
# 0.21.0 (corpus-v13; streams drawn as in corpus-v9): records survive the real tool
# that reads their format, as a realism audit (2026-12-04) found two did not. A .pem
# file planned with no value (a quiet held-out file, or any .pem of a stream that draws
# no key block) held comments only, which OpenSSL refuses (5,856 of 11,390 .pem files
# of train 0..1999 and dev 0..63 at levels 1-5): it holds a public block (a certificate
# or public key, `public_key_material`, kept by every oracle), and where a held-out one
# does and no shown record holds one, the first shown .pem takes one too. An app's INI
# settings (read by ConfigParser() with its default interpolation, as alembic.ini and
# Paste .ini files are) never hold a lone % (64 of 20,223 INI records did, and reading
# the value raised); such a value is drawn again rather than written %%, so the text
# labelled stays the value the app reads. A .pypirc (twine reads it raw) may hold one.
# Only those files (and that shown one) moved: 9 / 11 / 3 / 4 / 4 of dev 0..63 at levels
# 1-5 and 103 of train 0..499 at level 1, every other record byte-identical; `induce`,
# the baseline and the oracle score every dev level to the last digit as on 0.20.2.
# 0.20.2 (corpus, levels and reward unchanged): the system prompt says a value's label
# follows only from what a rule can see (its shape, where it sits, the stated policy),
# never from a checksum or anything else a regex cannot test, and that an exact answer
# within the limits exists. Single-pass readers (model rounds of 2026-12-04) saw a key's
# value labelled in one section and not in another, could not tell "a checksum or the
# section", and removed both.
# 0.20.1 (corpus, levels and reward unchanged): the system prompt says never to write
# either think tag in prose, and to write the answer last, since a {"rules": ...} object
# with a rule that is not a placeholder written after it (an example, in prose, inline
# code or any fence) is read instead. Both were stated only inside one long sentence; a
# false-zero hunt (2026-12-04) found them the likeliest to catch an honest reply.
# 0.20.0 (corpus-v12, levels-v11; levels 1-3 byte-identical): a credential that
# reappears base64-encoded (levels 4-5) is shown in two encodings that differ right past
# the characters every encoding of it shares, at both ends (`house.encoding_ends`), so
# every held-out encoding starts and ends as the shown ones do. On levels-v10 the shown
# pair agreed on the first character the body decides in 17 of 64 level-4 and 22 of 128
# level-5 dev encoded credentials whose held-out encoding did not (20 and 27 at either
# end; a fifth of train's too, a third of level-5 dev streams): a reader who copied the shown
# encodings' common start or end missed the held-out one, as careful readers did in three
# of the four level-5 tasks they lost on 0.19.0. Only shown records holding an encoding
# moved (29 of 64 level-4 and 44 of 64 level-5 dev tasks); every held-out record is
# byte-identical.
# 0.19.0 (corpus-v12, levels-v10; streams drawn as in corpus-v9): a DSA private key
# holds a real group (1024-bit p, 160-bit q dividing p - 1, g of order q, from a fixed
# pool, `dsa_groups`) and y = g^x mod p for its drawn x, so ``openssl pkey -check``
# passes it; its five integers were random and OpenSSL called every one invalid. Of
# dev 0..63 at every level, only level 5 dev 40 holds one (its records moved).
# 0.18.0 (corpus-v11, levels-v10; streams drawn under corpus-v9's label): vendors'
# current formats, as a review against their documentation found the corpus behind
# them. GitHub refresh tokens have 76 characters (not 36), and installation tokens may
# be stateless (ghs_APPID_JWT, ~520 characters, two dots; GitHub's 2026-04-24
# changelog); GitLab personal tokens may be routable (base64url routing, .01., length,
# CRC32: GitLab's default); Mailgun keys since 2018 are 32-8-8 hex with no key- prefix;
# Sentry org tokens keep their base64 padding and a float issue time; Discord ids are
# snowflakes of the past; an OpenSSH key's public key is its seed's; in a .npmrc a token
# sits where npm reads it (a registry's _authToken); a Datadog call with both keys is one
# GET that works as typed. Every oracle of those families
# takes both generations. Reading: a "[:" in a set opens a POSIX class only if ":]"
# closes it (31 sets like [\s"'[:=,] were refused as nesting past 32), "(?i)(?x)" opens
# a verbose pattern as "(?ix)" does; the system prompt states the size of a conditional
# with no "no" branch and of a backreference under full case folding. Level 4 draws 4-5
# context look-alikes per context secret (3-4 before, as level 3): with the new formats the
# best constant reply tied at levels 3 and 4 (0.425), and now falls (0.425 -> 0.423).
# 0.17.0 (corpus-v10, levels-v10; levels 1 and 2 byte-identical): headroom at the top
# level, where careful readers lost most (a section-scoped look-alike removed in the
# section that keeps it). Section-scoped secrets also sit in JSON configs' top-level
# objects (levels 3-5), a layout of its own. At level 5 both sections of each scoped
# secret are named by role-free words (cobalt, jade) from the stream's live and test
# slots, so only the shown pair says which is live; a stream draws four or five of them,
# tests each key- or section-scoped secret in a file type no shown record shows it in,
# and always draws a Kubernetes Secret's configuration values.
# 0.16.2 (corpus-v10, levels-v9; records, labels and oracles unchanged): reading, a third
# false-zero hunt. A format reminder after the answer whose placeholder was not ASCII words
# ("<...>", "<regex, JSON-escaped>", "<regex>...") replaced the answer and scored 0; a later
# {"rules": null}, {"rules": "<list>"} or schema object replaced it and voided it. A
# placeholder is now one pair of angle brackets around text without a pattern's structure
# (optionally followed by an ellipsis), or an ellipsis, and an object "with rules" is one
# whose "rules" is a non-empty list or a rule object; the system prompt states both, and
# that a blockquoted object is not JSON. The episode reader reads files in chunks and counts
# short lines past the first 64; report and compare badge only figures over every verified trace.
# 0.16.1 (corpus-v10, levels-v9): the same bytes and verdicts, built and scored faster
# (rendering, planning and the oracle check: a level-5 build in 0.81-0.84x, a level-1
# build in 0.67-0.79x of 0.16.0's CPU time); a socket given as an input file is named as one.
# 0.16.0 (corpus-v10, levels-v9; streams drawn as in corpus-v9, `STREAM_DRAWS`): a PGP
# private key block is a whole transferable secret key gpg imports (a user ID and its
# Ed25519 self-signature), not a packet of random bytes gpg listed and refused. No dev
# task of any level holds one, so every dev figure of 0.15.0 holds. Report pages are
# smaller (a 64-episode page under 1 MB again). Reading (a second false-zero hunt): an
# object whose every pattern is a placeholder ("<pattern>", "...") is passed over like
# an exact copy of the format's example, and never hides a broken answer's JSON error;
# {"rules": []} in a fenced block of its own does not replace an answer with rules;
# "no answer" after </think> says where it looked. The system prompt states these, the
# size of flag groups, comments and (?x) whitespace, and the records' final line break.
# 0.15.0 (corpus-v9, levels-v9; every stream reseeded by the version): records survive
# the real tools, as an independent check with them found they did not. Private keys
# load (RSA of two primes of a fixed pool, EC from a drawn scalar); public keys and
# certificates are real DER (decoy PEM bodies never began MII..., secret ones always did:
# a shortcut); ssh-ed25519 lines and PyPI tokens (whole v2 macaroons) parse; INI values
# are never quoted (configparser keeps quotes); a YAML header names one app; log times
# run forward in file order; access logs are in combined format; a bare logfmt value
# holds no "="; a typed echo "..." holds nothing the shell expands; a CI step is at most
# its total; a JavaScript file is an ES module or CommonJS, not both; a traceback names a
# local once per frame; invented key blocks are 64 columns; a typed password holds no
# ! * ~. Reading: a {"rules": []} after a fenced answer with rules no longer replaces it
# (the system prompt says so), and notes name an object that replaced a fenced answer.
# 0.14.1 (corpus-v8, levels-v8): an object in prose is measured for nesting up to where
# it closes (notes after an unfenced answer that left 17 brackets open voided it: a false
# zero a review found), and the system prompt states exactly when <think> voids a reply
# (a <think> anywhere with no </think>, as verifiers reads it: a tag written in prose
# too). Records, labels and oracles are byte-identical.
# corpus-v8 (environment 0.14.0; every stream reseeded by the version): AWS's documentation
# keys are one value per variant, each under its own kind of key, drawn once per stream
# as the other documented values are (corpus-v7 drew one of three per record under either
# key, so 4 to 11 of the 64 dev tasks of a level tested an example key they never showed).
# Its system prompt states the pattern size the guard charges exactly (it said one unit
# per character or group; the guard also charges each alternative, | lists, \X and
# more), the cap of 16 embedded {"rules": tries, and that an echo of the format's
# example after an answer is passed over; a verbose pattern's comments no longer nest.
# 0.13.1: the system prompt says a " in a pattern needs a backslash; a "[" inside a
# version-0 set no longer counts as nesting unless "[:" may open a POSIX class (31
# alternatives of (?<=[\s"[])... were refused as nested deeper than 32).
# corpus-v7 (environment 0.13.0; every stream reseeded by the version): a vendor's
# documented value (a published sample key, a test fixture) is one value per variant,
# drawn once per stream, so the value a stream tests is the one it shows (corpus-v6 drew
# it per record: Stripe's sample secret key was tested in streams that showed only its
# publishable sample, and induce and a model reply both removed it).
CORPUS_VERSION = "corpus-v14"
# corpus-v14 (environment 0.22.0): filler lines agree with their file and their reader
# (see 0.22.0 above); streams keep corpus-v9's draws and every other record's draws.
# corpus-v13 (environment 0.21.0): every .pem holds a block, an app's INI file no lone %
# (see 0.21.0 above); streams keep corpus-v9's draws and every other record's draws, so
# a stream that holds neither such file holds the records, labels and oracles it held.
# corpus-v12 (environment 0.19.0): DSA private keys pass OpenSSL's key check (see 0.19.0
# above); streams keep corpus-v9's draws, so a stream that holds no DSA key holds the
# records, labels and oracles it held.
# corpus-v11 (environment 0.18.0): vendors' current formats (see 0.18.0 above); streams
# keep corpus-v9's draws, so a stream that draws none of those families and no .npmrc
# holds the records, labels and oracles it held.
# The label every stream's draws are seeded under (corpus/stream.py). Until corpus-v9 it
# was the corpus version, so every bump reseeded every stream and moved every figure;
# corpus-v10 changed how one value is written (PGP blocks), not what is drawn where, so
# it keeps corpus-v9's draws: only tasks holding a PGP block differ. A corpus version
# that changes the draws moves this label with it.
STREAM_DRAWS = "corpus-v9"
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
# level 3's); v8: corpus-v7, environment 0.13.0 (level 5 draws more of what model replies lost
# on at level 5 of v7, 0.914 against 1.000 at level 1: five or six house formats,
# four or five key-scoped secrets with five or six look-alike keys each, three or four
# section-scoped secrets; and, the reseeded streams having put level 2 above level 1
# for the baseline and delete-everything, level 2 draws five to seven decoys per
# held-out record and six or seven quiet files, level 3 one to three vendor secrets and
# five to seven decoys).
# v9: corpus-v9, environment 0.15.0 (records of every level survive the real tools;
# level 4 draws one or two vendor secrets of the catalogue, as level 5 does, ten or
# eleven quiet files, and levels 4-5 eight to eleven decoys per held-out record: on the
# reseeded streams the best constant reply scored 0.430 at level 4 against 0.426 at 3,
# and 0.428 with the first change alone; a wide reply's precision rises with level 4's
# key blocks and encoded secrets, which are long).
# v10: environment 0.17.0 (section-scoped secrets in JSON configs too, levels 3-5; at
# level 5 role-free section names from the stream's live and test slots, four or five
# scoped secrets, each key- or section-scoped secret tested in another file type, and a
# Kubernetes Secret's configuration values in every stream).
# v11: environment 0.20.0 (the two shown encodings of a base64-encoded credential differ
# right past what every encoding of it shares, levels 4-5; held-out records unchanged).
LEVELS_VERSION = "levels-v11"
REWARD_SCHEMA_VERSION = "reward-v1"
ANSWER_SCHEMA_VERSION = "answer-v2"

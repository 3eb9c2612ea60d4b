"""The family tables of corpus-v2: formats, examples, near misses, and that every
oracle removes exactly its family's secrets and nothing of any other family."""

from __future__ import annotations

import base64
import json
import re
import unittest
import zlib

import regex

from redaction_pressure.corpus.families import DECOYS, FAMILIES, SECRETS, Family, Fragment
from redaction_pressure.corpus.families import make as mk
from redaction_pressure.corpus.families.base import BASE62, bech32_valid, crc24, github_checksum
from redaction_pressure.corpus.families.secrets import _GENERIC_KEYS
from redaction_pressure.corpus.rng import Rng
from redaction_pressure.scoring.answer import MAX_PATTERN_CHARS
from redaction_pressure.scoring.pattern_guard import compile_bounded, compile_trusted

V1_DECOYS = {"aws_documented_example", "aws_non_credential_id", "git_sha_or_digest", "uuid_request_id",
             "placeholder_value", "already_masked", "keyword_setting", "public_key_material", "ssh_public_key",
             "publishable_key", "url_port_or_path_at", "twilio_account_sid", "basic_realm_challenge",
             "subresource_integrity"}
# Families recognised by their key or context alone, whose values have no vendor prefix.
NO_PREFIX = {"aws_secret_access_key", "azure_ad_client_secret", "discord_bot_token", "telegram_bot_token",
             "mailchimp_api_key", "terraform_cloud_token", "generic_secret_assignment", "kubernetes_secret_data",
             "url_password", "basic_auth", "bearer_token", "cli_password", "connection_string_password"}
# Variants recognised by their key alone: a Datadog key set as DD_API_KEY is bare hex.
NO_PREFIX_VARIANTS = {("datadog_api_key", "env-api"), ("datadog_api_key", "env-app"), ("mailgun_api_key", "hex")}
N_GENERATED = 200
CONTEXTS = {"kv", "escaped", "block", "shell", "k8s", "npmrc", "pypirc", "gcp_sa"}

COMPILED = {f.name: [compile_bounded(p) for p in f.oracle] for f in SECRETS}


def matches(name: str, text: str) -> list[tuple[int, int]]:
    return sorted((m.start(), m.end()) for c in COMPILED[name] if c.required in text
                  for m in c.pattern.finditer(text))


def touched_by(text: str, skip: str = "") -> dict[str, list[str]]:
    out = {}
    for name in COMPILED:
        if name != skip:
            found = matches(name, text)
            if found:
                out[name] = [text[a:b] for a, b in found]
    return out


def place(family: Family, frag: Fragment, variant: str = "") -> tuple[str, int]:
    """The fragment in the simplest record line of its variant's context; returns the
    text and the fragment's offset in it."""
    key = frag.key or family.keys[0]
    contexts = family.contexts_of(variant)
    if "k8s" in contexts:
        head = f"apiVersion: v1\nkind: Secret\ntype: Opaque\ndata:\n  {key}: "
    elif contexts & {"block", "shell"} and not contexts & {"kv"}:
        head = ""
    else:
        head = f"{key.upper()}="
    return head + frag.text + "\n", len(head)


class Tables(unittest.TestCase):
    def test_sizes_and_names(self):
        self.assertGreaterEqual(len(SECRETS), 40)
        self.assertLessEqual(V1_DECOYS, {d.name for d in DECOYS})
        self.assertGreater(len(DECOYS), len(V1_DECOYS))
        names = [f.name for f in SECRETS + DECOYS]
        self.assertEqual(len(names), len(set(names)))
        self.assertEqual(set(FAMILIES), set(names))

    def test_every_family_declares_examples_and_near_misses(self):
        for f in SECRETS + DECOYS:
            with self.subTest(f.name):
                self.assertGreaterEqual(len(f.examples), 3)
                self.assertGreaterEqual(len(f.negatives), 2)
                self.assertTrue(f.contexts <= CONTEXTS and f.contexts)
                self.assertTrue(f.variants)
                if f.kind == "decoy":
                    self.assertGreater(len(f.why), 40)
                    self.assertFalse(f.oracle)
                    self.assertTrue(all(secret == "" for _, secret in f.examples))
                else:
                    self.assertEqual(f.kind, "secret")
                    self.assertTrue(f.why)

    def test_oracles_are_few_short_cheap_and_carry_a_literal(self):
        literal_free = set()
        for f in SECRETS:
            self.assertTrue(1 <= len(f.oracle) <= 2, f.name)
            for pattern in f.oracle:
                self.assertLessEqual(len(pattern), MAX_PATTERN_CHARS, f.name)  # the answer schema's cap
                compiled = compile_bounded(pattern)  # accepted by the scanner's guard
                if not compiled.required:
                    literal_free.add(f.name)
        self.assertEqual(literal_free, {"generic_secret_assignment"})

    def test_literal_clauses_hold_wherever_an_oracle_matches(self):
        # The oracle check skips a record lacking a clause's every literal: sound only
        # if each match's text holds one literal of each clause.
        for f in SECRETS:
            for pattern in f.oracle:
                compiled, clauses = compile_trusted(pattern)
                self.assertEqual(compiled.pattern, compile_bounded(pattern).pattern.pattern)
                for text, _ in f.examples:
                    if compiled.search(text):
                        for clause in clauses:
                            self.assertTrue(any(lit in text for lit in clause), (f.name, text, clause))

    def test_literal_clauses_ask_only_what_a_match_needs(self):
        cases = {
            r"ab(?:cd|ef)g": [("ab",), ("cd", "ef"), ("g",)],
            r"(?<=\bx(?:yz)?w)v": [("x",), ("w",), ("v",)],  # an optional group needs nothing
            r"(?i:abc)|d": [],  # an alternative without a literal: no clause
            r"(?:ab)+c*(?!zz)(?=q)": [("ab",), ("q",)],  # a negative lookaround needs nothing
            r"(?i)abc": [],
            r"(?:xy|(?:pq|rs)t)": [("xy", "pq", "rs")],  # each alternative's most selective clause
        }
        for pattern, want in cases.items():
            self.assertEqual(compile_trusted(pattern)[1], want, pattern)

    def test_generic_secrets_cover_30_key_names(self):
        self.assertGreaterEqual(len(mk.GENERIC_KEYS), 30)
        keys = regex.compile(rf"(?<![A-Za-z0-9_.;-]){_GENERIC_KEYS}=")
        for key in mk.GENERIC_KEYS:
            for written in (key, key.upper()):
                self.assertTrue(keys.fullmatch(written + "="), written)
        for near in ("password_policy", "token_ttl", "max_token_length", "github_token", "aws_secret_access_key",
                     "private_key", "private_key_id", "request_id", "db-password", "recaptcha_secret_key"):
            self.assertIsNone(keys.search(f"{near}=x"), near)


class Examples(unittest.TestCase):
    def test_each_oracle_takes_its_examples_whole(self):
        for f in SECRETS:
            for text, secret in f.examples:
                with self.subTest(f.name, secret=secret[:40]):
                    start = text.index(secret)
                    self.assertEqual(matches(f.name, text), [(start, start + len(secret))])
                    self.assertEqual(touched_by(text, skip=f.name), {})

    def test_no_oracle_touches_a_near_miss_or_a_decoy_example(self):
        for f in SECRETS + DECOYS:
            texts = list(f.negatives) + [t for t, _ in f.examples if f.kind == "decoy"]
            for text in texts:
                with self.subTest(f.name, text=text[:60]):
                    self.assertEqual(touched_by(text), {})


class Generated(unittest.TestCase):
    def test_every_variant_is_removed_exactly_by_its_own_oracle_only(self):
        for f in SECRETS:
            for variant in f.variants:
                r = Rng(f"test/{f.name}/{variant}", 0)
                for _ in range(N_GENERATED):
                    frag = f.make(r, variant)
                    text, offset = place(f, frag, variant)
                    want = sorted((a + offset, b + offset) for a, b in frag.spans)
                    with self.subTest(f.name, variant=variant, text=frag.text[:60]):
                        self.assertEqual(matches(f.name, text), want)
                        self.assertEqual(touched_by(text, skip=f.name), {})

    def test_decoys_survive_every_oracle(self):
        for f in DECOYS:
            for variant in f.variants:
                r = Rng(f"test/{f.name}/{variant}", 0)
                for _ in range(N_GENERATED):
                    text, _ = place(f, f.make(r, variant), variant)
                    with self.subTest(f.name, variant=variant, text=text[:60]):
                        self.assertEqual(touched_by(text), {})

    def test_a_variant_keeps_its_prefix_and_unknown_variants_are_refused(self):
        for f in SECRETS + DECOYS:
            for variant in f.variants:
                r = Rng(f"prefix/{f.name}/{variant}", 0)
                values = [f.make(r, variant).text for _ in range(40)]
                if f.kind == "secret" and f.name not in NO_PREFIX and (f.name, variant) not in NO_PREFIX_VARIANTS:
                    prefix = values[0]
                    for v in values[1:]:
                        while not v.startswith(prefix):
                            prefix = prefix[:-1]
                    self.assertGreaterEqual(len(prefix), 2, (f.name, variant))  # SK, hf_, r8_ …
            if f.variants != ("",):
                with self.assertRaises(ValueError):
                    f.make(Rng("x", 0), "no-such-variant")

    def test_same_seed_same_values(self):
        for f in SECRETS + DECOYS:
            a = [f.make(Rng("det", 7), v).text for v in f.variants]
            b = [f.make(Rng("det", 7), v).text for v in f.variants]
            self.assertEqual(a, b, f.name)


class Formats(unittest.TestCase):
    """Structure that real values of these vendors have."""

    def values(self, name: str, variant: str, n: int = 50) -> list[str]:
        r = Rng(f"formats/{name}", 1)
        return [FAMILIES[name].make(r, variant).text for _ in range(n)]

    def test_github_tokens_carry_a_valid_crc32_checksum(self):
        for variant in ("ghp", "gho", "ghu", "ghs"):
            for token in self.values("github_token", variant):
                self.assertTrue(token.startswith(variant + "_"))
                body, check = token[4:34], token[34:]
                crc = 0
                for c in check:
                    crc = crc * 62 + BASE62.index(c)
                self.assertEqual(crc, zlib.crc32(body.encode()))
        self.assertNotEqual(github_checksum("a" * 30), github_checksum("b" + "a" * 29))

    def test_github_refresh_and_stateless_tokens(self):
        """Refresh tokens: ghr_ and 76 base62 characters (GitHub's documentation).
        Stateless installation tokens (GitHub's changelog, 2026-04-24): ghs_APPID_JWT,
        about 520 characters with two dots; the JWT names the same app and is signed
        with RS256 (256 bytes)."""
        for token in self.values("github_token", "ghr"):
            self.assertRegex(token, r"\Aghr_[A-Za-z0-9]{76}\Z")
        lengths = set()
        for token in self.values("github_token", "ghs-stateless"):
            prefix, app, jwt = token.split("_", 2)
            header, payload, signature = jwt.split(".")
            self.assertEqual(prefix, "ghs")
            self.assertEqual(json.loads(base64.urlsafe_b64decode(header + "==")), {"alg": "RS256", "typ": "JWT"})
            claims = json.loads(base64.urlsafe_b64decode(payload + "=="))
            self.assertEqual(claims["aid"], int(app))
            self.assertEqual(claims["exp"] - claims["iat"], 3600)
            self.assertEqual(len(base64.urlsafe_b64decode(signature + "==")), 256)
            self.assertEqual(base64.urlsafe_b64encode(base64.urlsafe_b64decode(signature + "==")).decode().rstrip("="),
                             signature)  # canonical: no stray bits in the last character
            lengths.add(len(token))
        self.assertTrue(min(lengths) >= 500 and max(lengths) <= 560 and len(lengths) > 1, lengths)

    def test_gitlab_routable_tokens_carry_their_length_and_crc32(self):
        """As GitLab's RoutableToken generator writes them: base64url (unpadded) of 16
        random bytes, the routing lines and their length; .01.; the base64 text's length
        in base 36; the CRC32 of everything before, in base 36, seven digits."""
        for token in self.values("gitlab_token", "glpat-routable"):
            m = re.fullmatch(r"glpat-([A-Za-z0-9_-]+)\.01\.([0-9a-z]{2})([0-9a-z]{7})", token)
            self.assertIsNotNone(m, token)
            payload, length, crc = m.groups()
            self.assertEqual(int(length, 36), len(payload))
            self.assertEqual(int(crc, 36), zlib.crc32(token[:-7].encode()))
            raw = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
            routing = raw[16:-1]
            self.assertEqual(raw[-1], len(routing))
            keys = [line.split(":")[0] for line in routing.decode().split("\n")]
            self.assertEqual(keys, sorted(keys))
            self.assertIn("o", keys)  # GitLab requires the organisation

    def test_sentry_org_tokens_keep_their_padding_and_a_float_time(self):
        padded = 0
        for token in self.values("sentry_auth_token", "sntrys"):
            body = token[len("sntrys_"):token.rindex("_")]
            padded += body.endswith("=")
            claims = json.loads(base64.b64decode(body, validate=True))
            self.assertIsInstance(claims["iat"], float)
        self.assertGreater(padded, 10)

    def test_mailgun_keys_of_both_generations(self):
        for token in self.values("mailgun_api_key", "key"):
            self.assertRegex(token, r"\Akey-[0-9a-f]{32}\Z")
        for token in self.values("mailgun_api_key", "hex"):
            self.assertRegex(token, r"\A[0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8}\Z")

    def test_discord_ids_are_snowflakes_of_the_past(self):
        """A snowflake's top bits are milliseconds since 2015-01-01: every id drawn is
        from 2016 to mid-2026, 18 or 19 digits."""
        for token in self.values("discord_bot_token", ""):
            user = int(base64.urlsafe_b64decode(token.split(".")[0] + "==").decode())
            when = (user >> 22) + 1_420_070_400_000
            self.assertTrue(1_451_606_400_000 <= when <= 1_780_272_000_000, token)
            self.assertIn(len(str(user)), (18, 19))

    def test_npm_tokens_carry_githubs_crc32_checksum(self):
        tokens = self.values("npm_token", "")
        for token in tokens:
            body, check = token[4:34], token[34:]
            self.assertTrue(token.startswith("npm_") and len(token) == 40, token)
            self.assertEqual(check, github_checksum(body))
        self.assertEqual(len(set(tokens)), len(tokens))

    def test_slack_configuration_tokens_and_their_refresh_tokens(self):
        for token in self.values("slack_token", "xoxe"):
            self.assertRegex(token, r"^xoxe\.xoxp-1-[A-Z0-9]{163,166}$")
        lengths = {len(t) for t in self.values("slack_token", "xoxe", 200)}
        self.assertEqual(lengths, {12 + n for n in range(163, 167)})
        for token in self.values("slack_token", "xoxe-refresh"):
            self.assertRegex(token, r"^xoxe-1-[A-Z0-9]{146}$")

    def test_azure_client_secrets_carry_a_real_format_version(self):
        versions = [s[3] for s in self.values("azure_ad_client_secret", "", 400)]
        self.assertEqual(set(versions), {"7", "8"})
        self.assertGreater(versions.count("8"), versions.count("7") * 2)  # current secrets are 8Q~
        for secret in self.values("azure_ad_client_secret", ""):
            self.assertEqual((len(secret), secret[4:6]), (40, "Q~"))

    def test_url_passwords_are_valid_percent_encoding(self):
        import urllib.parse
        encoded = 0
        for name, variants in (("connection_string_password", mk.CONN_VARIANTS), ("url_password", ("",))):
            for variant in variants:
                for url in self.values(name, variant, 60):
                    userinfo = urllib.parse.urlsplit(url).netloc.rsplit("@", 1)[0]
                    self.assertNotRegex(userinfo, r"%(?![0-9A-F]{2})", url)
                    self.assertRegex(userinfo, r"^[A-Za-z0-9!*_.~$&+=%-]+:[A-Za-z0-9!*_.~$&+=%-]+$", url)
                    encoded += "%" in userinfo
        self.assertGreater(encoded, 20)  # passwords with @ : / % # ? are written encoded

    def test_datadog_keys_sit_in_headers_and_in_the_environment(self):
        family = FAMILIES["datadog_api_key"]
        self.assertEqual(family.contexts_of("api"), frozenset({"shell"}))
        self.assertEqual(family.contexts_of("env-api"), frozenset({"kv"}))
        for key in self.values("datadog_api_key", "env-api"):
            self.assertRegex(key, r"^[0-9a-f]{32}$")
        for key in self.values("datadog_api_key", "env-app"):
            self.assertRegex(key, r"^[0-9a-f]{40}$")

    def test_aws_key_ids_use_every_real_prefix(self):
        for prefix in mk.AWS_ID_VARIANTS:
            for key in self.values("aws_access_key_id", prefix, 10):
                self.assertTrue(key.startswith(prefix) and len(key) == 20, key)

    def test_jwt_signature_length_fits_the_algorithm(self):
        want = {"HS256": 43, "RS256": 342, "ES256": 86, "none": 0}
        for alg, length in want.items():
            for token in self.values("jwt", alg, 10):
                header, _, sig = token.split(".")
                self.assertEqual(json.loads(base64.urlsafe_b64decode(header + "==="))["alg"], alg)
                self.assertEqual(len(sig), length)

    def test_pem_bodies_are_der_or_armored_with_their_checksum(self):
        for variant in mk.PEM_VARIANTS:
            for pem in self.values("pem_private_key", variant, 5):
                lines = pem.split("\n")
                self.assertIn("PRIVATE KEY", lines[0])
                if variant == "pgp":
                    body = "".join(lines[2:-2])
                    self.assertEqual(base64.b64decode(lines[-2][1:]), crc24(base64.b64decode(body)).to_bytes(3, "big"))
                    continue
                der = base64.b64decode("".join(lines[1:-1]))
                if variant == "openssh":
                    self.assertTrue(der.startswith(b"openssh-key-v1\0"))
                    continue
                self.assertEqual(der[0], 0x30)  # a SEQUENCE spanning the whole body
                n = der[1] & 0x7F if der[1] & 0x80 else 0
                length = int.from_bytes(der[2:2 + n], "big") if n else der[1]
                self.assertEqual(len(der), 2 + n + length)

    def test_age_keys_are_valid_bech32(self):
        for key in self.values("age_secret_key", ""):
            self.assertTrue(key.startswith("AGE-SECRET-KEY-1") and bech32_valid(key))
            broken = key[:-1] + ("Q" if key[-1] != "Q" else "P")
            self.assertFalse(bech32_valid(broken))

    def test_lengths_and_shapes_of_selected_vendors(self):
        self.assertEqual({len(v) for v in self.values("stripe_secret_key", "sk_live", 60)}, {32, 107})
        for v in self.values("openai_api_key", "proj", 10):
            self.assertTrue(v.startswith("sk-proj-") and "T3BlbkFJ" in v and len(v) == 164)
        hooks = self.values("slack_webhook", "", 60)
        self.assertGreater(len({len(h.split("/")[4]) for h in hooks}), 1)  # team ids vary in length
        for v in self.values("pypi_token", "pypi", 10):
            self.assertTrue(v.startswith("pypi-AgEIcHlwaS5vcmc"))
        for v in self.values("anthropic_api_key", "api03", 10):
            self.assertTrue(v.startswith("sk-ant-api03-") and v.endswith("AA") and len(v) == 108)
        for v in self.values("kubernetes_secret_data", "dockerconfigjson", 5):
            self.assertIn("auths", json.loads(base64.b64decode(v)))


if __name__ == "__main__":
    unittest.main()

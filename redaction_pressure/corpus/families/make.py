"""Generators of the secret families: each draws one value in its vendor's documented
shape (prefix, length, alphabet, checksum, structure), for one variant or any."""

from __future__ import annotations

import hashlib
import json
import struct
import zlib
from collections.abc import Mapping

from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat, PublicFormat

from ..rng import Rng
from .base import (
    ALNUM,
    B64,
    B64URL,
    CERT_ORGS,
    DIGITS,
    HEX,
    HOSTS,
    LOWER,
    PASSWORD,
    UPPER,
    UPPER32,
    USERS,
    Fragment,
    b64,
    b64url,
    base36,
    bech32,
    der,
    ec_p256_key,
    ed25519_key,
    github_checksum,
    inner,
    macaroon_v2,
    mpi,
    oid,
    pem_text,
    pgp_armor,
    pgp_packet,
    pick,
    random_b64url,
    random_body,
    rbytes,
    rsa_private_der,
    seq,
    small_int,
    uuid4_text,
    whole,
)
from .dsa_groups import pick_group

AWS_ID_VARIANTS = ("AKIA", "ASIA", "ABIA", "ACCA", "A3T")


def aws_key_id(r: Rng, v: str) -> Fragment:
    prefix = pick(r, v, AWS_ID_VARIANTS)
    if prefix == "A3T":
        prefix += r.choice(UPPER + DIGITS)
    return whole(prefix + random_body(r, UPPER32, 16))


def aws_secret(r: Rng, v: str) -> Fragment:
    return whole(random_body(r, B64, 40))


def gcp_api_key(r: Rng, v: str) -> Fragment:
    return whole("AIzaSy" + random_body(r, B64URL, 33))


def _pkcs8_rsa(r: Rng) -> bytes:
    return seq(small_int(0), seq(oid("1.2.840.113549.1.1.1"), der(0x05, b"")),
               der(0x04, rsa_private_der(r)))


def _ec_p256(r: Rng) -> bytes:
    """SEC 1's ECPrivateKey with its curve and public point, as OpenSSL writes it."""
    return ec_p256_key(r).private_bytes(Encoding.DER, PrivateFormat.TraditionalOpenSSL, NoEncryption())


def _encrypted_pkcs8(r: Rng) -> bytes:
    pbkdf2 = seq(oid("1.2.840.113549.1.5.12"),
                 seq(der(0x04, rbytes(r, 16)), small_int(2048), seq(oid("1.2.840.113549.2.9"), der(0x05, b""))))
    aes = seq(oid("2.16.840.1.101.3.4.1.42"), der(0x04, rbytes(r, 16)))
    return seq(seq(oid("1.2.840.113549.1.5.13"), seq(pbkdf2, aes)), der(0x04, rbytes(r, 1232)))


def _dsa(r: Rng) -> bytes:
    """OpenSSL's DSAPrivateKey (version, p, q, g, y, x) in a group of the pool, with its
    own secret x and public value y = g^x mod p: ``openssl pkey -check`` passes it."""
    p, q, g = pick_group(r)
    x = 1 + r.below(q - 1)
    return seq(*(small_int(v) for v in (0, p, q, g, pow(g, x, p), x)))


def _ssh_string(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


def _openssh_ed25519(r: Rng) -> bytes:
    """The public key is the seed's (ssh-keygen -y derives it; a signature made with
    the file verifies)."""
    key = ed25519_key(r)
    seed = key.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
    pub = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    blob = _ssh_string(b"ssh-ed25519") + _ssh_string(pub)
    check = rbytes(r, 4)
    private = (check + check + blob + _ssh_string(seed + pub) + _ssh_string(r.choice(USERS).encode()))
    private += bytes(range(1, 1 + (-len(private)) % 8))
    return (b"openssh-key-v1\0" + _ssh_string(b"none") + _ssh_string(b"none") + _ssh_string(b"")
            + struct.pack(">I", 1) + _ssh_string(blob) + _ssh_string(private))


# OpenPGP's EdDSA keys (algorithm 22) on Ed25519, as GnuPG makes them (draft-koch-eddsa-
# for-openpgp, RFC 9580's "EdDSALegacy"): the curve field is the DER OID without its tag
# (a length octet, then the arcs), the public point is 0x40 then the 32-octet key, the
# secret is the 32-octet seed as an MPI, and a signature is R and S as two MPIs over the
# hash digest. Keys are dated 2019-01-01 to 2025-12-31, so none is from the future.
_PGP_ED25519 = oid("1.3.6.1.4.1.11591.15.1")[1:]
_PGP_CREATED = (1546300800, 1767225599)
_PGP_HASHES = (("sha256", 8), ("sha512", 10))
_PGP_ROLES = ("Release Signing Key", "Package Signing", "CI Signing", "Backups", "Ops")


def _pgp_subpacket(kind: int, data: bytes) -> bytes:
    return bytes([1 + len(data), kind]) + data  # one-octet length: every one here is short


def _pgp_secret_key(r: Rng) -> bytes:
    """A transferable secret key (RFC 4880, 11.2) that ``gpg --import`` takes: an
    unprotected v4 Ed25519 secret-key packet, a user ID, and the positive certification
    (0x13) binding them, with the hashed subpackets GnuPG writes first (issuer
    fingerprint, creation time, key flags certify and sign) and the issuer key ID
    unhashed. Ed25519 signing is deterministic, so the bytes are a function of ``r``."""
    created = r.between(*_PGP_CREATED).to_bytes(4, "big")
    key = ed25519_key(r)
    public = b"\x04" + created + b"\x16" + _PGP_ED25519 + mpi(b"\x40" + key.public_key().public_bytes_raw())
    secret = mpi(key.private_bytes_raw())
    uid = f"{r.choice(CERT_ORGS)} {r.choice(_PGP_ROLES)} <{r.choice(USERS)}@{r.choice(HOSTS).split('.', 1)[1]}>"
    hash_name, hash_id = r.choice(_PGP_HASHES)
    # The v4 fingerprint: SHA-1 over 0x99, the two-octet length and the public-key body.
    key_hashed = b"\x99" + len(public).to_bytes(2, "big") + public
    fingerprint = hashlib.sha1(key_hashed).digest()
    hashed = (_pgp_subpacket(33, b"\x04" + fingerprint) + _pgp_subpacket(2, created)
              + _pgp_subpacket(27, b"\x03"))
    head = bytes([4, 0x13, 22, hash_id]) + len(hashed).to_bytes(2, "big") + hashed
    # Signed: the key as for the fingerprint, 0xB4 and the user ID with a four-octet
    # length, the signature up to its hashed subpackets, and the v4 trailer.
    digest = hashlib.new(hash_name, key_hashed + b"\xb4" + len(uid).to_bytes(4, "big") + uid.encode()
                         + head + b"\x04\xff" + len(head).to_bytes(4, "big")).digest()
    sig = key.sign(digest)
    unhashed = _pgp_subpacket(16, fingerprint[-8:])
    signature = head + len(unhashed).to_bytes(2, "big") + unhashed + digest[:2] + mpi(sig[:32]) + mpi(sig[32:])
    # S2K usage 0: the secret in the clear, then the sum of its MPI's octets (bit count
    # included) mod 65536.
    body = public + b"\x00" + secret + (sum(secret) % 0x10000).to_bytes(2, "big")
    return pgp_packet(5, body) + pgp_packet(13, uid.encode()) + pgp_packet(2, signature)


PEM_VARIANTS = ("rsa", "pkcs8", "ec", "openssh", "encrypted", "dsa", "pgp")
_PEM = {"rsa": ("RSA PRIVATE KEY", rsa_private_der, 64), "pkcs8": ("PRIVATE KEY", _pkcs8_rsa, 64),
        "ec": ("EC PRIVATE KEY", _ec_p256, 64), "openssh": ("OPENSSH PRIVATE KEY", _openssh_ed25519, 70),
        "encrypted": ("ENCRYPTED PRIVATE KEY", _encrypted_pkcs8, 64), "dsa": ("DSA PRIVATE KEY", _dsa, 64)}


def private_pem(r: Rng, v: str) -> Fragment:
    variant = pick(r, v, PEM_VARIANTS)
    if variant == "pgp":
        return whole(pgp_armor("PRIVATE KEY BLOCK", _pgp_secret_key(r)))
    label, build, width = _PEM[variant]
    return whole(pem_text(label, build(r), width))


def gcp_service_account_key(r: Rng, v: str) -> Fragment:
    """The ``private_key`` field of a service-account JSON key file: a PKCS#8 PEM whose
    newlines are JSON escapes (a literal backslash-n), as Google writes it."""
    pem = pem_text("PRIVATE KEY", _pkcs8_rsa(r)).replace("\n", "\\n") + "\\n"
    return whole(pem, key="private_key")


def azure_client_secret(r: Rng, v: str) -> Fragment:
    # The digit before Q~ is the secret's format version: 8 for secrets issued now, 7
    # for older ones; 40 characters in all.
    version = "8" if r.chance(3, 4) else "7"
    return whole(random_body(r, ALNUM + "_~.", 3) + version + "Q~" + random_body(r, ALNUM + "_~.-", 34))


def azure_storage(r: Rng, v: str) -> Fragment:
    key = b64(rbytes(r, 64))
    return inner(f"DefaultEndpointsProtocol=https;AccountName={r.choice(('app', 'logs', 'media', 'backup'))}"
                 f"{r.chars(LOWER + DIGITS, 6)};AccountKey=", key, ";EndpointSuffix=core.windows.net")


DO_VARIANTS = ("dop", "doo", "dor")


def digitalocean(r: Rng, v: str) -> Fragment:
    return whole(pick(r, v, DO_VARIANTS) + "_v1_" + random_body(r, HEX, 64))


def heroku(r: Rng, v: str) -> Fragment:
    return whole("HRKU-AA" + random_body(r, B64URL, 58))


DATABRICKS_VARIANTS = ("dapi", "dapi-suffix")


def databricks(r: Rng, v: str) -> Fragment:
    variant = pick(r, v, DATABRICKS_VARIANTS)
    return whole("dapi" + random_body(r, HEX, 32) + (f"-{r.between(2, 9)}" if variant == "dapi-suffix" else ""))


GITHUB_VARIANTS = ("ghp", "gho", "ghu", "ghs", "ghr", "ghs-stateless")


def github_classic(r: Rng, v: str) -> Fragment:
    """ghp_, gho_, ghu_ and ghs_: 30 random base62 characters and their CRC32 in 6 more.
    ghr_ (refresh) tokens have 76 characters (GitHub's documentation; no checksum is
    documented). Since April 2026 an installation token may be stateless:
    ghs_APPID_JWT, about 520 characters with two dots (GitHub's changelog,
    2026-04-24), which a rule for 36 characters misses."""
    variant = pick(r, v, GITHUB_VARIANTS)
    if variant == "ghr":
        return whole("ghr_" + random_body(r, ALNUM, 76))
    if variant == "ghs-stateless":
        return whole(_github_stateless(r))
    body = random_body(r, ALNUM, 30)
    return whole(f"{variant}_{body}{github_checksum(body)}")


_STATELESS_HEADER = b64url(json.dumps({"alg": "RS256", "typ": "JWT"}, separators=(",", ":")).encode())
_STATELESS_FROM = 1777248000  # 2026-04-27, when the rollout began


def _github_stateless(r: Rng) -> str:
    """ghs_ + the app's id + a JWT naming the installation, signed (RS256: 256 bytes)."""
    app = r.between(100_000, 2_999_999)
    iat = _STATELESS_FROM + r.below(18_000_000)
    claims = {"aid": app, "exp": iat + 3600, "iat": iat, "iid": r.between(1_000_000, 99_999_999),
              "jti": uuid4_text(r)}
    payload = b64url(json.dumps(claims, separators=(",", ":")).encode())
    return f"ghs_{app}_{_STATELESS_HEADER}.{payload}.{random_b64url(r, 256)}"


def github_fine_grained(r: Rng, v: str) -> Fragment:
    return whole("github_pat_11" + r.chars(UPPER + DIGITS, 20) + "_" + random_body(r, ALNUM, 59))


GITLAB_VARIANTS = ("glpat", "gldt", "glrt", "glft", "glptt", "glpat-routable")


def gitlab(r: Rng, v: str) -> Fragment:
    variant = pick(r, v, GITLAB_VARIANTS)
    if variant == "glptt":
        return whole("glptt-" + random_body(r, HEX, 40))
    if variant == "glpat-routable":
        return whole(_gitlab_routable(r))
    return whole(f"{variant}-" + random_body(r, B64URL, 20))


def _gitlab_routable(r: Rng) -> str:
    """GitLab's routable token (GitLab's default since 2025): base64url, unpadded, of 16
    random bytes, the routing payload (sorted key:value lines, numbers in base 36: the
    cell, the organisation, the user) and its length in one byte; then ".", the format
    version "01", ".", the base64 text's length in two base-36 digits, and the CRC32 of
    everything before it in seven."""
    routing = f"c:{base36(r.between(1, 4))}\no:{base36(r.between(1, 9_999_999))}\nu:{base36(r.between(1, 29_999_999))}"
    payload = random_b64url(r, 16, routing.encode() + bytes([len(routing)]))
    head = f"glpat-{payload}.01.{base36(len(payload)).rjust(2, '0')}"
    return head + base36(zlib.crc32(head.encode())).rjust(7, "0")


def npm(r: Rng, v: str) -> Fragment:
    """npm's granular tokens follow GitHub's format: 30 random base62 characters and
    their CRC32 in 6 more."""
    body = random_body(r, ALNUM, 30)
    return whole("npm_" + body + github_checksum(body))


PYPI_VARIANTS = ("pypi", "testpypi")


_PYPI_PROJECTS = ("requests-extra", "acme-billing", "ledger-client", "shop-utils", "etl-pipeline",
                  "grafana-exporter", "fastjsonx", "internal-sdk")


def pypi(r: Rng, v: str) -> Fragment:
    """A PyPI API token: ``pypi-`` and the unpadded urlsafe base64 of a v2 macaroon
    (`base.macaroon_v2`) whose location is pypi.org or test.pypi.org, whose identifier is
    the token's UUID, and whose caveats are PyPI's: scoped to the user or to one project,
    in the current compact JSON or the legacy form, sometimes with an expiry."""
    location = b"pypi.org" if pick(r, v, PYPI_VARIANTS) == "pypi" else b"test.pypi.org"
    identifier = uuid4_text(r)
    project = r.choice(_PYPI_PROJECTS) if r.chance(1, 2) else None
    if r.chance(1, 4):  # a token made before PyPI's caveats v1
        scope: object = "user" if project is None else {"projects": [project]}
        caveats = [json.dumps({"version": 1, "permissions": scope})]
    else:
        caveats = [f'[3,"{uuid4_text(r)}"]' if project is None else f'[1,["{project}"]]']
        if r.chance(1, 3):
            not_before = 1700000000 + r.below(10**8)
            caveats.insert(0, f"[0,{not_before + r.choice((86400, 604800, 2592000))},{not_before}]")
    raw = macaroon_v2(location, identifier.encode(), [c.encode() for c in caveats], rbytes(r, 32))
    return whole("pypi-" + b64url(raw))


def rubygems(r: Rng, v: str) -> Fragment:
    return whole("rubygems_" + random_body(r, HEX, 48))


def docker_hub(r: Rng, v: str) -> Fragment:
    return whole("dckr_pat_" + random_body(r, B64URL, 27))


SLACK_VARIANTS = ("xoxb", "xoxp", "xoxe", "xoxe-refresh", "xoxs", "xapp", "xoxb-legacy")


def _digits(r: Rng, lo: int, hi: int) -> str:
    return r.choice(DIGITS[1:]) + random_body(r, DIGITS, r.between(lo, hi) - 1)


def slack_token(r: Rng, v: str) -> Fragment:
    variant = pick(r, v, SLACK_VARIANTS)
    if variant == "xoxb":
        return whole(f"xoxb-{_digits(r, 10, 13)}-{_digits(r, 10, 13)}-{random_body(r, ALNUM, 24)}")
    if variant == "xoxp":
        return whole(f"xoxp-{_digits(r, 10, 13)}-{_digits(r, 10, 13)}-{_digits(r, 10, 13)}-{random_body(r, HEX, 32)}")
    if variant == "xoxe":  # a configuration token: 163-166 upper-case letters and digits
        return whole(f"xoxe.xoxp-1-{random_body(r, UPPER + DIGITS, r.between(163, 166))}")
    if variant == "xoxe-refresh":  # its refresh token: 146
        return whole(f"xoxe-1-{random_body(r, UPPER + DIGITS, 146)}")
    if variant == "xoxs":
        return whole(f"xoxs-{_digits(r, 10, 12)}-{_digits(r, 10, 12)}-{_digits(r, 10, 12)}-{random_body(r, HEX, 64)}")
    if variant == "xapp":
        return whole(f"xapp-1-A{r.chars(UPPER + DIGITS, 10)}-{_digits(r, 13, 13)}-{random_body(r, HEX, 64)}")
    return whole(f"xoxb-{_digits(r, 11, 12)}-{random_body(r, ALNUM, 24)}")


def slack_webhook(r: Rng, v: str) -> Fragment:
    ids = UPPER + DIGITS
    return whole(f"https://hooks.slack.com/services/T{r.chars(ids, r.between(8, 10))}"
                 f"/B{r.chars(ids, r.between(8, 10))}/{random_body(r, ALNUM, 24)}")


# Discord ids are snowflakes: milliseconds since 2015-01-01 above 22 bits of worker,
# process and counter. Drawn from 2016 to mid-2026, so no id is from the future and
# every one has 18 or 19 digits.
_SNOWFLAKE_MS = (31_536_000_000, 360_201_600_000)


def _snowflake(r: Rng) -> str:
    return str(r.between(*_SNOWFLAKE_MS) << 22 | r.below(1 << 22))


def discord_bot(r: Rng, v: str) -> Fragment:
    user_id = _snowflake(r)
    return whole(f"{b64url(user_id.encode())}.{r.chars(B64URL, 6)}.{random_body(r, B64URL, 38)}")


def discord_webhook(r: Rng, v: str) -> Fragment:
    return whole(f"https://discord.com/api/webhooks/{_snowflake(r)}/{random_body(r, B64URL, 68)}")


def telegram(r: Rng, v: str) -> Fragment:
    return whole(f"{_digits(r, 9, 10)}:AA{random_body(r, B64URL, 33)}")


STRIPE_VARIANTS = ("sk_live", "rk_live", "sk_test", "rk_test")


def stripe(r: Rng, v: str) -> Fragment:
    prefix = pick(r, v, STRIPE_VARIANTS)
    body = (random_body(r, ALNUM, 24) if r.chance(1, 3)
            else "51" + random_body(r, ALNUM, 97))  # the current 99-character body
    return whole(f"{prefix}_{body}")


SQUARE_VARIANTS = ("EAAA", "sq0atp", "sq0csp")


def square(r: Rng, v: str) -> Fragment:
    variant = pick(r, v, SQUARE_VARIANTS)
    if variant == "EAAA":
        return whole("EAAA" + random_body(r, B64URL, 60))
    return whole(f"{variant}-" + random_body(r, B64URL, 22 if variant == "sq0atp" else 43))


SHOPIFY_VARIANTS = ("shpat", "shpss", "shpca", "shppa")


def shopify(r: Rng, v: str) -> Fragment:
    return whole(f"{pick(r, v, SHOPIFY_VARIANTS)}_" + random_body(r, HEX, 32))


def braintree(r: Rng, v: str) -> Fragment:
    return whole(f"access_token$production${r.chars(LOWER + DIGITS, 16)}${random_body(r, HEX, 32)}")


OPENAI_VARIANTS = ("proj", "svcacct", "admin", "legacy")


def openai(r: Rng, v: str) -> Fragment:
    variant = pick(r, v, OPENAI_VARIANTS)
    if variant == "legacy":
        return whole(f"sk-{random_body(r, ALNUM, 20)}T3BlbkFJ{random_body(r, ALNUM, 20)}")
    return whole(f"sk-{variant}-{random_body(r, B64URL, 74)}T3BlbkFJ{random_body(r, B64URL, 74)}")


ANTHROPIC_VARIANTS = ("api03", "admin01")


def anthropic(r: Rng, v: str) -> Fragment:
    return whole(f"sk-ant-{pick(r, v, ANTHROPIC_VARIANTS)}-{random_body(r, B64URL, 93)}AA")


def huggingface(r: Rng, v: str) -> Fragment:
    return whole("hf_" + random_body(r, LOWER + UPPER, 34))


def groq(r: Rng, v: str) -> Fragment:
    return whole("gsk_" + random_body(r, ALNUM, 52))


def replicate(r: Rng, v: str) -> Fragment:
    return whole("r8_" + random_body(r, ALNUM, 37))


def sendgrid(r: Rng, v: str) -> Fragment:
    return whole("SG." + random_body(r, B64URL, 22) + "." + random_body(r, B64URL, 43))


MAILGUN_VARIANTS = ("key", "hex")


def mailgun(r: Rng, v: str) -> Fragment:
    """key- + 32 hex (accounts before 2018), or 32 hex, -, 8 hex, -, 8 hex (since)."""
    if pick(r, v, MAILGUN_VARIANTS) == "key":
        return whole("key-" + random_body(r, HEX, 32))
    return whole(f"{random_body(r, HEX, 32)}-{random_body(r, HEX, 8)}-{random_body(r, HEX, 8)}")


def mailchimp(r: Rng, v: str) -> Fragment:
    return whole(random_body(r, HEX, 32) + f"-us{r.between(1, 21)}")


def twilio(r: Rng, v: str) -> Fragment:
    return whole("SK" + random_body(r, HEX, 32))


SENTRY_VARIANTS = ("sntryu", "sntrys")


def sentry(r: Rng, v: str) -> Fragment:
    if pick(r, v, SENTRY_VARIANTS) == "sntryu":
        return whole("sntryu_" + random_body(r, HEX, 64))
    # As Sentry makes them: the issue time as time.time() gives it (a float), the claims
    # as sentry.utils.json writes them (compact: no spaces, unlike the stdlib's default),
    # and their base64 keeps its padding (two thirds of real tokens hold "=" before "_").
    claims = {"iat": 1700000000 + r.below(10**8) + r.below(10**6) / 10**6, "url": "https://sentry.io",
              "region_url": "https://us.sentry.io", "org": r.choice(("acme", "shop", "ledger"))}
    body = b64(json.dumps(claims, separators=(",", ":")).encode())
    return whole(f"sntrys_{body}_{random_body(r, B64, 43)}")


DATADOG_VARIANTS = ("api", "api+app", "env-api", "env-app")


def datadog(r: Rng, v: str) -> Fragment:
    """A curl call with the DD-API-KEY (and DD-APPLICATION-KEY) header, or the key alone
    as the agent's environment sets it."""
    variant = pick(r, v, DATADOG_VARIANTS)
    if variant == "env-api":  # under the stream's own key, DD_API_KEY or DATADOG_API_KEY
        return whole(random_body(r, HEX, 32))
    if variant == "env-app":
        return whole(random_body(r, HEX, 40), key="dd_app_key")
    api = random_body(r, HEX, 32)
    head = ('curl -sS -X POST "https://api.datadoghq.com/api/v2/series" '
            '-H "Content-Type: application/json" -H "DD-API-KEY: ')
    if variant == "api":
        return inner(head, api, '" -d @metrics.json')
    # Both keys: a read of the monitors (a GET, one URL), as Datadog's API reference shows it.
    head = 'curl -sS "https://api.datadoghq.com/api/v1/monitor" -H "DD-API-KEY: '
    app = random_body(r, HEX, 40)
    text = head + api + '" -H "DD-APPLICATION-KEY: ' + app + '"'
    a = len(head)
    b = text.index(app)
    return Fragment(text, ((a, a + 32), (b, b + 40)))


VAULT_VARIANTS = ("hvs", "hvb")


def vault(r: Rng, v: str) -> Fragment:
    if pick(r, v, VAULT_VARIANTS) == "hvs":
        return whole("hvs.CAESI" + random_body(r, B64URL, 86))
    return whole("hvb.AAAAAQ" + random_body(r, B64URL, 132))


def terraform(r: Rng, v: str) -> Fragment:
    return whole(random_body(r, ALNUM, 14) + ".atlasv1." + random_body(r, ALNUM, 67))


ONEPASSWORD_VARIANTS = ("service_account", "secret_key")


def onepassword(r: Rng, v: str) -> Fragment:
    if pick(r, v, ONEPASSWORD_VARIANTS) == "secret_key":
        ids = UPPER.replace("O", "").replace("I", "") + DIGITS[2:]
        parts = [r.chars(ids, n) for n in (6, 6, 5, 5, 5, 5)]
        return whole("A3-" + "-".join(parts))
    claims = {"signInAddress": "my.1password.com", "userAuth": {"method": "SRPg-4096", "alg": "PBES2g-HS256",
              "iterations": 650000, "salt": b64url(rbytes(r, 16))}, "secretKey": "A3-" + r.chars(UPPER + DIGITS, 32),
              "srpX": rbytes(r, 32).hex(), "muk": {"alg": "A256GCM", "ext": True, "k": b64url(rbytes(r, 32)),
              "key_ops": ["encrypt", "decrypt"], "kty": "oct", "kid": "mp"}}
    return whole("ops_" + b64(json.dumps(claims, separators=(",", ":")).encode()).rstrip("="))


def age_key(r: Rng, v: str) -> Fragment:
    return whole(bech32("age-secret-key-", rbytes(r, 32)).upper())


CONN_VARIANTS = ("postgresql", "mysql", "mongodb+srv", "redis", "amqp", "mssql")
_PORTS = {"postgresql": 5432, "mysql": 3306, "mongodb+srv": None, "redis": 6379, "amqp": 5672, "mssql": 1433}


# A URL's userinfo holds unreserved characters, sub-delimiters and percent-escapes
# (RFC 3986, 3.2.1): a password with '@', ':', '/', '%', '#' or '?' is written
# percent-encoded, and that encoded text is what leaks (and what the label covers).
_URL_PASSWORD = ALNUM + "!*_-.~$&+=@:/%#?"
_USERINFO_SAFE = frozenset(ALNUM + "!*_-.~$&+=")


def url_encoded_password(r: Rng, lo: int, hi: int) -> str:
    raw = random_body(r, ALNUM, 4) + random_body(r, _URL_PASSWORD, r.between(lo, hi) - 4) \
        if r.chance(1, 3) else random_body(r, ALNUM + "!*_-.~", r.between(lo, hi))
    return "".join(c if c in _USERINFO_SAFE else f"%{ord(c):02X}" for c in raw)


def conn_password(r: Rng, v: str) -> Fragment:
    scheme = pick(r, v, CONN_VARIANTS)
    port = _PORTS[scheme]
    host = r.choice(HOSTS) + (f":{port}" if port else "")
    path = {"redis": "0", "amqp": "vhost"}.get(scheme, r.choice(("orders", "app", "analytics")))
    return inner(f"{scheme}://{r.choice(USERS)}:", url_encoded_password(r, 12, 28), f"@{host}/{path}")


def url_password(r: Rng, v: str) -> Fragment:
    return inner(f"https://{r.choice(USERS)}:", url_encoded_password(r, 10, 24),
                 f"@{r.choice(HOSTS)}/{r.choice(('repo.git', 'api/v2/upload', 'simple/'))}")


def ado_net(r: Rng, v: str) -> Fragment:
    return inner(f"Server=tcp:{r.choice(HOSTS)},1433;Initial Catalog={r.choice(('orders', 'ledger', 'app'))};"
                 f"User ID={r.choice(USERS)};Password=", random_body(r, PASSWORD, r.between(12, 24)),
                 ";Encrypt=True;Connection Timeout=30;")


JWT_VARIANTS = ("HS256", "RS256", "ES256", "none")
_SIG = {"HS256": 32, "RS256": 256, "ES256": 64, "none": 0}


def jwt(r: Rng, v: str) -> Fragment:
    alg = pick(r, v, JWT_VARIANTS)
    header = {"alg": alg, "typ": "JWT"}
    if alg != "none" and r.chance(1, 2):
        header["kid"] = r.chars(HEX, 16)
    payload = {"sub": str(r.between(1000, 99999)), "iat": 1700000000 + r.below(10**8),
               "scope": r.choice(("read", "admin", "read write"))}

    def enc(obj: Mapping[str, object]) -> str:
        return b64url(json.dumps(obj, separators=(",", ":")).encode())

    return whole(f"{enc(header)}.{enc(payload)}.{b64url(rbytes(r, _SIG[alg]))}")


K8S_VARIANTS = ("opaque", "dockerconfigjson")
K8S_KEYS = ("db-password", "api-token", "client-secret", "redis-password", "smtp-password",
            "signing-key", "webhook-secret")


def k8s_secret_data(r: Rng, v: str) -> Fragment:
    if pick(r, v, K8S_VARIANTS) == "opaque":
        raw = random_body(r, PASSWORD, r.between(12, 32)).encode()
        return whole(b64(raw))
    auth = b64(f"{r.choice(USERS)}:{random_body(r, PASSWORD, 20)}".encode())
    cfg = {"auths": {r.choice(("registry.acme.io", "ghcr.io", "index.docker.io")): {"auth": auth}}}
    return whole(b64(json.dumps(cfg, separators=(",", ":")).encode()), key=".dockerconfigjson")


GENERIC_KEYS = (
    "password", "passwd", "pwd", "db_password", "db_pass", "admin_password", "root_password",
    "smtp_password", "redis_password", "ldap_bind_password", "mail_password", "service_password",
    "secret", "secret_key", "client_secret", "app_secret", "api_secret", "consumer_secret",
    "session_secret", "cookie_secret", "jwt_secret", "webhook_secret", "secret_token",
    "token", "auth_token", "access_token", "refresh_token", "api_token", "api_key", "apikey",
    "encryption_key", "signing_key", "master_key",
)
GENERIC_VARIANTS = ("hex", "base64", "uuid", "alnum", "password")


def generic(r: Rng, v: str) -> Fragment:
    variant = pick(r, v, GENERIC_VARIANTS)
    if variant == "hex":
        return whole(random_body(r, HEX, r.choice((32, 40, 64))))
    if variant == "base64":
        while True:
            value = b64(rbytes(r, r.choice((24, 32, 33, 48))))
            if "/" in value or "+" in value or value.endswith("="):
                return whole(value)
    if variant == "uuid":
        return whole(f"{random_body(r, HEX, 8)}-{random_body(r, HEX, 4)}-4{random_body(r, HEX, 3)}-"
                     f"{r.choice('89ab')}{random_body(r, HEX, 3)}-{random_body(r, HEX, 12)}")  # version 4
    if variant == "alnum":
        return whole(random_body(r, ALNUM, r.between(20, 40)))
    return whole(r.choice(ALNUM) + random_body(r, ALNUM + "_-.+!#%", r.between(14, 30)) + r.choice(ALNUM))


def basic(r: Rng, v: str) -> Fragment:
    raw = f"{r.choice(USERS)}:{random_body(r, PASSWORD, r.between(10, 20))}".encode()
    return inner("Basic ", b64(raw))


def bearer(r: Rng, v: str) -> Fragment:
    return inner("Bearer ", random_body(r, ALNUM + "-._~", r.between(32, 56)))


CLI_VARIANTS = ("mysql", "mysqldump", "curl", "docker", "sshpass")


def cli_password(r: Rng, v: str) -> Fragment:
    # typed at a prompt: no ! (history expansion), * (a glob: zsh stops with "no matches
    # found") or ~ (a home directory at a word's start)
    pw = random_body(r, PASSWORD.translate(str.maketrans("", "", "!*~")), r.between(10, 20))
    host, user = r.choice(HOSTS), r.choice(USERS)
    variant = pick(r, v, CLI_VARIANTS)
    if variant == "mysql":
        return inner(f"mysql -h {host} -u {user} -p", pw, " -e 'SELECT 1'")
    if variant == "curl":
        return inner(f"curl -sS -u {user}:", pw, f" https://{host}/api/health")
    if variant == "docker":
        return inner(f"docker login -u {user} -p ", pw, f" {r.choice(HOSTS)}")
    if variant == "sshpass":
        return inner("sshpass -p ", pw, f" ssh {user}@{host}")
    return inner(f"mysqldump --single-transaction -h {host} -u {user} -p", pw, " orders > orders.sql")

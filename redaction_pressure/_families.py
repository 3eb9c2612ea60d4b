"""Secret and decoy families of corpus-v1, declared as one table.

A family makes a *fragment*: a value as it would sit in a record, plus the spans of
it that are secret (secret families) or that must survive (decoy families). Secret
families also carry the oracle: the regexes that remove exactly their spans and
nothing else; the generator checks every record against them, so the oracle is
right by construction. Decoys say, character by character, why they are not secret.

Contexts say where a fragment can be placed: ``kv`` (the value of a key in a config,
log or source line), ``block`` (a multi-line PEM block) and ``shell`` (a whole
command line).
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Callable

from ._rng import Rng

UPPER32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
DIGITS = "0123456789"
LOWER = "abcdefghijklmnopqrstuvwxyz"
ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
HEX = "0123456789abcdef"
PASSWORD = ALNUM + "!%*_-.~"  # no @ : / so it can sit inside a URL's userinfo
GENERIC = ALNUM + "_-.+!#%"

USERS = ("deploy", "admin", "svc_billing", "ci-runner", "app", "root", "grafana", "etl")
# Public-looking service hosts for fragments; internal hostnames and client IPs are
# policy categories (``_policy``), drawn per stream and labelled by its policy.
HOSTS = ("db.acme-prod.net", "pg-primary.acme.io", "mysql.shop.example", "cache-01.acme-cdn.net",
         "git.corp.example", "registry.acme.io")


@dataclass(frozen=True)
class Fragment:
    text: str
    spans: tuple[tuple[int, int], ...]
    key: str | None = None  # set when the value only makes sense under one key


@dataclass(frozen=True)
class Family:
    name: str
    kind: str  # "secret" | "decoy"
    contexts: frozenset[str]
    keys: tuple[str, ...]
    make: Callable[[Rng, str], Fragment]  # (rng, variant) -> fragment of that variant
    oracle: tuple[str, ...] = ()
    why: str = ""
    # Shapes a stream may fix for itself (e.g. "ghp" vs "gho" tokens); make(r, v) draws
    # only variant v. A stream shows every variant it uses.
    variants: tuple[str, ...] = ("",)
    # (text, exact secret substring the oracle must remove; "" for none)
    examples: tuple[tuple[str, str], ...] = ()
    negatives: tuple[str, ...] = ()  # near misses: no secret oracle may touch them


def _whole(text: str) -> Fragment:
    return Fragment(text, ((0, len(text)),))


def _inner(prefix: str, secret: str, suffix: str = "") -> Fragment:
    return Fragment(prefix + secret + suffix, ((len(prefix), len(prefix) + len(secret)),))


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _no(forbidden: str, make: Callable[[], str]) -> str:
    while True:
        value = make()
        if forbidden not in value:
            return value


def _aws_key_id(r: Rng, v: str = "") -> Fragment:
    return _whole(r.choice(("AKIA", "ASIA")) + _no("EXAMPLE", lambda: r.chars(UPPER32, 16)))


def _aws_secret(r: Rng, v: str = "") -> Fragment:
    return _whole(_no("EXAMPLE", lambda: r.chars(B64, 40)))


def _jwt(r: Rng, v: str = "") -> Fragment:
    header = {"alg": r.choice(("HS256", "RS256")), "typ": "JWT"}
    payload = {"sub": str(r.between(1000, 99999)), "iat": 1700000000 + r.below(10**8),
               "scope": r.choice(("read", "admin", "read write"))}
    enc = lambda obj: _b64url(json.dumps(obj, separators=(",", ":")).encode())  # noqa: E731
    return _whole(f"{enc(header)}.{enc(payload)}.{r.chars(B64URL, 43)}")


def _pem(r: Rng, label: str, lines: int) -> str:
    body = "\n".join(r.chars(B64, 64) for _ in range(lines)) + "\n" + r.chars(B64, r.between(8, 60))
    return f"-----BEGIN {label}-----\n{body}\n-----END {label}-----"


def _private_pem(r: Rng, v: str = "") -> Fragment:
    return _whole(_pem(r, r.choice(("RSA PRIVATE KEY", "EC PRIVATE KEY", "PRIVATE KEY",
                                    "OPENSSH PRIVATE KEY")), r.between(3, 6)))


def _conn_password(r: Rng, v: str = "") -> Fragment:
    scheme, port = r.choice((("postgresql", 5432), ("postgres", 5432), ("mysql", 3306),
                             ("mongodb+srv", None), ("redis", 6379), ("amqp", 5672)))
    user = r.choice(USERS)
    host = r.choice(HOSTS) + (f":{port}" if port else "")
    return _inner(f"{scheme}://{user}:", r.chars(PASSWORD, r.between(12, 28)),
                  f"@{host}/{r.choice(('orders', 'app', 'analytics', '0', 'vhost'))}")


def _url_password(r: Rng, v: str = "") -> Fragment:
    return _inner(f"https://{r.choice(USERS)}:", r.chars(PASSWORD, r.between(10, 24)),
                  f"@{r.choice(HOSTS)}/{r.choice(('repo.git', 'api/v2/upload', 'simple/'))}")


def _basic(r: Rng, v: str = "") -> Fragment:
    raw = f"{r.choice(USERS)}:{r.chars(PASSWORD, r.between(10, 20))}".encode()
    return _inner("Basic ", base64.b64encode(raw).decode())


def _bearer(r: Rng, v: str = "") -> Fragment:
    return _inner("Bearer ", r.chars(ALNUM + "-._~", r.between(32, 56)))


def _cli_password(r: Rng, v: str = "") -> Fragment:
    pw = r.chars(PASSWORD.replace("!", ""), r.between(10, 20))
    host = r.choice(HOSTS)
    user = r.choice(USERS)
    form = r.below(4)
    if form == 0:
        return _inner(f"mysql -h {host} -u {user} -p", pw, " -e 'SELECT 1'")
    if form == 1:
        return _inner(f"curl -sS -u {user}:", pw, f" https://{host}/api/health")
    if form == 2:
        return _inner(f"docker login -u {user} -p ", pw, f" {r.choice(HOSTS)}")
    return _inner("sshpass -p ", pw, f" ssh {user}@{host}")


def _generic(r: Rng, v: str = "") -> Fragment:
    return _whole(r.choice(ALNUM) + r.chars(GENERIC, r.between(19, 35)) + r.choice(ALNUM))


SECRETS: tuple[Family, ...] = (
    Family("aws_access_key_id", "secret", frozenset({"kv"}),
           ("aws_access_key_id", "aws_key_id"), _aws_key_id,
           oracle=(r"\b(?:AKIA|ASIA)[A-Z2-7]{16}\b(?<!EXAMPLE)",)),
    Family("aws_secret_access_key", "secret", frozenset({"kv"}),
           ("aws_secret_access_key",), _aws_secret,
           oracle=(r"""(?i)(?<=aws_secret_access_key["']?\s*[:=]\s*["']?)(?-i:(?![A-Za-z0-9/+]*EXAMPLE)[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])""",)),
    Family("github_token", "secret", frozenset({"kv"}), ("github_token", "gh_token"),
           lambda r, v="": _whole(r.choice(("ghp_", "gho_", "ghu_", "ghs_", "ghr_")) + r.chars(ALNUM, 36)),
           oracle=(r"\bgh[pousr]_[A-Za-z0-9]{36}\b",)),
    Family("github_fine_grained_pat", "secret", frozenset({"kv"}), ("github_pat", "gh_pat"),
           lambda r, v="": _whole("github_pat_" + r.chars(ALNUM, 22) + "_" + r.chars(ALNUM, 59)),
           oracle=(r"\bgithub_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}\b",)),
    Family("slack_token", "secret", frozenset({"kv"}), ("slack_bot_token", "slack_token"),
           lambda r, v="": _whole(f"xox{r.choice('bpa')}-{r.chars(DIGITS, r.between(10, 13))}-"
                            f"{r.chars(DIGITS, r.between(10, 13))}-{r.chars(ALNUM, 24)}"),
           oracle=(r"\bxox[bpa]-[0-9]{10,13}-[0-9]{10,13}-[A-Za-z0-9]{24}\b",)),
    Family("slack_webhook", "secret", frozenset({"kv"}), ("slack_webhook_url", "alert_webhook"),
           lambda r, v="": _whole(f"https://hooks.slack.com/services/T{r.chars(UPPER32[:26] + DIGITS, 10)}"
                            f"/B{r.chars(UPPER32[:26] + DIGITS, 10)}/{r.chars(ALNUM, 24)}"),
           oracle=(r"https://hooks\.slack\.com/services/T[A-Z0-9]{10}/B[A-Z0-9]{10}/[A-Za-z0-9]{24}\b",)),
    Family("stripe_secret_key", "secret", frozenset({"kv"}), ("stripe_secret_key", "stripe_api_key"),
           lambda r, v="": _whole(r.choice(("sk_live_", "rk_live_")) + r.chars(ALNUM, r.between(24, 40))),
           oracle=(r"\b[sr]k_live_[A-Za-z0-9]{24,99}\b",)),
    Family("google_api_key", "secret", frozenset({"kv"}), ("google_api_key", "maps_key"),
           lambda r, v="": _whole("AIza" + r.chars(ALNUM, 2) + r.chars(B64URL, 31) + r.chars(ALNUM, 2)),
           oracle=(r"\bAIza[A-Za-z0-9_\-]{35}(?![A-Za-z0-9_\-])",)),
    Family("jwt", "secret", frozenset({"kv"}), ("session_jwt", "id_jwt"), _jwt,
           oracle=(r"\beyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{20,}(?![A-Za-z0-9_\-])",)),
    Family("pem_private_key", "secret", frozenset({"block"}), ("private_key", "tls_key"), _private_pem,
           oracle=(r"-----BEGIN (?:RSA |EC |OPENSSH )?PRIVATE KEY-----[\s\S]*?-----END (?:RSA |EC |OPENSSH )?PRIVATE KEY-----",)),
    Family("openai_api_key", "secret", frozenset({"kv"}), ("openai_api_key", "llm_api_key"),
           lambda r, v="": _whole(r.choice(("sk-proj-", "sk-")) + r.chars(ALNUM, 20) + "T3BlbkFJ" + r.chars(ALNUM, 20)),
           oracle=(r"\bsk-(?:proj-)?[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}\b",)),
    Family("anthropic_api_key", "secret", frozenset({"kv"}), ("anthropic_api_key", "claude_key"),
           lambda r, v="": _whole("sk-ant-api03-" + r.chars(B64URL, 93) + "AA"),
           oracle=(r"\bsk-ant-api03-[A-Za-z0-9_\-]{93}AA(?![A-Za-z0-9_\-])",)),
    Family("twilio_api_key", "secret", frozenset({"kv"}), ("twilio_api_key", "twilio_key_sid"),
           lambda r, v="": _whole("SK" + r.chars(HEX, 32)),
           oracle=(r"\bSK[0-9a-f]{32}\b",)),
    Family("sendgrid_api_key", "secret", frozenset({"kv"}), ("sendgrid_api_key", "smtp_api_key"),
           lambda r, v="": _whole("SG." + r.chars(B64URL, 22) + "." + r.chars(B64URL, 42) + r.choice(ALNUM)),
           oracle=(r"\bSG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}(?![A-Za-z0-9_\-])",)),
    Family("connection_string_password", "secret", frozenset({"kv"}), ("database_url", "broker_url"),
           _conn_password,
           oracle=(r"(?<=\b(?:postgres(?:ql)?|mysql|mongodb\+srv|redis|amqp)://[A-Za-z0-9_.\-]*:)[^@\s/:]+(?=@)",)),
    Family("url_password", "secret", frozenset({"kv"}), ("git_remote", "upload_url"), _url_password,
           oracle=(r"(?<=\bhttps?://[A-Za-z0-9_.\-]+:)[^@\s/:]+(?=@)",)),
    Family("basic_auth", "secret", frozenset({"kv"}), ("authorization",), _basic,
           oracle=(r"(?<=\bBasic )[A-Za-z0-9+/]{8,}={0,2}",)),
    Family("bearer_token", "secret", frozenset({"kv"}), ("authorization",), _bearer,
           oracle=(r"(?<=\bBearer )[A-Za-z0-9\-._~+/]{20,}=*",)),
    Family("cli_password", "secret", frozenset({"shell"}), ("",), _cli_password,
           oracle=(r"(?<=\bmysql\b[^\n]*?\s-p)[^\s']+",
                   r"(?<=\bcurl\b[^\n]*?\s-u [^\s:]+:)[^\s]+",
                   r"(?<=\b(?:docker login\b[^\n]*?\s-p|sshpass -p) )[^\s]+")),
    Family("generic_secret_assignment", "secret", frozenset({"kv"}),
           ("password", "db_password", "secret", "client_secret", "token", "api_key"), _generic,
           oracle=(r"""(?i)(?<=(?<![A-Za-z0-9_])(?:password|db_password|secret|client_secret|token|api_key)["']?\s*[:=]\s*["']?)[A-Za-z0-9_\-.+!#%]{20,}""",)),
)


DECOYS: tuple[Family, ...] = (
    Family("aws_documented_example", "decoy", frozenset({"kv"}),
           ("aws_access_key_id", "aws_secret_access_key"),
           lambda r, v="": _whole(r.choice(("AKIAIOSFODNN7EXAMPLE", "AKIAI44QH8DHBEXAMPLE",
                                      "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"))),
           why="AWS's published documentation keys: every one ends in EXAMPLE or EXAMPLEKEY "
               "and authenticates nothing; a rule anchored only on AKIA or on 40 base64 "
               "characters destroys it."),
    Family("aws_non_credential_id", "decoy", frozenset({"kv"}), ("role_id", "principal_id", "user_id"),
           lambda r, v="": _whole(r.choice(("AROA", "AIDA", "ANPA", "AGPA")) + r.chars(UPPER32, 16)),
           why="IAM unique ids (AROA role, AIDA user, ANPA policy, AGPA group) share the "
               "20-character shape of an access key but only the AKIA/ASIA prefix grants access."),
    Family("git_sha_or_digest", "decoy", frozenset({"kv"}), ("commit", "image_digest", "checksum"),
           lambda r, v="": _whole(r.chars(HEX, 40) if r.chance(1, 2) else "sha256:" + r.chars(HEX, 64)),
           why="Commit SHAs and sha256: content digests are public content addresses: high "
               "entropy, lowercase hex, and harmless."),
    Family("uuid_request_id", "decoy", frozenset({"kv"}), ("request_id", "trace_id", "correlation_id"),
           lambda r, v="": _whole("-".join(r.chars(HEX, n) for n in (8, 4, 4, 4, 12))),
           why="Request and trace ids are random UUIDs logged to correlate events; they grant nothing."),
    Family("placeholder_value", "decoy", frozenset({"kv"}),
           ("password", "api_key", "secret", "token", "client_secret"),
           lambda r, v="": _whole(r.choice(("<YOUR_API_KEY>", "${DB_PASSWORD}", "changeme", "REPLACE_ME",
                                      "your-token-here", "{{ secrets.DEPLOY_TOKEN }}", "%(SECRET)s"))),
           why="Template placeholders under secret-sounding keys: the value is a variable "
               "reference or a dummy word, so there is nothing to redact."),
    Family("already_masked", "decoy", frozenset({"kv"}), ("password", "token", "api_key", "secret"),
           lambda r, v="": _whole(r.choice(("********", "[REDACTED]", "****" + r.chars(DIGITS, 4), "xxxx-xxxx",
                                      "<redacted>"))),
           why="Values that are already masked carry no secret; redacting them again deletes "
               "characters for nothing."),
    Family("keyword_setting", "decoy", frozenset({"kv"}),
           ("token_ttl",),
           lambda r, v="": (lambda k, v: Fragment(v, ((0, len(v)),), k))(*r.choice((
               ("token_ttl", r.choice(("3600", "900", "86400"))), ("password_policy", "strict"),
               ("secret_rotation_days", "30"), ("max_token_length", "4096"),
               ("password_min_length", "12"), ("token_endpoint", "/oauth/token")))),
           why="A secret keyword inside a longer setting name (token_ttl, password_policy): "
               "the value is a number, a policy name or a path, never a credential."),
    Family("public_key_material", "decoy", frozenset({"block"}), ("public_key", "ca_cert"),
           lambda r, v="": _whole(_pem(r, r.choice(("PUBLIC KEY", "CERTIFICATE", "RSA PUBLIC KEY")),
                                 r.between(2, 5))),
           why="Public keys and certificates are meant to be published; only PRIVATE KEY "
               "blocks are secret."),
    Family("ssh_public_key", "decoy", frozenset({"kv"}), ("authorized_key", "deploy_pubkey"),
           lambda r, v="": _whole(f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{r.chars(B64, 43)} {r.choice(USERS)}@ci"),
           why="An OpenSSH public key line: the AAAA... blob is public by design."),
    Family("publishable_key", "decoy", frozenset({"kv"}), ("stripe_publishable_key", "stripe_pk"),
           lambda r, v="": _whole(r.choice(("pk_live_", "pk_test_")) + r.chars(ALNUM, r.between(24, 40))),
           why="Stripe publishable keys (pk_) are embedded in web pages by design; only "
               "sk_/rk_ keys are secret."),
    Family("url_port_or_path_at", "decoy", frozenset({"kv"}), ("registry_url", "homepage", "proxy_url"),
           lambda r, v="": _whole(r.choice((
               f"https://{r.choice(HOSTS)}:{r.choice(('8443', '5000', '9090'))}/v2/@team/{r.choice(('ui', 'core'))}",
               f"https://{r.choice(HOSTS)}:{r.choice(('8080', '443'))}/users/@{r.choice(USERS)}",
               f"ssh://git@{r.choice(HOSTS)}:2222/infra.git",
               f"https://{r.choice(USERS)}@{r.choice(HOSTS)}/profile"))),
           why="A ':' followed by a port and an '@' in the path or before the host with no "
               "password: there is no userinfo password in the URL."),
    Family("twilio_account_sid", "decoy", frozenset({"kv"}), ("twilio_account_sid",),
           lambda r, v="": _whole("AC" + r.chars(HEX, 32)),
           why="A Twilio Account SID (AC...) identifies the account and is shown in URLs; "
               "the SK... API key is the credential."),
    Family("basic_realm_challenge", "decoy", frozenset({"kv"}), ("www_authenticate",),
           lambda r, v="": _whole(f'Basic realm={r.choice(("api", "registry", "admin"))}'),
           why="A WWW-Authenticate challenge names a realm, not credentials."),
    Family("subresource_integrity", "decoy", frozenset({"kv"}), ("integrity",),
           lambda r, v="": _whole("sha512-" + r.chars(B64, 86) + "=="),
           why="npm/HTML integrity hashes are long base64 but are public hashes of public files."),
)

FAMILIES: dict[str, Family] = {f.name: f for f in SECRETS + DECOYS}

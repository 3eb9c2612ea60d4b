"""Decoy families: values that look like secrets, or sit where secrets sit, and are
not. A careless rule destroys them; the oracle of every secret family leaves them.

corpus-v1's decoys are kept; corpus-v2 adds format-valid placeholders, vendors'
published example keys, test fixtures and public identifiers that share a secret's
prefix or shape.
"""

from __future__ import annotations

from ..rng import Rng
from .base import (
    ALNUM,
    B64,
    DIGITS,
    HEX,
    HOSTS,
    UPPER32,
    USERS,
    Family,
    Fragment,
    Make,
    bech32,
    pick,
    rbytes,
    whole,
)
from .examples import EXAMPLES, NEGATIVES

KV, BLOCK = frozenset({"kv"}), frozenset({"block"})


def _pem(r: Rng, label: str, lines: int) -> str:
    body = "\n".join(r.chars(B64, 64) for _ in range(lines)) + "\n" + r.chars(B64, r.between(8, 60))
    return f"-----BEGIN {label}-----\n{body}\n-----END {label}-----"


def _keyword_setting(r: Rng, v: str) -> Fragment:
    k, value = r.choice((
        ("token_ttl", r.choice(("3600", "900", "86400"))), ("password_policy", "strict"),
        ("secret_rotation_days", "30"), ("max_token_length", "4096"),
        ("password_min_length", "12"), ("token_endpoint", "/oauth/token")))
    return whole(value, k)


def _url_port_or_path_at(r: Rng, v: str) -> Fragment:
    return whole(r.choice((
        f"https://{r.choice(HOSTS)}:{r.choice(('8443', '5000', '9090'))}/v2/@team/{r.choice(('ui', 'core'))}",
        f"https://{r.choice(HOSTS)}:{r.choice(('8080', '443'))}/users/@{r.choice(USERS)}",
        f"ssh://git@{r.choice(HOSTS)}:2222/infra.git",
        f"https://{r.choice(USERS)}@{r.choice(HOSTS)}/profile")))


PLACEHOLDER_VARIANTS = ("github", "aws", "stripe", "slack", "gitlab", "npm", "huggingface", "digitalocean")
_PLACEHOLDERS = {
    "github": ("github_token", ("ghp_" + "x" * 36, "ghp_" + "X" * 36, "gho_" + "0" * 36)),
    "aws": ("aws_access_key_id", ("AKIAXXXXXXXXXXXXXXXX", "AKIA" + "X" * 12 + "XXXX", "ASIAXXXXXXXXXXXXXXXX")),
    "stripe": ("stripe_secret_key", ("sk_live_" + "0" * 24, "sk_test_" + "x" * 24, "rk_live_" + "0" * 99)),
    "slack": ("slack_bot_token", ("xoxb-000000000000-0000000000000-" + "x" * 24,
                                  "xoxp-0000000000-0000000000-0000000000-" + "0" * 32)),
    "gitlab": ("gitlab_token", ("glpat-" + "x" * 20, "glpat-" + "X" * 20, "gldt-" + "0" * 20)),
    "npm": ("npm_token", ("npm_" + "x" * 36, "npm_" + "0" * 36)),
    "huggingface": ("hf_token", ("hf_" + "x" * 34, "hf_" + "X" * 34)),
    "digitalocean": ("digitalocean_token", ("dop_v1_" + "0" * 64, "doo_v1_" + "0" * 64)),
}


def _placeholder(r: Rng, v: str) -> Fragment:
    key, values = _PLACEHOLDERS[pick(r, v, PLACEHOLDER_VARIANTS)]
    return whole(r.choice(values), key)


# Published by the vendors themselves, in documentation that anyone can read.
PUBLISHED_VARIANTS = ("stripe", "slack", "azure_emulator")
_AZURITE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


def _published(r: Rng, v: str) -> Fragment:
    variant = pick(r, v, PUBLISHED_VARIANTS)
    if variant == "stripe":
        return r.choice((whole("sk_test_4eC39HqLyjWDarjtT1zdp7dc", "stripe_secret_key"),
                         whole("pk_test_TYooMQauvdEDq54NiTphI7jx", "stripe_publishable_key")))
    if variant == "slack":
        return whole("xoxb-not-a-real-token-this-will-not-work", "slack_bot_token")
    return whole(r.choice(("DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey="
                           + _AZURITE_KEY + ";", "UseDevelopmentStorage=true")),
                 "azure_storage_connection_string")


FIXTURE_VARIANTS = ("stripe", "recaptcha")


def _fixture(r: Rng, v: str) -> Fragment:
    if pick(r, v, FIXTURE_VARIANTS) == "stripe":
        return whole(r.choice(("tok_visa", "tok_mastercard", "pm_card_visa", "pm_card_visa_chargeDeclined",
                               "tok_chargeDeclined")), "stripe_test_token")
    return r.choice((whole("6LeIxAcTAAAAAJcZVRqyHh71UMIEGNQ_MXjiZKhI", "recaptcha_site_key"),
                     whole("6LeIxAcTAAAAAGG-vFI1TnRWxMZNFuojJ4WifJWe", "recaptcha_secret_key")))


CLIENT_ID_VARIANTS = ("github_app", "square_app", "slack_client")


def _client_id(r: Rng, v: str) -> Fragment:
    variant = pick(r, v, CLIENT_ID_VARIANTS)
    if variant == "github_app":
        return whole("Iv1." + r.chars(HEX, 16), "github_client_id")
    if variant == "square_app":
        return whole("sq0idp-" + r.chars(ALNUM + "-_", 22), "square_application_id")
    return whole(r.chars(DIGITS, 12) + "." + r.chars(DIGITS, 13), "slack_client_id")


def _age_recipient(r: Rng, v: str) -> Fragment:
    return whole(bech32("age", rbytes(r, 32)))


def _family(name: str, contexts: frozenset[str], keys: tuple[str, ...], make: Make, why: str,
            variants: tuple[str, ...] = ("",)) -> Family:
    return Family(name, "decoy", contexts, keys, make, why=why, variants=variants,
                  examples=EXAMPLES[name], negatives=NEGATIVES[name])


DECOYS: tuple[Family, ...] = (
    # --- corpus-v1
    _family("aws_documented_example", KV, ("aws_access_key_id", "aws_secret_access_key"),
            lambda r, v: whole(r.choice(("AKIAIOSFODNN7EXAMPLE", "AKIAI44QH8DHBEXAMPLE",
                                         "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"))),
            "AWS's published documentation keys: every one ends in EXAMPLE or EXAMPLEKEY "
            "and authenticates nothing; a rule anchored only on AKIA or on 40 base64 "
            "characters destroys it."),
    _family("aws_non_credential_id", KV, ("role_id", "principal_id", "user_id"),
            lambda r, v: whole(r.choice(("AROA", "AIDA", "ANPA", "AGPA")) + r.chars(UPPER32, 16)),
            "IAM unique ids (AROA role, AIDA user, ANPA policy, AGPA group) share the "
            "20-character shape of an access key but only the AKIA/ASIA prefix grants access."),
    _family("git_sha_or_digest", KV, ("commit", "image_digest", "checksum"),
            lambda r, v: whole(r.chars(HEX, 40) if r.chance(1, 2) else "sha256:" + r.chars(HEX, 64)),
            "Commit SHAs and sha256: content digests are public content addresses: high "
            "entropy, lowercase hex, and harmless."),
    _family("uuid_request_id", KV, ("request_id", "trace_id", "correlation_id"),
            lambda r, v: whole("-".join(r.chars(HEX, n) for n in (8, 4, 4, 4, 12))),
            "Request and trace ids are random UUIDs logged to correlate events; they grant nothing."),
    _family("placeholder_value", KV, ("password", "api_key", "secret", "token", "client_secret"),
            lambda r, v: whole(r.choice(("<YOUR_API_KEY>", "${DB_PASSWORD}", "changeme", "REPLACE_ME",
                                         "your-token-here", "{{ secrets.DEPLOY_TOKEN }}", "%(SECRET)s"))),
            "Template placeholders under secret-sounding keys: the value is a variable "
            "reference or a dummy word, so there is nothing to redact."),
    _family("already_masked", KV, ("password", "token", "api_key", "secret"),
            lambda r, v: whole(r.choice(("********", "[REDACTED]", "****" + r.chars(DIGITS, 4), "xxxx-xxxx",
                                         "<redacted>"))),
            "Values that are already masked carry no secret; redacting them again deletes "
            "characters for nothing."),
    _family("keyword_setting", KV, ("token_ttl",), _keyword_setting,
            "A secret keyword inside a longer setting name (token_ttl, password_policy): "
            "the value is a number, a policy name or a path, never a credential."),
    _family("public_key_material", BLOCK, ("public_key", "ca_cert"),
            lambda r, v: whole(_pem(r, r.choice(("PUBLIC KEY", "CERTIFICATE", "RSA PUBLIC KEY")),
                                    r.between(2, 5))),
            "Public keys and certificates are meant to be published; only PRIVATE KEY "
            "blocks are secret."),
    _family("ssh_public_key", KV, ("authorized_key", "deploy_pubkey"),
            lambda r, v: whole(f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{r.chars(B64, 43)} {r.choice(USERS)}@ci"),
            "An OpenSSH public key line: the AAAA... blob is public by design."),
    _family("publishable_key", KV, ("stripe_publishable_key", "stripe_pk"),
            lambda r, v: whole(r.choice(("pk_live_", "pk_test_")) + r.chars(ALNUM, r.between(24, 40))),
            "Stripe publishable keys (pk_) are embedded in web pages by design; only "
            "sk_/rk_ keys are secret."),
    _family("url_port_or_path_at", KV, ("registry_url", "homepage", "proxy_url"), _url_port_or_path_at,
            "A ':' followed by a port and an '@' in the path or before the host with no "
            "password: there is no userinfo password in the URL."),
    _family("twilio_account_sid", KV, ("twilio_account_sid",), lambda r, v: whole("AC" + r.chars(HEX, 32)),
            "A Twilio Account SID (AC...) identifies the account and is shown in URLs; "
            "the SK... API key is the credential."),
    _family("basic_realm_challenge", KV, ("www_authenticate",),
            lambda r, v: whole(f'Basic realm={r.choice(("api", "registry", "admin"))}'),
            "A WWW-Authenticate challenge names a realm, not credentials."),
    _family("subresource_integrity", KV, ("integrity",), lambda r, v: whole("sha512-" + r.chars(B64, 86) + "=="),
            "npm/HTML integrity hashes are long base64 but are public hashes of public files."),
    # --- corpus-v2
    _family("format_valid_placeholder", KV, ("github_token", "aws_access_key_id", "stripe_secret_key"),
            _placeholder,
            "A vendor's exact prefix and length with a body of x, X or 0: documentation and "
            "config templates write these where the real token goes. It authenticates nothing; "
            "a rule that checks only prefix and length destroys it.", PLACEHOLDER_VARIANTS),
    _family("vendor_published_example", KV, ("stripe_secret_key", "slack_bot_token"), _published,
            "Keys that vendors print in their own documentation (Stripe's sample test key, "
            "Slack's 'not-a-real-token', the Azure Storage emulator's well-known account key): "
            "public knowledge, shared by every reader, granting nothing of anyone's.",
            PUBLISHED_VARIANTS),
    _family("test_fixture", KV, ("stripe_test_token", "recaptcha_site_key"), _fixture,
            "Test fixtures that vendors document for test suites: Stripe's test card tokens "
            "(tok_visa, pm_card_visa) and Google's reCAPTCHA test keys, which always pass and "
            "protect nothing.", FIXTURE_VARIANTS),
    _family("public_client_id", KV, ("github_client_id", "square_application_id"), _client_id,
            "Public OAuth client and application ids (GitHub App Iv1., Square sq0idp-, Slack "
            "client ids): they ship inside apps and identify, but never authenticate, the client.",
            CLIENT_ID_VARIANTS),
    _family("age_recipient", KV, ("age_recipient", "sops_age_recipients"), _age_recipient,
            "An age recipient (age1…) is a public key: files are encrypted to it, and only the "
            "AGE-SECRET-KEY-1… identity is secret."),
)

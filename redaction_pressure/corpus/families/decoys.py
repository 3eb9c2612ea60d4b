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
    PUBLIC_KEY_KINDS,
    UPPER32,
    USERS,
    Family,
    Fragment,
    Make,
    b64,
    bech32,
    certificate_der,
    pem_text,
    pick,
    public_der,
    public_key,
    rbytes,
    ssh_ed25519_public,
    uuid4_text,
    whole,
)
from .examples import EXAMPLES, NEGATIVES

KV, BLOCK, SHELL, K8S = frozenset({"kv"}), frozenset({"block"}), frozenset({"shell"}), frozenset({"k8s"})
NPMRC, PYPIRC = frozenset({"npmrc"}), frozenset({"pypirc"})


PUBLIC_PEM_LABELS = ("PUBLIC KEY", "CERTIFICATE", "RSA PUBLIC KEY")


def _public_key_material(r: Rng, v: str) -> Fragment:
    """A real public key (SubjectPublicKeyInfo of an RSA, P-256 or Ed25519 key; PKCS#1
    for RSA PUBLIC KEY) or certificate, whose body is DER like a private key's."""
    label = r.choice(PUBLIC_PEM_LABELS)
    if label == "CERTIFICATE":
        return whole(pem_text(label, certificate_der(r)))
    if label == "RSA PUBLIC KEY":
        return whole(pem_text(label, public_der(public_key(r, "rsa"), pkcs1=True)))
    return whole(pem_text(label, public_der(public_key(r, r.choice(PUBLIC_KEY_KINDS)))))


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


# Placeholders of a vendor's format: its prefix and separators with '#' where the
# random body goes. Written from the vendors' documented formats (facts), one per
# family a scanner recognises by shape; the bodies are filled as placeholders are.
SHAPES: dict[str, tuple[str, ...]] = {
    "aws_access_key_id": ("AKIA" + "#" * 16, "ASIA" + "#" * 16),
    "aws_secret_access_key": ("#" * 40,),
    "gcp_api_key": ("AIzaSy" + "#" * 33,),
    "azure_ad_client_secret": ("###8Q~" + "#" * 34,),
    "digitalocean_token": ("dop_v1_" + "#" * 64,),
    "heroku_api_key": ("HRKU-AA" + "#" * 58,),
    "databricks_token": ("dapi" + "#" * 32,),
    "github_token": ("ghp_" + "#" * 36, "gho_" + "#" * 36),
    "github_fine_grained_pat": ("github_pat_11" + "#" * 20 + "_" + "#" * 59,),
    "gitlab_token": ("glpat-" + "#" * 20,),
    "npm_token": ("npm_" + "#" * 36,),
    "pypi_token": ("pypi-AgEIcHlwaS5vcmc" + "#" * 80,),
    "rubygems_api_key": ("rubygems_" + "#" * 48,),
    "docker_hub_pat": ("dckr_pat_" + "#" * 27,),
    "slack_token": ("xoxb-" + "#" * 12 + "-" + "#" * 13 + "-" + "#" * 24, "xoxp-" + "#" * 10 + "-" + "#" * 10 + "-"
                    + "#" * 10 + "-" + "#" * 32),
    "slack_webhook": ("https://hooks.slack.com/services/T########/B########/" + "#" * 24,),
    "discord_webhook": ("https://discord.com/api/webhooks/" + "#" * 19 + "/" + "#" * 68,),
    "telegram_bot_token": ("#" * 10 + ":AA" + "#" * 33,),
    "stripe_secret_key": ("sk_live_" + "#" * 24, "sk_test_" + "#" * 24, "rk_live_" + "#" * 99),
    "square_token": ("EAAA" + "#" * 60,),
    "shopify_token": ("shpat_" + "#" * 32,),
    "openai_api_key": ("sk-proj-" + "#" * 48, "sk-" + "#" * 48),
    "anthropic_api_key": ("sk-ant-api03-" + "#" * 93 + "AA",),
    "huggingface_token": ("hf_" + "#" * 34,),
    "groq_api_key": ("gsk_" + "#" * 52,),
    "replicate_api_token": ("r8_" + "#" * 37,),
    "sendgrid_api_key": ("SG." + "#" * 22 + "." + "#" * 43,),
    "mailgun_api_key": ("key-" + "#" * 32,),
    "mailchimp_api_key": ("#" * 32 + "-us6",),
    "twilio_api_key": ("SK" + "#" * 32,),
    "sentry_auth_token": ("sntryu_" + "#" * 64,),
    "datadog_api_key": ("#" * 32,),
    "vault_token": ("hvs." + "#" * 90,),
    "age_secret_key": ("AGE-SECRET-KEY-1" + "#" * 58,),
}
PLACEHOLDER_TARGETS = frozenset(SHAPES)
_SEQUENTIAL = "1234567890abcdefghijklmnopqrstuvwxyz"


def _placeholder(r: Rng, v: str) -> Fragment:
    """A placeholder of family ``v``'s format: its prefix with the body filled by x, X, 0
    or * (documentation and .env.example files), one repeated character, or a run of
    the alphabet (``1234567890abcdef...``); decimal-only bodies with 0."""
    shape = r.choice(SHAPES[pick(r, v, tuple(SHAPES))])
    kind = r.below(6)
    if kind < 4:
        body = "xX0*"[kind] * shape.count("#")
    elif kind == 4:
        body = r.choice("aAxz7") * shape.count("#")
    else:  # from the start of the digits or of the letters, as people type them
        run = r.choice((_SEQUENTIAL, _SEQUENTIAL[10:] + _SEQUENTIAL[:10]))
        body = (run * (shape.count("#") // len(run) + 1))[:shape.count("#")]
        body = body if r.chance(1, 2) else body.upper()
    chars = iter(body)
    return whole("".join(next(chars) if c == "#" else c for c in shape))


# From level 3 (``Level.placeholder_kinds``) a stream's placeholders come in kinds, each
# drawn once per stream and format and shown beside a real secret of that format:
PLACEHOLDER_KINDS = ("fill", "repeat", "run", "mixed")
PLACEHOLDER_KIND_WORDS = {
    "fill": "filled with x, X, 0 or * throughout", "repeat": "one other character repeated",
    "run": "a run of the alphabet in one case (1234567890abcdef..., ABCDEF...)",
    "mixed": "a run through both cases (ABC...XYZabc...xyz0123...)"}
_MIXED = ("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")


def placeholder_run(r: Rng, kind: str, alphabet: str = "") -> str:
    """What a placeholder body of ``kind`` cycles through, drawn once: a fill character
    (x, X, 0, *), one other repeated character, a run of the alphabet in one case, or a
    run through both cases. ``alphabet``, a house format's body alphabet, gives the
    repeated character and the one-case run (its letters and digits in order, either
    first), so those placeholders are made of the credential's own characters; every run
    starts at its alphabet's start, so it holds abcdefgh, ABCDEFGH, 01234567 or 12345678."""
    if kind == "fill":
        return r.choice("xX0*")
    if kind == "repeat":
        return r.choice([c for c in alphabet if c not in "xX0"] if alphabet else "aAz7")
    if kind == "mixed":
        return r.choice(_MIXED)
    if alphabet:
        digits = "".join(c for c in alphabet if c.isdigit())
        letters = "".join(c for c in alphabet if not c.isdigit())
        if letters.lower() != letters and letters.upper() != letters:  # both cases: one of them
            letters = r.choice((letters.lower(), letters.upper()))[:len(letters) // 2]
        return r.choice((digits + letters, letters + digits)) if digits and letters else alphabet
    run = r.choice((_SEQUENTIAL, _SEQUENTIAL[10:] + _SEQUENTIAL[:10]))
    return run if r.chance(1, 2) else run.upper()


def fill_placeholder(shape: str, run: str) -> str:
    """``shape`` (``#`` where the body goes) with its body written by cycling ``run``."""
    n = shape.count("#")
    chars = iter((run * (n // len(run) + 1))[:n])
    return "".join(next(chars) if c == "#" else c for c in shape)


def vendor_placeholder(r: Rng, vendor: str, kind: str) -> Family:
    """One placeholder of vendor family ``vendor``'s format and of ``kind``, drawn once
    (shape and body): a stream writes it wherever it writes that placeholder, as a
    template's line is copied from file to file. A decoy of ``format_valid_placeholder``."""
    fragment = whole(fill_placeholder(r.choice(SHAPES[vendor]), placeholder_run(r, kind)))  # immutable: shared
    return Family(PLACEHOLDERS.name, "decoy", PLACEHOLDERS.contexts_of(vendor), PLACEHOLDERS.keys,
                  lambda r, v: fragment, why=PLACEHOLDERS.why, variants=(vendor,),
                  variant_contexts=PLACEHOLDERS.variant_contexts)
# Published by the vendors themselves, in documentation that anyone can read. One value
# per variant, so a stream holds one of them and shows the value it tests (corpus-v6 drew the
# value per record: Stripe's sample secret key and the Azure emulator's account key were
# tested in level-5 dev streams that showed only Stripe's publishable sample or the
# emulator's short form, and nothing in the prompt said the tested value was no secret).
PUBLISHED_VARIANTS = ("stripe_secret", "stripe_publishable", "slack", "azure_emulator", "azure_dev_storage")
_AZURITE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
_PUBLISHED = {
    "stripe_secret": ("sk_test_4eC39HqLyjWDarjtT1zdp7dc", "stripe_secret_key"),
    "stripe_publishable": ("pk_test_TYooMQauvdEDq54NiTphI7jx", "stripe_publishable_key"),
    "slack": ("xoxb-not-a-real-token-this-will-not-work", "slack_bot_token"),
    "azure_emulator": ("DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + _AZURITE_KEY + ";",
                       "azure_storage_connection_string"),
    "azure_dev_storage": ("UseDevelopmentStorage=true", "azure_storage_connection_string"),
}


def _published(r: Rng, v: str) -> Fragment:
    return whole(*_PUBLISHED[pick(r, v, PUBLISHED_VARIANTS)])


# AWS's documentation keys, one per variant and each under its own kind of key, as the
# published examples are (corpus-v7 drew one of the three per record, under either key:
# a stream could test an example key it never showed, in 4 to 11 of 64 dev tasks a level).
_AWS_EXAMPLES = {
    "access_key_id": ("AKIAIOSFODNN7EXAMPLE", "aws_access_key_id"),
    "access_key_id_alternate": ("AKIAI44QH8DHBEXAMPLE", "aws_access_key_id"),
    "secret_access_key": ("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_access_key"),
}
AWS_EXAMPLE_VARIANTS = tuple(_AWS_EXAMPLES)


def _aws_example(r: Rng, v: str) -> Fragment:
    return whole(*_AWS_EXAMPLES[pick(r, v, AWS_EXAMPLE_VARIANTS)])


# Vendors' documented test values, one per variant as the published examples are.
_FIXTURES = {
    **{token: (token, "stripe_test_token") for token in ("tok_visa", "tok_mastercard", "pm_card_visa",
                                                          "pm_card_visa_chargeDeclined", "tok_chargeDeclined")},
    "recaptcha_site": ("6LeIxAcTAAAAAJcZVRqyHh71UMIEGNQ_MXjiZKhI", "recaptcha_site_key"),
    "recaptcha_secret": ("6LeIxAcTAAAAAGG-vFI1TnRWxMZNFuojJ4WifJWe", "recaptcha_secret_key"),
}
FIXTURE_VARIANTS = tuple(_FIXTURES)


def _fixture(r: Rng, v: str) -> Fragment:
    return whole(*_FIXTURES[pick(r, v, FIXTURE_VARIANTS)])


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
            variants: tuple[str, ...] = ("",),
            variant_contexts: tuple[tuple[str, frozenset[str]], ...] = ()) -> Family:
    return Family(name, "decoy", contexts, keys, make, why=why, variants=variants,
                  examples=EXAMPLES[name], negatives=NEGATIVES[name], variant_contexts=variant_contexts)


def _k8s_config(r: Rng, v: str) -> Fragment:
    key = r.choice(("username", "host", "port", "database", "ca.crt"))
    if key == "ca.crt":
        raw = pem_text("CERTIFICATE", certificate_der(r, r.choice(("ca", "ec", "ed25519")))) + "\n"
    else:
        raw = {"username": r.choice(USERS), "host": r.choice(HOSTS), "port": r.choice(("5432", "3306", "6379")),
               "database": r.choice(("orders", "app", "analytics"))}[key]
    return whole(b64(raw.encode()), key=key)


CLI_REFERENCE_VARIANTS = ("mysql", "docker", "sshpass", "curl")


def _cli_reference(r: Rng, v: str) -> Fragment:
    host, user = r.choice(HOSTS), r.choice(USERS)
    variant = pick(r, v, CLI_REFERENCE_VARIANTS)
    if variant == "mysql":
        text = r.choice((f'mysql -h {host} -u {user} -p"$MYSQL_PWD" -e \'SELECT 1\'',
                         f"mysqldump -h {host} -u {user} -p$DB_PASSWORD orders > orders.sql"))
    elif variant == "docker":
        text = r.choice((f'echo "$REGISTRY_TOKEN" | docker login -u {user} --password-stdin {r.choice(HOSTS)}',
                         f'docker login -u {user} -p "$DOCKER_PASSWORD" {r.choice(HOSTS)}'))
    elif variant == "sshpass":
        text = f"SSHPASS=$DEPLOY_PASS sshpass -e ssh {user}@{host}"
    else:
        text = f"curl -sS -u {user}:{r.choice(('password', 'changeme'))} https://{host}/api/health"
    return whole(text)


PLACEHOLDERS = _family(
    "format_valid_placeholder", KV | NPMRC | PYPIRC, ("github_token", "aws_access_key_id", "stripe_secret_key"),
    _placeholder,
    "A vendor's exact prefix and length with a placeholder body (x, X, 0 or * throughout, one "
    "repeated character, or a run of the alphabet): documentation, .env.example files and config "
    "templates write these where the real token goes, under the token's own key. It "
    "authenticates nothing; a rule that checks only prefix and length destroys it.",
    tuple(SHAPES), variant_contexts=tuple((name, NPMRC | KV if name == "npm_token" else
                                           PYPIRC | KV if name == "pypi_token" else KV) for name in SHAPES))


DECOYS: tuple[Family, ...] = (
    # --- corpus-v1
    _family("aws_documented_example", KV, ("aws_access_key_id", "aws_secret_access_key"), _aws_example,
            "AWS's published documentation keys: every one ends in EXAMPLE or EXAMPLEKEY "
            "and authenticates nothing; a rule anchored only on AKIA or on 40 base64 "
            "characters destroys it.", AWS_EXAMPLE_VARIANTS),
    _family("aws_non_credential_id", KV, ("role_id", "principal_id", "user_id"),
            lambda r, v: whole(r.choice(("AROA", "AIDA", "ANPA", "AGPA")) + r.chars(UPPER32, 16)),
            "IAM unique ids (AROA role, AIDA user, ANPA policy, AGPA group) share the "
            "20-character shape of an access key but only the AKIA/ASIA prefix grants access."),
    _family("git_sha_or_digest", KV, ("commit", "image_digest", "checksum"),
            lambda r, v: whole(r.chars(HEX, 40) if r.chance(1, 2) else "sha256:" + r.chars(HEX, 64)),
            "Commit SHAs and sha256: content digests are public content addresses: high "
            "entropy, lowercase hex, and harmless."),
    _family("uuid_request_id", KV, ("request_id", "trace_id", "correlation_id"),
            lambda r, v: whole(uuid4_text(r)),
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
            _public_key_material,
            "Public keys and certificates are meant to be published; only PRIVATE KEY "
            "blocks are secret."),
    _family("ssh_public_key", KV, ("authorized_key", "deploy_pubkey"),
            lambda r, v: whole(f"{ssh_ed25519_public(r)} {r.choice(USERS)}@ci"),
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
    PLACEHOLDERS,
    _family("k8s_config_data", K8S, ("username", "host", "port", "database", "ca.crt"), _k8s_config,
            "Configuration a Kubernetes Secret carries beside its credentials (a user name, a host, a "
            "port, a database name, the CA's public certificate): base64-encoded like the password, "
            "but not secret; a rule that removes every data: value destroys it."),
    _family("cli_secret_reference", SHELL, ("",), _cli_reference,
            "A command that takes its password from a variable (mysql -p\"$MYSQL_PWD\", docker login "
            "--password-stdin, sshpass -e) or shows a placeholder word (curl -u admin:password): the "
            "secret is not on the command line.", CLI_REFERENCE_VARIANTS),
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

"""The secret families of corpus-v3, by how often their kind leaks: cloud, VCS and CI,
package registries, chat, payments, LLM APIs, email and SaaS, secret stores,
databases, tokens and keys, generic assignments, and credentials in headers and
command lines.

Every oracle removes exactly its family's spans. Where the vendor has a prefix, the
oracle starts with it (the corpus skips a record that lacks a pattern's required
literal, and `regex` searches for a leading literal quickly); only the two families
recognised by their key alone (AWS secret keys and generic assignments) cannot. Oracles
leave every decoy alone: placeholders (runs of x, X or 0), vendors' published example
keys and test fixtures are excluded by lookaheads, and so is every placeholder body
(`_real`): six equal characters in a row, or a run of the alphabet.
"""

from __future__ import annotations

from . import make as mk
from .base import Family, Make
from .examples import EXAMPLES, NEGATIVES

KV, BLOCK, SHELL, K8S = frozenset({"kv"}), frozenset({"block"}), frozenset({"shell"}), frozenset({"k8s"})
# The runs of an alphabet that placeholder bodies are written with (and random bodies
# never hold: `base.random_body`).
SEQUENCES = ("abcdefgh", "ABCDEFGH", "01234567", "12345678")


def _real(cls: str) -> str:
    """From here on, no placeholder body: no six equal characters of ``cls`` in a row
    (xxxxxx, 000000, aaaaaa) and no run of the alphabet (abcdefgh, 12345678). Uses
    group 1: once per pattern."""
    return f"(?!{cls}*?(?:({cls})\\1{{5}}|{'|'.join(SEQUENCES)}))"


# Two patterns, one per key case, so each has a literal that the corpus prefilters by.
_AWS_SECRET = rf"(?![A-Za-z0-9/+]*EXAMPLE){_real('[A-Za-z0-9/+]')}[A-Za-z0-9/+]{{40}}(?![A-Za-z0-9/+=])"
# A value, not a placeholder word (your_api_key_here, REPLACE_WITH_YOUR_TOKEN): a run of
# lower-case or upper-case letters, '_' and '-' alone is a word, whatever its length.
_GENERIC_VALUE = (r"(?![a-z_-]+(?![A-Za-z0-9+/=_.!#%~-])|[A-Z_-]+(?![A-Za-z0-9+/=_.!#%~-]))"
                  + _real("[A-Za-z0-9+/=_.!#%~-]") + r"[A-Za-z0-9+/=_.!#%~-]{16,}(?![^\s\"',;&)}\]])")
# Every name of mk.GENERIC_KEYS, folded into one short expression (the answer schema caps
# a pattern at 512 characters); the tests check it takes each key and no near-miss key.
_GENERIC_KEYS = (r"(?i:(?:(?:db|admin|root|smtp|redis|ldap_bind|mail|service)_)?pass(?:wd|word)?|pwd"
                 r"|(?:(?:client|app|api|consumer|session|cookie|jwt|webhook)_)?secret(?:_key|_token)?"
                 r"|(?:(?:auth|access|refresh|api)_)?token|api_?key|(?:encryption|signing|master)_key)")
_ASSIGN = r"""["']?[ \t]*[:=][ \t]*["']?"""
# A URL's password that is no password: a placeholder word, a variable, a template.
_NOT_A_PLACEHOLDER_PASSWORD = r"(?!(?:password|changeme|secret|pass|PASSWORD)@|\$|%24|<|%3C)"
# A literal argument, not a variable ($VAR, "$VAR") nor a placeholder word.
_LITERAL_ARG = r"""(?!["']?\$|(?:password|changeme|secret|pass)(?![^\s']))[^\s']+"""


def _family(name: str, keys: tuple[str, ...], make: Make, oracle: tuple[str, ...], why: str,
            variants: tuple[str, ...] = ("",), contexts: frozenset[str] = KV, hints: tuple[str, ...] = (),
            hints_anchor: bool = False, line_gate: str = "",
            variant_contexts: tuple[tuple[str, frozenset[str]], ...] = ()) -> Family:
    return Family(name, "secret", contexts, keys, make, oracle=oracle, why=why, variants=variants,
                  examples=EXAMPLES[name], negatives=NEGATIVES[name], hints=hints, hints_anchor=hints_anchor,
                  line_gate=line_gate, variant_contexts=variant_contexts)


SECRETS: tuple[Family, ...] = (
    # --- cloud
    _family("aws_access_key_id", ("aws_access_key_id", "aws_key_id"), mk.aws_key_id,
            (rf"\bA(?:KIA|SIA|BIA|CCA|3T[A-Z0-9])(?![A-Z2-7]*?EXAMPLE){_real('[A-Z2-7]')}[A-Z2-7]{{16}}\b",),
            "Identifies an AWS access key (AKIA long-term, ASIA temporary, ABIA/ACCA/A3T other "
            "issuers); with its secret it signs API calls, and alone it names the account.",
            mk.AWS_ID_VARIANTS),
    _family("aws_secret_access_key", ("aws_secret_access_key", "aws_secret_key"), mk.aws_secret,
            (rf"(?<=(?<![A-Za-z0-9_.-])aws_secret_(?:access_)?key{_ASSIGN}){_AWS_SECRET}",
             rf"(?<=(?<![A-Za-z0-9_.-])AWS_SECRET_(?:ACCESS_)?KEY{_ASSIGN}){_AWS_SECRET}"),
            "Signs AWS API requests as the key's IAM principal. 40 base64 characters with no "
            "prefix: only the key it sits under tells it apart."),
    _family("gcp_api_key", ("google_api_key", "maps_api_key", "firebase_api_key"), mk.gcp_api_key,
            (rf"\bAIza{_real('[A-Za-z0-9_-]')}[A-Za-z0-9_-]{{35}}(?![A-Za-z0-9_-])",),
            "A Google Cloud API key (AIzaSy + 33 characters); bills the project for any API it is "
            "not restricted from."),
    _family("gcp_service_account_key", ("private_key",), mk.gcp_service_account_key,
            (r"-----BEGIN PRIVATE KEY-----\\n[A-Za-z0-9+/=\\]+?-----END PRIVATE KEY-----\\n",),
            "The private_key of a service-account JSON key file (PKCS#8 with JSON-escaped newlines): "
            "signs tokens as the service account. Also set, escaped the same way, as an environment "
            "variable (GOOGLE_PRIVATE_KEY=\"-----BEGIN PRIVATE KEY-----\\n...\").",
            contexts=frozenset({"gcp_sa", "escaped"})),
    _family("azure_ad_client_secret", ("azure_client_secret", "arm_client_secret"), mk.azure_client_secret,
            (rf"(?<![A-Za-z0-9_~.-])(?=[A-Za-z0-9_~.]{{3}}[0-9]Q~){_real('[A-Za-z0-9_~.-]')}[A-Za-z0-9_~.]{{3}}[0-9]Q~[A-Za-z0-9_~.-]{{34}}"
             r"(?![A-Za-z0-9_~.-])",),
            "An Entra ID (Azure AD) application client secret (…Q~…, 40 characters): signs in as the app."),
    _family("azure_storage_account_key", ("azure_storage_connection_string", "storage_connection"),
            mk.azure_storage,
            (r"(?<=AccountKey=)(?!Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==)"
             rf"{_real('[A-Za-z0-9+/]')}[A-Za-z0-9+/]{{86}}==",),
            "The AccountKey of a storage connection string (64 bytes, base64): full control of the "
            "storage account. The rest of the string is configuration."),
    _family("digitalocean_token", ("digitalocean_token", "do_token"), mk.digitalocean,
            (rf"\bdo[por]_v1_{_real('[a-f0-9]')}[a-f0-9]{{64}}\b",),
            "DigitalOcean personal (dop_v1_), OAuth (doo_v1_) and refresh (dor_v1_) tokens.",
            mk.DO_VARIANTS),
    _family("heroku_api_key", ("heroku_api_key", "heroku_token"), mk.heroku,
            (rf"\bHRKU-AA{_real('[A-Za-z0-9_-]')}[A-Za-z0-9_-]{{58}}(?![A-Za-z0-9_-])",),
            "A Heroku platform API token (HRKU-AA…): acts as the user on every app they can reach."),
    _family("databricks_token", ("databricks_token", "dbx_token"), mk.databricks,
            (rf"\bdapi{_real('[a-f0-9]')}[a-f0-9]{{32}}(?:-[0-9])?\b",),
            "A Databricks personal access token (dapi + 32 hex, sometimes -N).", mk.DATABRICKS_VARIANTS),
    # --- VCS and CI
    _family("github_token", ("github_token", "gh_token"), mk.github_classic,
            (rf"\bgh(?:[pousr]_{_real('[A-Za-z0-9]')}(?:(?<=r_)[A-Za-z0-9]{{76}}|(?<!r_)[A-Za-z0-9]{{36}})\b"
             r"|s_[1-9][0-9]{3,9}_eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43,}(?![A-Za-z0-9_.-]))",),
            "GitHub personal (ghp_), OAuth (gho_), user-to-server (ghu_), server-to-server (ghs_) and "
            "refresh (ghr_) tokens: 30 random base62 characters and a CRC32 checksum in 6 more, 76 "
            "characters for a refresh token; since 2026 a server-to-server token may be stateless, "
            "ghs_APPID_JWT (about 520 characters, two dots).",
            mk.GITHUB_VARIANTS),
    _family("github_fine_grained_pat", ("github_pat", "gh_pat"), mk.github_fine_grained,
            (rf"\bgithub_pat_{_real('[A-Za-z0-9_]')}[A-Za-z0-9]{{22}}_[A-Za-z0-9]{{59}}\b",),
            "A fine-grained GitHub personal access token."),
    _family("gitlab_token", ("gitlab_token", "ci_job_token_override"), mk.gitlab,
            (rf"\bgl(?:pat|dt|rt|ft)-{_real('[A-Za-z0-9_-]')}"
             r"(?:[A-Za-z0-9_-]{20}|(?<=glpat-)[A-Za-z0-9_-]{27,300}\.01\.[0-9a-z]{9})(?![A-Za-z0-9_-])",
             rf"\bglptt-{_real('[0-9a-f]')}[0-9a-f]{{40}}\b"),
            "GitLab personal (glpat-), deploy (gldt-), runner (glrt-), feed (glft-) and pipeline "
            "trigger (glptt-) tokens; a routable personal token (GitLab's default) carries its routing "
            "in base64url, then .01., its length and a CRC32.", mk.GITLAB_VARIANTS),
    # --- package registries
    _family("npm_token", ("npm_token", "_authtoken"), mk.npm,
            (rf"\bnpm_{_real('[A-Za-z0-9]')}[A-Za-z0-9]{{36}}\b",),
            "An npm access token (npm_ + 30 base62 characters and a CRC32 checksum in 6 more, as GitHub's): "
            "publishes packages as its owner.", contexts=KV | {"npmrc"}),
    _family("pypi_token", ("pypi_token", "twine_password", "pypi_api_token"), mk.pypi,
            (rf"\bpypi-AgE(?:IcHlwaS5vcmc|NdGVzdC5weXBpLm9yZw){_real('[A-Za-z0-9_-]')}[A-Za-z0-9_-]{{50,}}",),
            "A PyPI (or TestPyPI) API token: a macaroon whose header names the index, so it always "
            "starts pypi-AgEIcHlwaS5vcmc.", mk.PYPI_VARIANTS, contexts=KV | {"pypirc"}),
    _family("rubygems_api_key", ("rubygems_api_key", "gem_host_api_key"), mk.rubygems,
            (rf"\brubygems_{_real('[a-f0-9]')}[a-f0-9]{{48}}\b",), "A RubyGems.org API key: pushes gems."),
    _family("docker_hub_pat", ("docker_hub_token", "dockerhub_pat"), mk.docker_hub,
            (rf"\bdckr_pat_{_real('[A-Za-z0-9_-]')}[A-Za-z0-9_-]{{27}}(?![A-Za-z0-9_-])",),
            "A Docker Hub personal access token: pulls and pushes the account's images."),
    # --- chat
    _family("slack_token", ("slack_bot_token", "slack_token", "slack_app_token"), mk.slack_token,
            (rf"\bxox{_real('[A-Za-z0-9.-]')}(?:[bps]-[0-9]{{10,13}}-[A-Za-z0-9-]{{10,200}}|e\.xox[bp]-[0-9]-[A-Z0-9]{{163,166}}"
             r"|e-[0-9]-[A-Z0-9]{146})(?![A-Za-z0-9-])",
             rf"\bxapp-1-A{_real('[A-Za-z0-9-]')}[A-Z0-9]{{10}}-[0-9]{{13}}-[a-f0-9]{{64}}\b"),
            "Slack bot (xoxb), user (xoxp), session (xoxs) and app-level (xapp) tokens, configuration "
            "tokens (xoxe.xoxp-1-, 163-166 characters) and their refresh tokens (xoxe-1-, 146), and the "
            "older two-part bot shape.", mk.SLACK_VARIANTS),
    _family("slack_webhook", ("slack_webhook_url", "alert_webhook"), mk.slack_webhook,
            (rf"https://hooks\.slack\.com/services/{_real('[A-Za-z0-9/]')}T[A-Z0-9]{{8,12}}/B[A-Z0-9]{{8,12}}/"
             r"[A-Za-z0-9]{24}\b",),
            "An incoming-webhook URL: anyone holding it posts into the channel. Team and bot ids "
            "vary in length."),
    _family("discord_bot_token", ("discord_bot_token", "discord_token"), mk.discord_bot,
            (r"\b[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}(?![A-Za-z0-9_.-])",),
            "A Discord bot token: base64 of the bot's user id, a timestamp and an HMAC."),
    _family("discord_webhook", ("discord_webhook_url", "notify_webhook"), mk.discord_webhook,
            (rf"https://discord(?:app)?\.com/api/webhooks/[0-9]{{17,20}}/{_real('[A-Za-z0-9_-]')}[A-Za-z0-9_-]{{60,80}}"
             r"(?![A-Za-z0-9_-])",),
            "A Discord webhook URL: posts into the channel as the webhook."),
    _family("telegram_bot_token", ("telegram_bot_token", "tg_bot_token"), mk.telegram,
            (rf"\b[0-9]{{8,10}}:AA{_real('[A-Za-z0-9_-]')}[A-Za-z0-9_-]{{33}}(?![A-Za-z0-9_-])",),
            "A Telegram Bot API token (bot id, ':AA', 33 characters): controls the bot."),
    # --- payments
    _family("stripe_secret_key", ("stripe_secret_key", "stripe_api_key"), mk.stripe,
            (rf"\b[rs]k_(?:live|test)_(?!4eC39HqLyjWDarjtT1zdp7dc\b){_real('[A-Za-z0-9]')}[A-Za-z0-9]{{24,247}}\b",),
            "Stripe secret (sk_) and restricted (rk_) keys, live and test mode; current ones carry a "
            "99-character body, older ones 24.", mk.STRIPE_VARIANTS),
    _family("square_token", ("square_access_token", "square_secret"), mk.square,
            (rf"\bEAAA{_real('[A-Za-z0-9_-]')}[A-Za-z0-9_-]{{60}}(?![A-Za-z0-9_-])",
             rf"\bsq0(?:atp-{_real('[A-Za-z0-9_-]')}[A-Za-z0-9_-]{{22}}|csp-[A-Za-z0-9_-]{{43}})(?![A-Za-z0-9_-])"),
            "Square access tokens (EAAA…, older sq0atp-) and OAuth application secrets (sq0csp-).",
            mk.SQUARE_VARIANTS),
    _family("shopify_token", ("shopify_access_token", "shopify_api_secret"), mk.shopify,
            (rf"\bshp(?:at|ss|ca|pa)_{_real('[a-fA-F0-9]')}[a-fA-F0-9]{{32}}\b",),
            "Shopify Admin API (shpat_), shared secret (shpss_), custom app (shpca_) and private "
            "app (shppa_) tokens.", mk.SHOPIFY_VARIANTS),
    _family("braintree_access_token", ("braintree_access_token", "paypal_access_token"), mk.braintree,
            (rf"\baccess_token\$production\${_real('[0-9a-z$]')}[0-9a-z]{{16}}\$[0-9a-f]{{32}}\b",),
            "A Braintree (PayPal) production access token."),
    # --- LLM APIs
    _family("openai_api_key", ("openai_api_key", "llm_api_key"), mk.openai,
            (rf"\bsk-(?:proj-|svcacct-|admin-)?{_real('[A-Za-z0-9_-]')}[A-Za-z0-9_-]{{20,74}}T3BlbkFJ[A-Za-z0-9_-]{{20,74}}"
             r"(?![A-Za-z0-9_-])",),
            "OpenAI project (sk-proj-), service-account (sk-svcacct-), admin (sk-admin-) and legacy "
            "user keys; every one contains T3BlbkFJ, base64 of 'OpenAI'.", mk.OPENAI_VARIANTS),
    _family("anthropic_api_key", ("anthropic_api_key", "claude_api_key"), mk.anthropic,
            (rf"\bsk-ant-(?:api03|admin01)-{_real('[A-Za-z0-9_-]')}[A-Za-z0-9_-]{{93}}AA(?![A-Za-z0-9_-])",),
            "Anthropic API (sk-ant-api03-) and admin (sk-ant-admin01-) keys.", mk.ANTHROPIC_VARIANTS),
    _family("huggingface_token", ("hf_token", "huggingface_token"), mk.huggingface,
            (rf"\bhf_{_real('[A-Za-z]')}[A-Za-z]{{34}}\b",),
            "A Hugging Face user access token (hf_ + 34 letters)."),
    _family("groq_api_key", ("groq_api_key",), mk.groq, (rf"\bgsk_{_real('[A-Za-z0-9]')}[A-Za-z0-9]{{52}}\b",),
            "A Groq API key (gsk_ + 52 characters)."),
    _family("replicate_api_token", ("replicate_api_token",), mk.replicate,
            (rf"\br8_{_real('[A-Za-z0-9]')}[A-Za-z0-9]{{37}}\b",),
            "A Replicate API token (r8_ + 37 characters)."),
    # --- email and SaaS
    _family("sendgrid_api_key", ("sendgrid_api_key", "smtp_api_key"), mk.sendgrid,
            (rf"\bSG\.{_real('[A-Za-z0-9_.-]')}[A-Za-z0-9_-]{{22}}\.[A-Za-z0-9_-]{{43}}(?![A-Za-z0-9_-])",),
            "A SendGrid API key: sends mail as the account."),
    _family("mailgun_api_key", ("mailgun_api_key", "mailgun_key"), mk.mailgun,
            (rf"\bkey-{_real('[0-9a-f]')}[0-9a-f]{{32}}\b",
             rf"\b(?=[0-9a-f]{{32}}-[0-9a-f]{{8}}-){_real('[0-9a-f]')}[0-9a-f]{{32}}-[0-9a-f]{{8}}-[0-9a-f]{{8}}\b"),
            "A Mailgun private API key: key- + 32 hex (accounts before 2018), or 32 hex, -, 8 hex, -, "
            "8 hex (since).", mk.MAILGUN_VARIANTS),
    _family("mailchimp_api_key", ("mailchimp_api_key", "mc_api_key"), mk.mailchimp,
            (rf"\b(?=[0-9a-f]{{32}}-us){_real('[0-9a-f]')}[0-9a-f]{{32}}-us[0-9]{{1,2}}\b",),
            "A Mailchimp API key: 32 hex and the data-centre suffix (-us1 … -us21)."),
    _family("twilio_api_key", ("twilio_api_key", "twilio_key_sid"), mk.twilio,
            (rf"\bSK{_real('[0-9a-f]')}[0-9a-f]{{32}}\b",),
            "A Twilio API key SID (SK…): with its secret it calls the API as the account."),
    _family("sentry_auth_token", ("sentry_auth_token",), mk.sentry,
            (rf"\bsntryu_{_real('[a-f0-9]')}[a-f0-9]{{64}}\b",
             r"\bsntrys_eyJ[A-Za-z0-9+/]{40,400}={0,2}_[A-Za-z0-9+/]{43}(?![A-Za-z0-9+/=_])"),
            "Sentry user (sntryu_) and organisation (sntrys_) auth tokens; an organisation token is the "
            "base64 of its claims (padding kept), _, and 43 characters of secret.", mk.SENTRY_VARIANTS),
    _family("datadog_api_key", ("dd_api_key", "datadog_api_key"), mk.datadog,
            (rf"(?<=DD-(?:API|APPLICATION)-KEY: ){_real('[0-9a-f]')}[0-9a-f]{{32}}(?:[0-9a-f]{{8}})?\b",
             rf"(?<=(?<![A-Za-z0-9_-])(?i:dd|datadog)_(?i:api|app|application)_(?i:key){_ASSIGN})"
             rf"{_real('[0-9a-f]')}[0-9a-f]{{32}}(?:[0-9a-f]{{8}})?\b"),
            "Datadog API (32 hex) and application (40 hex) keys: sent as DD-API-KEY and "
            "DD-APPLICATION-KEY headers, and set as DD_API_KEY / DATADOG_API_KEY and DD_APP_KEY in the "
            "agent's environment and configuration.", mk.DATADOG_VARIANTS, SHELL | KV,
            hints=("dd-", "dd_", "datadog"),
            variant_contexts=(("api", SHELL), ("api+app", SHELL), ("env-api", KV), ("env-app", KV))),
    # --- secret stores and identity
    _family("vault_token", ("vault_token",), mk.vault,
            (rf"\bhv[sb]\.{_real('[A-Za-z0-9_-]')}[A-Za-z0-9_-]{{90,300}}(?![A-Za-z0-9_-])",),
            "HashiCorp Vault service (hvs.) and batch (hvb.) tokens.", mk.VAULT_VARIANTS),
    _family("terraform_cloud_token", ("tfe_token", "terraform_token"), mk.terraform,
            (rf"\b[A-Za-z0-9]{{14}}\.atlasv1\.{_real('[A-Za-z0-9_-]')}[A-Za-z0-9_-]{{60,70}}(?![A-Za-z0-9_-])",),
            "An HCP Terraform (Terraform Cloud) API token."),
    _family("onepassword_secret", ("op_service_account_token", "op_secret_key"), mk.onepassword,
            (r"\bops_eyJ[A-Za-z0-9+/]{100,}",
             r"\bA3-[A-Z0-9]{6}-[A-Z0-9]{6}-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}\b"),
            "1Password service-account tokens (ops_…) and account Secret Keys (A3-…).",
            mk.ONEPASSWORD_VARIANTS),
    _family("age_secret_key", ("age_identity", "sops_age_key"), mk.age_key,
            (rf"\bAGE-SECRET-KEY-1{_real('[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]')}[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{{58}}\b",),
            "An age identity (Bech32, with its checksum): decrypts everything encrypted to it."),
    # --- databases
    _family("connection_string_password", ("database_url", "broker_url", "cache_url"), mk.conn_password,
            (r"(?<=\b(?:postgres(?:ql)?|mysql|mongodb(?:\+srv)?|rediss?|amqps?|mssql)://[A-Za-z0-9_.-]*:)"
             + _NOT_A_PLACEHOLDER_PASSWORD + r"[^@\s/:]+(?=@)",),
            "The password inside a database or broker URL (only the password is secret).",
            mk.CONN_VARIANTS),
    _family("ado_net_password", ("sql_connection_string", "connection_string"), mk.ado_net,
            (r"(?<=;Password=)[^;\s\"']+",),
            "The Password of an ADO.NET (SQL Server) connection string."),
    # --- tokens and keys
    _family("jwt", ("session_jwt", "id_token_jwt"), mk.jwt,
            (r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*",),
            "A signed (or unsigned, alg none) JSON Web Token: a bearer credential until it expires. "
            "The signature fits the algorithm: 43 characters for HS256, 86 for ES256, 342 for RS256.",
            mk.JWT_VARIANTS),
    _family("pem_private_key", ("private_key", "tls_key"), mk.private_pem,
            (r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY(?: BLOCK)?-----\n[\s\S]*?"
             r"-----END (?:[A-Z]+ )?PRIVATE KEY(?: BLOCK)?-----",),
            "A private key block: PKCS#1 RSA, PKCS#8 (plain or encrypted), EC, DSA, OpenSSH or "
            "OpenPGP; the body is the DER (or OpenSSH, OpenPGP) encoding.", mk.PEM_VARIANTS, BLOCK),
    _family("kubernetes_secret_data", mk.K8S_KEYS, mk.k8s_secret_data,
            (r"(?<=\ndata:\n(?:  [^\n]*\n)*  (?:[a-z0-9-]*(?:password|token|secret|key)|\.dockerconfigjson): )"
             r"[A-Za-z0-9+/]+={0,2}(?=\n)",
             r'(?<="data": \{\n(?: +"[^"\n]+": "[^"\n]+",\n)* +"(?:[a-z0-9-]*(?:password|token|secret|key)'
             r'|\.dockerconfigjson)": ")[A-Za-z0-9+/]+={0,2}(?=")'),
            "A credential under data: in a Kubernetes Secret (a password, token, secret or key, or a "
            "registry's .dockerconfigjson): base64 only encodes, it does not protect.",
            mk.K8S_VARIANTS, K8S),
    # --- generic and positional
    _family("generic_secret_assignment", mk.GENERIC_KEYS, mk.generic,
            # The one-character lookbehind first: it rejects most positions before the
            # key alternation is tried (about 10% faster over a task's records).
            (rf"""(?<=[=:"' \t])(?<=(?<![A-Za-z0-9_.;-]){_GENERIC_KEYS}{_ASSIGN}){_GENERIC_VALUE}""",),
            "A high-entropy value assigned to a secret-named key (password, client_secret, api_key, "
            "…): hex, base64, UUID-shaped or free-form.", mk.GENERIC_VARIANTS,
            # Every key name ends with one of the hints, and only separators sit between it and
            # the value: the generator tries the pattern right after them.
            hints=("pass", "passwd", "password", "pwd", "secret", "token", "key"), hints_anchor=True,
            line_gate=rf"""(?<={_GENERIC_KEYS}["']?[ \t]*)[:=]"""),
    _family("url_password", ("git_remote", "upload_url"), mk.url_password,
            (r"(?<=\bhttps?://[A-Za-z0-9_.-]+:)" + _NOT_A_PLACEHOLDER_PASSWORD + r"[^@\s/:]+(?=@)",),
            "The password in an https URL's userinfo."),
    _family("basic_auth", ("authorization",), mk.basic, (r"(?<=\bBasic )[A-Za-z0-9+/]{8,}={0,2}",),
            "HTTP Basic credentials: base64 of user:password."),
    _family("bearer_token", ("authorization",), mk.bearer,
            (r"(?<=\bBearer )(?![A-Z_]+(?![A-Za-z0-9._~+/=-]))[A-Za-z0-9._~+/-]{20,}=*",),
            "An HTTP bearer token: whoever sends it is authenticated."),
    _family("cli_password", ("",), mk.cli_password,
            (r"(?<=\b(?:mysql|mysqldump|docker login|sshpass)\b[^\n]*?\s-p"
             r"(?:(?<=(?:docker login|sshpass)\b[^\n]*) )?)" + _LITERAL_ARG,
             r"(?<=\bcurl\b[^\n]*?\s-u [^\s:@]+:)" + _LITERAL_ARG),
            "A password passed on a command line (mysql -p, mysqldump -p, curl -u, docker login -p, "
            "sshpass -p): it lands in shell history and process lists. A variable ($DB_PASSWORD) or a "
            "placeholder word (password) in its place is not one.", mk.CLI_VARIANTS, SHELL),
)

"""Record templates of corpus-v2, declared as data.

A template says how a record of one kind looks: its header lines, how it renders a
``key``/value pair (several alternative line formats), a PEM block, or a shell
command, and the filler lines that make up the rest of the record. ``{v}`` marks
where a family's fragment goes; every other ``{field}`` is filled from the record's
random context (``FIELDS`` below).

A template's key/value lines accept families of context ``kv`` unless it names
another: a Kubernetes Secret's ``data:`` section holds only base64 values, so it
takes only ``k8s`` families and its fillers are comments.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

from .families import DIGITS, HEX, HOSTS, USERS
from .rng import Rng

_APPS = ("billing", "checkout", "ledger", "notifier", "search-api", "auth-gw", "reports", "ingest")
_REGIONS = ("us-east-1", "eu-west-1", "ap-southeast-2", "eu-central-1")
_LEVELS = ("info", "warn", "debug", "error")
_UAS = ("curl/8.5.0", "python-requests/2.32.3", "Go-http-client/1.1", "Mozilla/5.0 (X11; Linux x86_64)")
_PATHS = ("api/v1/orders", "healthz", "v2/upload", "static/app.js", "graphql", "api/v1/users/42")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")

# Filler fields: every {name} in a template other than {k} and {v} is drawn here.
FIELDS: dict[str, Callable[[Rng], str]] = {
    "app": lambda r: r.choice(_APPS),
    "env": lambda r: r.choice(("production", "staging", "dev")),
    "port": lambda r: str(r.choice((80, 443, 5432, 6379, 8080, 8443, 9000, 3000))),
    "level": lambda r: r.choice(_LEVELS),
    "region": lambda r: r.choice(_REGIONS),
    "feature": lambda r: r.choice(("new_search", "dark_mode", "fast_refunds")),
    "small": lambda r: str(r.between(1, 16)),
    "n": lambda r: str(r.between(100, 99999)),
    "ms": lambda r: str(r.between(1, 4000)),
    "date": lambda r: f"2026-{r.between(1, 12):02d}-{r.between(1, 28):02d}",
    "ts": lambda r: f"2026-{r.between(1, 12):02d}-{r.between(1, 28):02d}T{r.below(24):02d}:"
                    f"{r.below(60):02d}:{r.below(60):02d}.{r.below(1000):03d}Z",
    "clf": lambda r: f"{r.between(1, 28):02d}/{r.choice(_MONTHS)}/2026:{r.below(24):02d}:"
                     f"{r.below(60):02d}:{r.below(60):02d} +0000",
    "syslog_ts": lambda r: f"{r.choice(_MONTHS)} {r.between(1, 28):2d} {r.below(24):02d}:"
                           f"{r.below(60):02d}:{r.below(60):02d}",
    "section": lambda r: r.choice(("database", "server", "cache", "auth", "mail")),
    "user": lambda r: r.choice(USERS),
    "host": lambda r: r.choice(HOSTS),
    "ip": lambda r: f"{r.between(10, 203)}.{r.below(256)}.{r.below(256)}.{r.between(1, 254)}",
    "path": lambda r: r.choice(_PATHS),
    "method": lambda r: r.choice(("GET", "POST", "PUT")),
    "status": lambda r: r.choice(("200", "201", "204", "301", "401", "403", "404", "500")),
    "ua": lambda r: r.choice(_UAS),
    "short": lambda r: r.chars(HEX, 12),
    "uuid": lambda r: "-".join(r.chars(HEX, n) for n in (8, 4, 4, 4, 12)),
    "pid": lambda r: r.chars(DIGITS[1:], 1) + r.chars(DIGITS, r.between(2, 4)),
    "hex40": lambda r: r.chars(HEX, 40),
    "job": lambda r: str(r.between(1000000, 9999999)),
    "runner": lambda r: r.choice(("14.9.1", "16.11.2", "17.4.0")),
    "tf_version": lambda r: r.choice(("1.5.7", "1.7.5", "1.9.8")),
}


@dataclass(frozen=True)
class Template:
    name: str
    key_case: str  # "upper" | "lower"
    kv: tuple[str, ...]
    fillers: tuple[str, ...]
    header: tuple[str, ...] = ()
    footer: tuple[str, ...] = ()
    block: str | None = None  # format of a PEM block; {indent} is applied to its lines
    block_indent: str = ""
    shell: str | None = None
    kv_context: str = "kv"  # the family context its key/value lines accept

    @cached_property  # asked tens of thousands of times per 64 tasks
    def contexts(self) -> frozenset[str]:
        return frozenset({self.kv_context} if self.kv else set()) | frozenset(
            c for c, f in (("block", self.block), ("shell", self.shell)) if f)


TEMPLATES: tuple[Template, ...] = (
    Template("dotenv", "upper",
             kv=("{k}={v}", '{k}="{v}"', "export {k}={v}"),
             header=("# {app} — environment for {env}",),
             fillers=("NODE_ENV={env}", "PORT={port}", "LOG_LEVEL={level}", "AWS_REGION={region}",
                      "FEATURE_FLAGS=checkout_v2,{feature}", "WORKERS={small}", "# rotated {date}")),
    Template("yaml_config", "lower",
             kv=("  {k}: {v}", '  {k}: "{v}"'),
             header=("# {app}.yaml", "service:", "  name: {app}"),
             fillers=("  replicas: {small}", "  region: {region}", "  timeout_ms: {n}",
                      "  log_level: {level}", "  image: ghcr.io/acme/{app}:1.{small}.{n}"),
             block="  {k}: |\n    {v}", block_indent="    "),
    Template("json_config", "lower",
             kv=('  "{k}": "{v}",',),
             header=("{{", '  "service": "{app}",'),
             footer=('  "version": {small}', "}}"),
             fillers=('  "region": "{region}",', '  "port": {port},', '  "retries": {small},',
                      '  "debug": false,', '  "owner": "{user}",')),
    Template("ini_config", "lower",
             kv=("{k} = {v}", "{k}={v}", '{k} = "{v}"'),
             header=("; {app} settings", "[{section}]"),
             fillers=("host = {host}", "port = {port}", "pool_size = {small}", "timeout = {n}",
                      "charset = utf8mb4", "[{section}]")),
    Template("toml_config", "lower",
             kv=('{k} = "{v}"',),
             header=("[{section}]",),
             fillers=('name = "{app}"', "port = {port}", "workers = {small}", 'region = "{region}"',
                      'log_level = "{level}"')),
    Template("http_access_log", "lower",
             kv=('{ip} - - [{clf}] "GET /{path}?{k}={v} HTTP/1.1" {status} {n} "-" "{ua}"',
                 '{ip} - - [{clf}] "{method} /{path} HTTP/1.1" {status} {n} "{ua}" {k}="{v}"'),
             fillers=('{ip} - - [{clf}] "GET /{path} HTTP/1.1" {status} {n} "-" "{ua}"',
                      '{ip} - - [{clf}] "{method} /{path}?page={small} HTTP/1.1" {status} {n} "-" "{ua}" rt={ms}')),
    Template("shell_history", "upper",
             kv=("export {k}={v}", "export {k}='{v}'"),
             fillers=("cd ~/src/{app}", "git pull --rebase origin main", "kubectl get pods -n {env}",
                      "make test", "ls -la", "tail -f /var/log/{app}.log", "git log -1 --format=%H"),
             shell="{v}"),
    Template("python_source", "upper",
             kv=('{k} = "{v}"', "{k} = '{v}'"),
             header=('"""Settings for {app}."""', "import os", ""),
             fillers=("DEBUG = False", "TIMEOUT_SECONDS = {small}", 'REGION = "{region}"',
                      'ALLOWED_HOSTS = ["{host}"]', "MAX_RETRIES = {small}"),
             block='{k} = """{v}"""'),
    Template("js_source", "upper",
             kv=("const {k} = '{v}';", 'export const {k} = "{v}";'),
             header=("// {app} client config",),
             fillers=("const TIMEOUT = {n};", "const REGION = '{region}';", "module.exports = {{ TIMEOUT, REGION }};",
                      "const RETRIES = {small};")),
    Template("stack_trace", "lower",
             kv=("    {k} = '{v}'",),
             header=("Traceback (most recent call last):",
                     '  File "/srv/{app}/db.py", line {n}, in connect',
                     "    engine = create_engine(settings.database_url, pool_size={small})",
                     "  Locals:"),
             footer=("sqlalchemy.exc.OperationalError: (psycopg2.OperationalError) connection to "
                     "server at \"{host}\", port {port} failed: timeout expired",),
             fillers=("    attempt = {small}", "    elapsed_ms = {ms}", "    pool_size = {small}",
                      "    host = '{host}'")),
    Template("ci_log", "upper",
             kv=("{ts} ##[debug]Setting env {k}={v}", "{ts} {k}: {v}", '{ts} ##[debug]Setting env {k}="{v}"'),
             header=("{ts} ##[group]Run {app} deploy",),
             footer=("{ts} ##[endgroup]",),
             fillers=("{ts} Downloading action repository 'actions/checkout@v4'", "{ts} Step {small}/9 : RUN make build",
                      "{ts} ---> Running in {short}", "{ts} Successfully built {short}", "{ts} ok  {app}/internal {ms}s"),
             shell="{ts} + {v}"),
    Template("logfmt", "lower",
             kv=('ts={ts} level={level} msg="config loaded" {k}={v} request_id={uuid}',
                 'ts={ts} level=debug msg="outbound request" {k}="{v}" duration_ms={ms}'),
             fillers=('ts={ts} level={level} msg="request done" request_id={uuid} status={status} duration_ms={ms}',
                      'ts={ts} level=info msg="cache warm" keys={n} host={host}')),
    Template("syslog", "lower",
             kv=("{syslog_ts} {host} {app}[{pid}]: loaded {k}={v}", '{syslog_ts} {host} {app}[{pid}]: {k}="{v}" rejected by upstream'),
             fillers=("{syslog_ts} {host} {app}[{pid}]: listening on :{port}", "{syslog_ts} {host} systemd[1]: Started {app}.service.",
                      "{syslog_ts} {host} sshd[{pid}]: Accepted publickey for {user} from {ip} port {port}")),
    Template("pem_file", "lower",
             kv=(),
             header=("# {app} TLS material, {date}",),
             fillers=("# owner: {user}", ""),
             block="{v}"),
    # --- corpus-v2
    Template("k8s_secret", "lower",
             kv=("  {k}: {v}",),
             header=("apiVersion: v1", "kind: Secret", "metadata:", "  name: {app}-credentials",
                     "  namespace: {env}", "type: Opaque", "data:"),
             fillers=("  # rotated {date}", "  # managed by {app}-operator"),
             kv_context="k8s"),
    Template("gcp_service_account", "lower",
             kv=('  "{k}": "{v}",',),
             header=("{{", '  "type": "service_account",', '  "project_id": "{app}-{env}",',
                     '  "private_key_id": "{hex40}",'),
             footer=('  "universe_domain": "googleapis.com"', "}}"),
             fillers=('  "auth_uri": "https://accounts.google.com/o/oauth2/auth",',
                      '  "token_uri": "https://oauth2.googleapis.com/token",',
                      '  "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",')),
    Template("npmrc", "lower",
             kv=("//registry.npmjs.org/:{k}={v}", "//{host}/npm/:{k}={v}", '{k}="{v}"'),
             header=("registry=https://registry.npmjs.org/",),
             fillers=("always-auth=true", "save-exact=true", "fund=false", "@acme:registry=https://{host}/npm/",
                      "engine-strict=true")),
    Template("pypirc", "lower",
             kv=("{k} = {v}", '{k} = "{v}"'),
             header=("[distutils]", "index-servers =", "    pypi", "    internal", "", "[pypi]",
                     "username = __token__"),
             fillers=("repository = https://upload.pypi.org/legacy/", "[internal]",
                      "repository = https://{host}/simple/", "username = {user}")),
    Template("terraform", "lower",
             kv=('{k} = "{v}"', '  {k} = "{v}"'),
             header=("# terraform.tfvars for {app} ({env})", 'region = "{region}"'),
             fillers=('instance_type = "t3.medium"', 'environment = "{env}"', "replicas = {small}",
                      'tags = {{ team = "{app}", managed_by = "terraform" }}', 'terraform_version = "{tf_version}"')),
    Template("gitlab_ci_log", "upper",
             kv=("$ export {k}={v}", '$ echo "{k}={v}" >> .env', "{k}: {v}", '{k}: "{v}"'),
             header=("Running with gitlab-runner {runner} (abc123de)", "  on docker-{app} {short}, system ID: s_{short}",
                     "Preparing the \"docker\" executor"),
             footer=("Cleaning up project directory and file based variables", "Job succeeded"),
             fillers=("$ make build", "$ go test ./... -count=1", "Fetching changes with git depth set to 20...",
                      "Uploading artifacts for successful job", "Checking out {short} as detached HEAD (ref is main)...",
                      "Job {job} finished in {ms}ms"),
             shell="$ {v}"),
)

BY_NAME: dict[str, Template] = {t.name: t for t in TEMPLATES}

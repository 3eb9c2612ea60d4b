"""Record templates of corpus-v3, declared as data.

A template names its format (the writer in ``formats`` that lays a record out as a
valid file of that format), the contexts of the values it takes (``kv``: a value under
a key; ``escaped``: a JSON-escaped multi-line value; ``block``: a multi-line block;
``shell``: a whole command line; ``k8s``: a Kubernetes Secret's data; ``npmrc``,
``pypirc``, ``gcp_sa``: the credential slots of those files), its header and footer
lines, and its fillers. Every ``{field}`` is filled from the record's random context
(``FIELDS`` below); ``{v}`` and ``{k}`` mark a value and its key in line formats.
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
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
# Numbers as times write them ({n:02d}, {n:03d}, {n:2d}), looked up: a format spec costs
# more than the rest of a time field together, and logs write thousands of times.
PAD2 = tuple(f"{n:02d}" for n in range(100))
PAD3 = tuple(f"{n:03d}" for n in range(1000))
SPACED2 = tuple(f"{n:2d}" for n in range(100))

# Filler fields: every {name} in a template other than {k} and {v} is drawn here.
FIELDS: dict[str, Callable[[Rng], str]] = {
    "app": lambda r: r.choice(_APPS),
    "env": lambda r: r.choice(("production", "staging", "dev")),
    "port": lambda r: str(r.choice((80, 443, 5432, 6379, 8080, 8443, 9000, 3000))),
    "level": lambda r: r.choice(_LEVELS),
    "region": lambda r: r.choice(_REGIONS),
    "feature": lambda r: r.choice(("new_search", "dark_mode", "fast_refunds")),
    "small": lambda r: str(r.between(1, 16)),
    "step": lambda r: str(r.between(1, 9)),
    "n": lambda r: str(r.between(100, 99999)),
    "ms": lambda r: str(r.between(1, 4000)),
    "date": lambda r: f"2026-{PAD2[r.between(1, 12)]}-{PAD2[r.between(1, 28)]}",
    "ts": lambda r: f"2026-{PAD2[r.between(1, 12)]}-{PAD2[r.between(1, 28)]}T{PAD2[r.below(24)]}:"
                    f"{PAD2[r.below(60)]}:{PAD2[r.below(60)]}.{PAD3[r.below(1000)]}Z",
    "clf": lambda r: f"{PAD2[r.between(1, 28)]}/{r.choice(MONTHS)}/2026:{PAD2[r.below(24)]}:"
                     f"{PAD2[r.below(60)]}:{PAD2[r.below(60)]} +0000",
    "syslog_ts": lambda r: f"{r.choice(MONTHS)} {SPACED2[r.between(1, 28)]} {PAD2[r.below(24)]}:"
                           f"{PAD2[r.below(60)]}:{PAD2[r.below(60)]}",
    "section": lambda r: r.choice(("database", "server", "cache", "auth", "mail")),
    "user": lambda r: r.choice(USERS),
    "host": lambda r: r.choice(HOSTS),
    "ip": lambda r: f"{r.between(10, 203)}.{r.below(256)}.{r.below(256)}.{r.between(1, 254)}",
    "path": lambda r: r.choice(_PATHS),
    "method": lambda r: r.choice(("GET", "POST", "PUT")),
    "status": lambda r: r.choice(("200", "201", "204", "301", "401", "403", "404", "500")),
    # an access log's status beside its body's bytes: a 204 has no body (RFC 9110, 15.3.5)
    "sent_status": lambda r: r.choice(("200", "201", "301", "401", "403", "404", "500")),
    "ua": lambda r: r.choice(_UAS),
    "short": lambda r: r.chars(HEX, 12),
    # a version-4 UUID (RFC 9562: version nibble 4, variant 10xx)
    "uuid": lambda r: (f"{r.chars(HEX, 8)}-{r.chars(HEX, 4)}-4{r.chars(HEX, 3)}-{r.choice('89ab')}{r.chars(HEX, 3)}-"
                       f"{r.chars(HEX, 12)}"),
    # a client's source port, from Linux's ephemeral range (net.ipv4.ip_local_port_range)
    "eport": lambda r: str(r.between(32768, 60999)),
    "pid": lambda r: r.chars(DIGITS[1:], 1) + r.chars(DIGITS, r.between(2, 4)),
    "hex40": lambda r: r.chars(HEX, 40),
    "runner": lambda r: r.choice(("14.9.1", "16.11.2", "17.4.0")),
    "tf_version": lambda r: r.choice(("1.5.7", "1.7.5", "1.9.8")),
    "digits21": lambda r: r.chars(DIGITS[1:], 1) + r.chars(DIGITS, 20),
}


@dataclass(frozen=True)
class Template:
    """A kind of record: its format (which writer lays it out, `formats.WRITERS`), the
    contexts of values it hosts, and its own lines. ``entries`` are filler key/values of
    structured formats ((key, value format, literal): a literal is a typed number or
    boolean); ``kv`` are line formats of log-like ones, each with what it can carry
    verbatim (`formats.CARRIES`)."""
    name: str
    format: str
    key_case: str  # "upper" | "lower" | "keep"
    hosts: frozenset[str]  # contexts of the values it takes: kv, escaped, block, shell, k8s, npmrc, pypirc, gcp_sa
    header: tuple[str, ...] = ()
    footer: tuple[str, ...] = ()
    entries: tuple[tuple[str, str, bool], ...] = ()
    sections: tuple[str, ...] = ()
    kv: tuple[tuple[str, str], ...] = ()
    fillers: tuple[str, ...] = ()
    block: str | None = None  # line format of a multi-line value; block_indent is applied to its lines
    block_indent: str = ""
    shell: str | None = None
    # A traceback's frames, innermost first (the last repeats, a retry decorator's, for
    # any further out): each frame's lines, then its locals sorted by name (a local's
    # name once per frame, so a repeated name goes one frame out).
    frames: tuple[tuple[str, ...], ...] = ()
    # Each frame's arguments its source line reads, as `traceback` prints them among
    # the locals (a frame's own arguments are locals): written where the frame's drawn
    # locals name none of that name; {addr:NAME} is an object's address, one per file
    # and NAME (draw-free: `formats._address`).
    frame_arguments: tuple[tuple[str, ...], ...] = ()
    required: str = ""  # a context the template exists for: a stream using it draws a family of it
    capacity: int = 1000  # family values one record holds at most (a service-account file holds one key)
    # A file that is its blocks (a .pem: OpenSSL reads nothing from one without): one
    # planned with no value holds a public block (`stream._public_blocks`).
    holds_block: bool = False

    @cached_property  # asked tens of thousands of times per 64 tasks
    def contexts(self) -> frozenset[str]:
        return self.hosts


_KV, _BLOCK, _SHELL = "kv", "block", "shell"
_SECTIONS = ("database", "server", "cache", "auth", "mail", "production", "staging", "sandbox", "default", "api",
             "integrations", "billing")


def _hosts(*contexts: str) -> frozenset[str]:
    return frozenset(contexts)


TEMPLATES: tuple[Template, ...] = (
    Template("dotenv", "dotenv", "upper", _hosts(_KV, "escaped"),
             header=("# {app} — environment for {env}",),
             entries=(("NODE_ENV", "{env}", False), ("PORT", "{port}", False), ("LOG_LEVEL", "{level}", False),
                      ("AWS_REGION", "{region}", False), ("FEATURE_FLAGS", "checkout_v2,{feature}", False),
                      ("WORKERS", "{small}", False))),
    Template("yaml_config", "yaml", "lower", _hosts(_KV, _BLOCK, "scoped"),
             header=("# {app}.yaml", "service:", "  name: {app}", "  image: ghcr.io/acme/{app}:1.{small}.{n}"),
             entries=(("replicas", "{small}", True), ("region", "{region}", False), ("timeout_ms", "{n}", True),
                      ("log_level", "{level}", False), ("host", "{host}", False)),
             sections=_SECTIONS),
    Template("json_config", "json", "lower", _hosts(_KV, "escaped", "scoped"),
             entries=(("region", "{region}", False), ("port", "{port}", True), ("retries", "{small}", True),
                      ("debug", "false", True), ("owner", "{user}", False)),
             sections=_SECTIONS),
    Template("ini_config", "ini", "lower", _hosts(_KV, "scoped"),
             header=("; {app} settings",),
             entries=(("host", "{host}", False), ("port", "{port}", False), ("pool_size", "{small}", False),
                      ("timeout", "{n}", False), ("charset", "utf8mb4", False)),
             sections=_SECTIONS),
    Template("toml_config", "toml", "lower", _hosts(_KV, "scoped"),
             header=("# {app}.toml",),
             entries=(("name", "{app}", False), ("port", "{port}", True), ("workers", "{small}", True),
                      ("region", "{region}", False), ("log_level", "{level}", False)),
             sections=_SECTIONS),
    Template("http_access_log", "lines", "lower", _hosts(_KV),
             kv=(('{ip} - - [{clf}] "GET /{path}?{k}={v} HTTP/1.1" {sent_status} {n} "-" "{ua}"', "url"),
                 ('{ip} - - [{clf}] "{method} /{path} HTTP/1.1" {sent_status} {n} "-" "{ua}" {k}="{v}"', "dquote")),
             fillers=('{ip} - - [{clf}] "GET /{path} HTTP/1.1" {sent_status} {n} "-" "{ua}"',
                      '{ip} - - [{clf}] "{method} /{path}?page={small} HTTP/1.1" {sent_status} {n} "-" "{ua}" rt={ms}')),
    Template("shell_history", "lines", "upper", _hosts(_KV, _SHELL),
             kv=(("export {k}={v}", "shell"), ("export {k}='{v}'", "squote")),
             fillers=("cd ~/src/{app}", "git pull --rebase origin main", "kubectl get pods -n {env}",
                      "make test", "ls -la", "tail -f /var/log/{app}.log", "git log -1 --format=%H"),
             shell="{v}"),
    Template("python_source", "python", "upper", _hosts(_KV, _BLOCK),
             header=('"""Settings for {app}."""', "import os", ""),
             entries=(("DEBUG", "False", True), ("TIMEOUT_SECONDS", "{small}", True), ("REGION", "{region}", False),
                      ("ALLOWED_HOSTS", '["{host}"]', True), ("MAX_RETRIES", "{small}", True))),
    Template("js_source", "js", "upper", _hosts(_KV),
             header=("// {app} client config",),
             entries=(("TIMEOUT", "{n}", True), ("REGION", "{region}", False), ("RETRIES", "{small}", True))),
    Template("stack_trace", "lines", "lower", _hosts(_KV),
             kv=(("    {k} = '{v}'", "squote"),),
             header=("Traceback (most recent call last):",),
             # as `traceback` prints an exception with capture_locals=True (`python -m
             # unittest --locals`): each frame's locals under its source line, no header
             frames=(('  File "/srv/{app}/db.py", line {ms}, in connect',
                      "    engine = create_engine(settings.database_url, pool_size=pool_size)"),
                     ('  File "/srv/{app}/settings.py", line {ms}, in load', "    return connect(settings)"),
                     ('  File "/srv/{app}/app.py", line {ms}, in startup', "    db = load()"),
                     ('  File "/srv/{app}/retry.py", line {ms}, in wrapper', "    return fn(*args, **kwargs)")),
             # connect(settings, pool_size=5), load(settings), startup(), and a retry
             # decorator's wrapper(*args, **kwargs) around startup (fn, a free variable,
             # is among f_locals too; functools.wraps gives each wrapper startup's name)
             frame_arguments=(("    pool_size = 5", "    settings = <settings.Settings object at {addr:settings}>"),
                              ("    settings = <settings.Settings object at {addr:settings}>",),
                              (),
                              ("    args = ()", "    fn = <function startup at {addr:fn}>", "    kwargs = {}")),
             footer=("sqlalchemy.exc.OperationalError: (psycopg2.OperationalError) connection to "
                     "server at \"{host}\", port 5432 failed: timeout expired",),
             fillers=("    attempt = {small}", "    elapsed_ms = {ms}", "    pool_size = {small}",
                      "    host = '{host}'")),
    Template("ci_log", "lines", "upper", _hosts(_KV, _SHELL),
             kv=(("{ts} ##[debug]Setting env {k}={v}", "bare"), ("{ts} {k}: {v}", "any"),
                 ('{ts} ##[debug]Setting env {k}="{v}"', "dquote")),
             header=("{ts} ##[group]Run {app} deploy",),
             footer=("{ts} ##[endgroup]",),
             fillers=("{ts} Downloading action repository 'actions/checkout@v4'", "{ts} Step {step}/9 : RUN make build",
                      "{ts} ---> Running in {short}", "{ts} Successfully built {short}", "{ts} ok  {app}/internal {ms}s"),
             shell="{ts} + {v}"),
    Template("logfmt", "lines", "lower", _hosts(_KV),
             kv=(('ts={ts} level={level} msg="config loaded" {k}={v} request_id={uuid}', "logfmt"),
                 ('ts={ts} level=debug msg="outbound request" {k}="{v}" duration_ms={ms}', "dquote")),
             fillers=('ts={ts} level={level} msg="request done" request_id={uuid} status={status} duration_ms={ms}',
                      'ts={ts} level=info msg="cache warm" keys={n} host={host}')),
    Template("syslog", "lines", "lower", _hosts(_KV),
             kv=(("{syslog_ts} {host} {app}[{pid}]: loaded {k}={v}", "bare"),
                 ('{syslog_ts} {host} {app}[{pid}]: {k}="{v}" rejected by upstream', "dquote")),
             fillers=("{syslog_ts} {host} {app}[{pid}]: listening on :{port}",
                      "{syslog_ts} {host} systemd[1]: Started {app}.service.",
                      "{syslog_ts} {host} sshd[{pid}]: Accepted publickey for {user} from {ip} port {eport}")),
    Template("pem_file", "lines", "lower", _hosts(_BLOCK),
             header=("# {app} TLS material, {date}",),
             fillers=("# owner: {user}", ""),
             block="{v}", holds_block=True),
    Template("k8s_secret", "k8s", "keep", _hosts("k8s"), required="k8s"),
    Template("k8s_secret_json", "k8s_json", "keep", _hosts("k8s"), required="k8s"),
    Template("gcp_service_account", "gcp_sa", "keep", _hosts("gcp_sa"), required="gcp_sa", capacity=1),
    Template("npmrc", "npmrc", "keep", _hosts("npmrc"), required="npmrc",
             header=("registry=https://registry.npmjs.org/",),
             entries=(("audit", "false", False), ("save-exact", "true", False), ("fund", "false", False),
                      ("@acme:registry", "https://{host}/npm/", False), ("engine-strict", "true", False))),
    Template("pypirc", "pypirc", "keep", _hosts("pypirc"), required="pypirc"),
    Template("terraform", "hcl", "lower", _hosts(_KV),
             header=("# terraform.tfvars for {app} ({env})", 'region = "{region}"'),
             entries=(("instance_type", "t3.medium", False), ("environment", "{env}", False),
                      ("replicas", "{small}", True), ("terraform_version", "{tf_version}", False))),
    Template("gitlab_ci_log", "lines", "upper", _hosts(_KV, _SHELL),
             kv=(("$ export {k}={v}", "shell"), ('$ echo "{k}={v}" >> .env', "shell_dquote"), ("{k}: {v}", "any"),
                 ('{k}: "{v}"', "dquote")),
             header=("Running with gitlab-runner {runner} (abc123de)", "  on docker-{app} {short}, system ID: s_{short}",
                     "Preparing the \"docker\" executor"),
             footer=("Cleaning up project directory and file based variables", "Job succeeded"),
             fillers=("$ make build", "$ go test ./... -count=1", "Fetching changes with git depth set to 20...",
                      "Uploading artifacts for successful job", "Checking out {short} as detached HEAD (ref is main)...",
                      "Executing \"step_script\" stage of the job script"),
             shell="$ {v}"),
)

BY_NAME: dict[str, Template] = {t.name: t for t in TEMPLATES}

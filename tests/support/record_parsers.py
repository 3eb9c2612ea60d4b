"""Each structured template's records read by its format's own parser (issue 21).

`check(record)` returns the problems of one record ([] when it is a valid file of its
format): the parser's error, a repeated key (JSON objects, YAML mappings, TOML tables,
INI sections and options, .env, .npmrc and tfvars keys, module-level Python names), a
Kubernetes Secret whose type does not match its data or whose data is not base64 of
what it claims, a .pypirc whose index servers are not its sections, an app's INI
settings whose value ``ConfigParser()`` refuses to interpolate, a .pem with no block or
with a block `cryptography` does not load, and any labelled value that the parser does
not return verbatim (escaped values decoded as the format decodes them). Log-like
templates have no parser; every URL with a userinfo in any record must still be valid
percent-encoding (`url_problems`).
"""

from __future__ import annotations

import ast
import base64
import binascii
import configparser
import contextlib
import io
import itertools
import json
import re
import shlex
import tomllib
import warnings
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any

import hcl2
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from dotenv import dotenv_values

STRUCTURED = ("dotenv", "yaml_config", "json_config", "ini_config", "toml_config", "k8s_secret", "k8s_secret_json",
              "gcp_service_account", "npmrc", "pypirc", "terraform", "python_source", "shell_history", "pem_file")
_USERINFO_URL = re.compile(r"[a-z][a-z0-9+.-]*://([^\s/@\"']*)@")
_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")


class Problem(Exception):
    pass


def _no_dup_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    dups = {k for k in keys if keys.count(k) > 1}
    if dups:
        raise Problem(f"duplicate JSON keys {sorted(dups)}")
    return dict(pairs)


class _UniqueKeyLoader(yaml.SafeLoader):
    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        keys = [self.construct_object(k, deep=deep) for k, _ in node.value]
        dups = {k for k in keys if keys.count(k) > 1}
        if dups:
            raise Problem(f"duplicate YAML keys {sorted(map(str, dups))}")
        return super().construct_mapping(node, deep)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield str(k)
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)


def _uncommented_keys(text: str, comment: str, pattern: str) -> list[str]:
    keys = []
    for line in text.splitlines():
        if line.lstrip().startswith(comment):
            continue
        m = re.match(pattern, line)
        if m:
            keys.append(m.group(1))
    return keys


def _no_dup(keys: list[str], what: str) -> None:
    dups = {k for k in keys if keys.count(k) > 1}
    if dups:
        raise Problem(f"duplicate {what} {sorted(dups)}")


def _ini(text: str, prefix: str = "", interpolation: configparser.Interpolation | None = None, **kw: Any) -> list[str]:
    """Every value as the file's reader gets it: an app's settings through
    ``ConfigParser()``'s default interpolation (which refuses a lone % only when a value
    is read), npm's .npmrc raw."""
    parser = configparser.ConfigParser(strict=True, interpolation=interpolation, **kw)
    parser.read_string(prefix + text)
    return [v for s in parser.sections() for v in parser[s].values()]


def _encrypted_key(data: bytes) -> None:
    # TypeError: read, and encrypted under a password the file does not hold
    with contextlib.suppress(TypeError):
        serialization.load_pem_private_key(data, None)


def _private_key(data: bytes) -> None:
    serialization.load_pem_private_key(data, None)


# A .pem's blocks by label, each read as OpenSSL reads it (an OpenSSH key as ssh does).
_PEM_BLOCK = re.compile(r"^-----BEGIN ([A-Z0-9 ]+)-----\n(.*?)\n-----END \1-----$", re.M | re.S)
_PEM_LOADERS: dict[str, Callable[[bytes], object]] = {
    "CERTIFICATE": x509.load_pem_x509_certificate,
    "PUBLIC KEY": serialization.load_pem_public_key,
    "RSA PUBLIC KEY": serialization.load_pem_public_key,
    "ENCRYPTED PRIVATE KEY": _encrypted_key,
    "OPENSSH PRIVATE KEY": lambda data: serialization.load_ssh_private_key(data, None),
    **dict.fromkeys(("PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY", "DSA PRIVATE KEY"), _private_key),
}


def _pem(text: str) -> list[str]:
    """A .pem holds a block (OpenSSL reads nothing from comments alone), each of a
    known label loads; a stream's own armour is RFC 7468's base64, and OpenPGP armour
    is left to its own check (test_vendor_values)."""
    blocks = list(_PEM_BLOCK.finditer(text))
    if not blocks:
        raise Problem("no PEM block")
    for m in blocks:
        label, load = m.group(1), _PEM_LOADERS.get(m.group(1))
        try:
            if load is not None:
                load(m.group(0).encode())
            elif not label.startswith("PGP "):
                base64.b64decode(m.group(2).replace("\n", ""), validate=True)
        except ValueError as exc:
            raise Problem(f"{label}: {exc}") from None
    return [m.group(0) for m in blocks]


def _pypirc(text: str) -> list[str]:
    parser = configparser.ConfigParser(strict=True, interpolation=None)
    parser.read_string(text)
    servers = parser["distutils"]["index-servers"].split()
    if sorted(servers) != sorted(s for s in parser.sections() if s != "distutils"):
        raise Problem(f"index-servers {servers} are not the sections {parser.sections()}")
    return [v for s in parser.sections() for v in parser[s].values()]


def _k8s_json(text: str) -> list[str]:
    obj = json.loads(text, object_pairs_hook=_no_dup_pairs)
    docs = obj["items"] if obj.get("kind") == "List" else [obj]
    return _secret_docs(docs)


def _k8s(text: str) -> list[str]:
    return _secret_docs(list(yaml.load_all(text, Loader=_UniqueKeyLoader)))


def _secret_docs(docs: list[Any]) -> list[str]:
    values = []
    for doc in docs:
        if doc.get("kind") != "Secret" or doc.get("apiVersion") != "v1":
            raise Problem("not a v1 Secret")
        data, kind = doc.get("data") or {}, doc.get("type")
        if kind == "kubernetes.io/dockerconfigjson":
            if list(data) != [".dockerconfigjson"]:
                raise Problem(f"a dockerconfigjson Secret holds {sorted(data)}")
        elif kind != "Opaque" or ".dockerconfigjson" in data:
            raise Problem(f"type {kind} with keys {sorted(data)}")
        for key, value in data.items():
            try:
                decoded = base64.b64decode(value, validate=True)
            except binascii.Error as exc:
                raise Problem(f"{key} is not base64: {exc}") from None
            if key == ".dockerconfigjson" and "auths" not in json.loads(decoded):
                raise Problem("a .dockerconfigjson without auths")
            values.append(value)
        values += [str(doc["metadata"]["name"]), str(doc["metadata"]["namespace"])]
    return values


def _gcp_sa(text: str) -> list[str]:
    obj = json.loads(text, object_pairs_hook=_no_dup_pairs)
    required = {"type", "project_id", "private_key_id", "private_key", "client_email", "client_id", "auth_uri",
                "token_uri", "auth_provider_x509_cert_url", "client_x509_cert_url"}
    if obj.get("type") != "service_account" or not required <= set(obj):
        raise Problem(f"not a service-account key file: {sorted(obj)}")
    if not obj["private_key"].startswith("-----BEGIN PRIVATE KEY-----\n"):
        raise Problem("private_key is not a PEM")
    return list(_strings(obj))


def _hcl(text: str) -> list[str]:
    parsed = hcl2.loads(text)
    _no_dup(_uncommented_keys(text, "#", r"\s*([A-Za-z_][A-Za-z0-9_-]*)\s*="), "tfvars attributes")
    return [s[1:-1] if s.startswith('"') and s.endswith('"') else s for s in _strings(parsed)]


def _python(text: str) -> list[str]:
    tree = ast.parse(text)
    names = [t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets
             if isinstance(t, ast.Name)]
    _no_dup(names, "module-level names")
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def _shell(text: str) -> list[str]:
    words = []
    for line in text.splitlines():
        words += shlex.split(line, comments=True)
    return words


def _dotenv(text: str) -> list[str]:
    _no_dup(_uncommented_keys(text, "#", r"\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.]*)\s*="), ".env keys")
    return [v for v in dotenv_values(stream=io.StringIO(text), interpolate=False).values() if v is not None]


def _npmrc(text: str) -> list[str]:
    _no_dup(_uncommented_keys(text, ";", r"\s*([^=#;\s]+)\s*="), ".npmrc keys")
    return _ini(text, "[npmrc]\n", delimiters=("=",), comment_prefixes=("#", ";"))


PARSERS: dict[str, Callable[[str], list[str]]] = {
    "dotenv": _dotenv,
    "yaml_config": lambda t: list(_strings(yaml.load(t, Loader=_UniqueKeyLoader))),
    "json_config": lambda t: list(_strings(json.loads(t, object_pairs_hook=_no_dup_pairs))),
    "ini_config": lambda t: _ini(t, interpolation=configparser.BasicInterpolation()),
    "toml_config": lambda t: list(_strings(tomllib.loads(t))),
    "k8s_secret": _k8s,
    "k8s_secret_json": _k8s_json,
    "gcp_service_account": _gcp_sa,
    "npmrc": _npmrc,
    "pypirc": _pypirc,
    "terraform": _hcl,
    "python_source": _python,
    "shell_history": _shell,
    "pem_file": _pem,
}


def _commented(text: str, start: int) -> bool:
    line = text[text.rfind("\n", 0, start) + 1:start].lstrip()
    return line.startswith(("#", ";", "//"))


def check(record: Any) -> list[str]:
    """Problems of ``record`` as a file of its template's format ([] if valid)."""
    parse = PARSERS.get(record.template)
    if parse is None:
        return consistency_problems(record)
    try:
        values = parse(record.text)
    except (Problem, ValueError, SyntaxError, yaml.YAMLError, configparser.Error, tomllib.TOMLDecodeError,
            KeyError, TypeError, AttributeError) as exc:
        return [f"{record.template}: {type(exc).__name__}: {str(exc)[:200]}"]
    except Exception as exc:  # noqa: BLE001 - hcl2's parser raises lark's own errors
        return [f"{record.template}: {type(exc).__name__}: {str(exc)[:200]}"]
    problems = []
    for span in record.secrets + record.decoys:
        label = record.text[span.start:span.end]
        line_start = record.text.rfind("\n", 0, span.start) + 1
        line_end = record.text.find("\n", span.end)
        whole_line = record.text[line_start:line_end if line_end >= 0 else None] == label
        if _commented(record.text, span.start) or "\n" in label.strip("\n") or whole_line:
            continue  # a comment keeps text, not a value; blocks and whole command lines are no one value
        wanted = {label, label.replace("\\n", "\n")}
        if not any(w in v for v in values for w in wanted):
            problems.append(f"{record.template}: {span.family} {label[:60]!r} is not a value the parser returns")
        elif any(v == q + w + q for v in values for w in wanted for q in "\"'"):
            # configparser keeps quotes: the value read back is not the labelled one
            problems.append(f"{record.template}: {span.family} {label[:60]!r} reads back with its quotes")
    return problems + consistency_problems(record)


# -- what a log, a traceback or a source file must also be to be one ------------------------

_TIMES = {
    "ci_log": (re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3})Z "), "%Y-%m-%dT%H:%M:%S.%f"),
    "logfmt": (re.compile(r"^ts=(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3})Z "), "%Y-%m-%dT%H:%M:%S.%f"),
    "http_access_log": (re.compile(r"^\S+ - - \[(\d\d/\w{3}/\d{4}:\d\d:\d\d:\d\d) \+0000\] "), "%d/%b/%Y:%H:%M:%S"),
    "syslog": (re.compile(r"^(\w{3} [ \d]\d \d\d:\d\d:\d\d) "), "%b %d %H:%M:%S"),
}
# Apache's combined format: host ident user [time] "request" status bytes "referer" "agent",
# then what a server appends (key=value fields).
_COMBINED = re.compile(r'^\S+ \S+ \S+ \[[^\]]+\] "[A-Z]+ \S+ HTTP/1\.[01]" \d{3} (?:\d+|-) "[^"]*" "[^"]*"(?: \S.*)?$')
_LOGFMT_PAIR = re.compile(r'[A-Za-z_][A-Za-z0-9_.-]*=(?:"(?:[^"\\]|\\.)*"|[^\s"=]*)')
_LOCAL = re.compile(r"^    ([A-Za-z_][A-Za-z0-9_]*) = ")
_ECHO = re.compile(r'^\$ echo "([^"]*)" >> \.env$')  # a value written to a file (not "$VAR" on purpose)
_STEP = re.compile(r"Step (\d+)/(\d+) ")
# A `docker build` step as the legacy builder prints it: "Step N/M : <instruction args>",
# the Dockerfile's instruction for that step; a Dockerfile's first is FROM (or an ARG
# before it), and "Successfully built <id>" ends the build, after its last step.
_DOCKER_STEP = re.compile(r" Step (\d+)/(\d+) : (\S+)")
_DOCKER_INSTRUCTIONS = frozenset({"FROM", "ARG", "WORKDIR", "COPY", "ADD", "RUN", "ENV", "EXPOSE", "CMD",
                                  "ENTRYPOINT", "USER", "LABEL", "VOLUME", "HEALTHCHECK", "SHELL",
                                  "STOPSIGNAL", "ONBUILD"})
_DOCKER_BUILT = re.compile(r" Successfully built [0-9a-f]+$")


def _logfmt_problems(line: str) -> list[str]:
    pos, problems = 0, []
    while pos < len(line):
        m = _LOGFMT_PAIR.match(line, pos)
        if m is None or (m.end() < len(line) and line[m.end()] != " "):
            return [f"logfmt: not key=value pairs at {line[pos:pos + 40]!r}"]
        pos = m.end() + 1
    return problems


def consistency_problems(record: Any) -> list[str]:
    """What a real reader of the file would trip on beyond its syntax: a log whose
    times go back, an access-log line that is not in combined format, a logfmt line
    that is not key=value pairs, a build step past its total or not after the one
    before, a typed ``echo "..."`` the shell would expand, a traceback not laid out as
    `traceback` prints one or a frame naming a local twice, a JavaScript file
    mixing ES module and CommonJS exports, a YAML file naming two apps in its header, a
    .env or tfvars file naming two environments or apps, an sshd client on a service's
    port, a 204 with a body, a line a GitLab runner does not write, psycopg2 off 5432."""
    text, template, problems = record.text, record.template, []
    lines = text.splitlines()
    if template in _TIMES:
        pattern, fmt = _TIMES[template]
        times = [datetime.strptime(m.group(1), fmt) for ln in lines if (m := pattern.match(ln))]
        if any(b < a for a, b in itertools.pairwise(times)):
            problems.append(f"{template}: times go back")
        if not times:
            problems.append(f"{template}: no time read")
    if template == "http_access_log":
        problems += [f"not combined log format: {ln[:80]!r}" for ln in lines if not _COMBINED.match(ln)]
    if template == "logfmt":
        problems += [p for ln in lines for p in _logfmt_problems(ln)]
    if template == "ci_log":
        steps = [(int(m.group(1)), int(m.group(2))) for ln in lines if (m := _STEP.search(ln))]
        problems += [f"ci_log: step {n}/{total}" for n, total in steps if n > total]
        if any(b <= a for (a, _), (b, _) in itertools.pairwise(steps)):  # a runner prints each step once, in order
            problems.append(f"ci_log: steps out of order: {[n for n, _ in steps]}")
        if len({total for _, total in steps}) > 1:
            problems.append(f"ci_log: steps of two totals: {sorted({total for _, total in steps})}")
        problems += _docker_build_problems(lines)
    if template == "gitlab_ci_log":
        problems += [f"the shell would expand {m.group(1)[:60]!r}" for ln in lines if (m := _ECHO.match(ln))
                     and any(c in m.group(1) for c in "$`!")]
    if template == "stack_trace":
        problems += _traceback_problems(lines)
        frame: list[str] = []
        for ln in lines:
            if ln.startswith("  File "):
                frame = []
            elif m := _LOCAL.match(ln):
                if m.group(1) in frame:
                    problems.append(f"stack_trace: a frame names {m.group(1)} twice")
                frame.append(m.group(1))
    if template == "js_source":
        live = [ln for ln in lines if not ln.startswith("//")]
        if any(ln.startswith("export ") for ln in live) and any(ln.startswith("module.exports") for ln in live):
            problems.append("js_source: ES module exports and module.exports in one file")
    if template in ("dotenv", "terraform"):
        problems += _one_app_problems(template, text)
    if template == "syslog":
        problems += [f"syslog: sshd names a client port {m.group(1)} outside the ephemeral range" for ln in lines
                     if (m := _SSHD_PORT.search(ln)) and not 32768 <= int(m.group(1)) <= 65535]
    if template == "http_access_log":
        problems += [f"a 204 response with a body: {ln[:80]!r}" for ln in lines if (m := _STATUS_BYTES.search(ln))
                     and m.group(1) == "204" and m.group(2) not in ("0", "-")]
    if template == "gitlab_ci_log":
        problems += [f"gitlab_ci_log: not a runner's line: {ln[:60]!r}" for ln in lines if _NOT_GITLAB.match(ln)]
    if template == "stack_trace":
        problems += [f"stack_trace: psycopg2 at port {m.group(1)}" for ln in lines if (m := _PG_PORT.search(ln))
                     and m.group(1) != "5432"]
    if template == "yaml_config":
        head = "\n".join(lines[:4])
        apps = set(re.findall(r"^# (\S+)\.yaml$|^  name: (\S+)$|^  image: \S+/([^/:]+):", head, re.M))
        named = {a for group in apps for a in group if a}
        if len(named) != 1:
            problems.append(f"yaml_config: the header names {sorted(named)}")
    return problems


# A realism audit (2026-12-04) read corpus-v13's filler lines as their readers would: an
# sshd client port was a service's (80, 5432), a 204 carried a body, a GitLab job log
# said "Job 1464831 finished in 608ms" (twice, with two ids), a psycopg2 error named
# Redis's port, and a .env or tfvars header named another environment than its values.
_SSHD_PORT = re.compile(r"sshd\[\d+\]: Accepted \S+ for \S+ from \S+ port (\d+)")
_STATUS_BYTES = re.compile(r'^\S+ \S+ \S+ \[[^\]]+\] "[^"]*" (\d{3}) (\d+|-) ')
_NOT_GITLAB = re.compile(r"^Job \d+ ")
_PG_PORT = re.compile(r"\(psycopg2\.OperationalError\) connection to server at \S+ port (\d+) failed")
_ONE_APP = {"dotenv": (r"^# (\S+) — environment for (\w+)$", r"^(?:export )?NODE_ENV=['\"]?(\w+)"),
            "terraform": (r"^# terraform\.tfvars for (\S+) \((\w+)\)$", r'^environment = "(\w+)"')}


def _one_app_problems(template: str, text: str) -> list[str]:
    """A file's header, its environment setting and its tags name one app and environment."""
    head_re, env_re = _ONE_APP[template]
    head = re.search(head_re, text, re.M)
    if head is None:
        return []
    app, env = head.groups()
    problems = [f"{template}: the header says {env}, a setting {m.group(1)}" for m in re.finditer(env_re, text, re.M)
                if m.group(1) != env]
    problems += [f"{template}: the header names {app}, the tags {m.group(1)}"
                 for m in re.finditer(r'^tags = \{ team = "([^"]+)"', text, re.M) if m.group(1) != app]
    return problems


# What CPython's traceback module prints for an exception with its frames' locals
# (``TracebackException(..., capture_locals=True)``, as ``python -m unittest --locals``
# shows a failure): per frame its File line and source line, then each local as
# ``    name = repr(value)``, sorted by name, under no header: Python 3.10's and 3.13's
# layout, run (3.11 and 3.12 put a caret line under some source lines; the corpus
# writes none). corpus-v14 before this wrote an "  Locals:" line under each frame,
# which no Python prints, and its locals in drawn order. A value the corpus writes is a
# literal, so its repr reads back through `ast.literal_eval`.
_TB_HEAD = "Traceback (most recent call last):"
_TB_FILE = re.compile(r'^  File "[^"]+", line \d+, in [A-Za-z_<][\w<>]*$')
_TB_SOURCE = re.compile(r"^    \S")
_TB_EXCEPTION = re.compile(r"^[A-Za-z_][\w.]*(?:: .+)?$")
# The repr of an object with none of its own (`object.__repr__`) and of a function: a
# frame's arguments (a Settings object, a wrapper's fn), address as CPython prints it.
_OBJECT_REPR = re.compile(r"^<(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w* object at 0x[0-9a-f]+>$")
_FUNCTION_REPR = re.compile(r"^<function [A-Za-z_]\w*(?:\.(?:[A-Za-z_]\w*|<locals>))* at 0x[0-9a-f]+>$")


def _is_repr(value: str) -> bool:
    """Whether ``value`` is what ``repr`` prints for the value it reads back as."""
    try:
        with warnings.catch_warnings():  # an invalid escape ("\d") warns, then reads as itself
            warnings.simplefilter("ignore")
            return repr(ast.literal_eval(value)) == value
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return False


def _read_names(source: str) -> set[str] | None:
    """The names a frame's source line reads that must be the frame's locals: every
    loaded name but one only called (``create_engine``, ``connect``: a module's global,
    which `traceback` does not print); None if the line is not Python."""
    try:
        tree = ast.parse(source.strip())
    except SyntaxError:
        return None
    called = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    return {node.id for node in ast.walk(tree)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and id(node) not in called}


def _traceback_problems(lines: list[str]) -> list[str]:
    """Lines out of the layout of `traceback`'s output with captured locals."""
    if not lines or lines[0] != _TB_HEAD:
        return [f"stack_trace: the first line is not {_TB_HEAD!r}"]
    problems: list[str] = []
    i, frames = 1, 0
    while i < len(lines) and lines[i].startswith("  File "):
        frames += 1
        if not _TB_FILE.match(lines[i]):
            problems.append(f"stack_trace: not a frame's File line: {lines[i][:80]!r}")
        read: set[str] | None = set()
        if i + 1 >= len(lines) or not _TB_SOURCE.match(lines[i + 1]):
            problems.append(f"stack_trace: a frame with no source line after {lines[i][:80]!r}")
        elif (read := _read_names(lines[i + 1])) is None:
            problems.append(f"stack_trace: a source line that is not Python: {lines[i + 1][:80]!r}")
        i += 2
        names = []
        while i < len(lines) and (m := _LOCAL.match(lines[i])):
            value = lines[i][m.end():]
            if not (_is_repr(value) or _OBJECT_REPR.match(value) or _FUNCTION_REPR.match(value)):
                problems.append(f"stack_trace: {m.group(1)} = {value[:60]!r} is not a repr")
            names.append(m.group(1))
            i += 1
        if names != sorted(names):
            problems.append(f"stack_trace: a frame's locals are not sorted by name: {names}")
        if missing := sorted((read or set()) - set(names)):  # its arguments are locals, printed too
            problems.append(f"stack_trace: a frame's source line reads {missing}, not among its locals")
        if i < len(lines) and not lines[i].startswith("  File ") and i != len(lines) - 1:
            problems.append(f"stack_trace: a line traceback does not print: {lines[i][:80]!r}")
            while i < len(lines) - 1 and not lines[i].startswith("  File "):
                i += 1
    if not frames:
        problems.append("stack_trace: no frame")
    if i != len(lines) - 1 or not _TB_EXCEPTION.match(lines[-1]):
        problems.append(f"stack_trace: the last line is not the exception: {lines[-1][:80]!r}")
    return problems


def _docker_build_problems(lines: list[str]) -> list[str]:
    """A `docker build` no Dockerfile prints: a step that names no instruction, a first
    step that is not FROM (corpus-v14 before its last fix printed "RUN make build" at
    every step), or "Successfully built" twice, before the last step or with none shown
    (it followed step 1/9)."""
    problems: list[str] = []
    last = None  # where the last step (M/M) is
    for k, ln in enumerate(lines):
        if not (m := _DOCKER_STEP.search(ln)):
            continue
        number, total, instruction = int(m.group(1)), int(m.group(2)), m.group(3)
        if instruction not in _DOCKER_INSTRUCTIONS:
            problems.append(f"ci_log: step {number}/{total} runs no Dockerfile instruction: {instruction!r}")
        elif number == 1 and instruction not in ("FROM", "ARG"):
            problems.append(f"ci_log: a Dockerfile's first step is FROM, not {instruction}")
        if number == total:
            last = k
    built = [k for k, ln in enumerate(lines) if _DOCKER_BUILT.search(ln)]
    if len(built) > 1:
        problems.append(f"ci_log: {len(built)} 'Successfully built' lines for one build")
    if built and (last is None or built[0] < last):
        problems.append("ci_log: 'Successfully built' before the build's last step")
    return problems


def url_problems(text: str) -> list[str]:
    """URLs with a userinfo whose percent-encoding is invalid."""
    return [m.group(0) for m in _USERINFO_URL.finditer(text) if _BAD_ESCAPE.search(m.group(1))]

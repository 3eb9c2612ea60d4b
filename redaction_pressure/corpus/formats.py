"""How a record's values are written so that the record is a valid file of its format.

corpus-v2 wrote every value as one template line, which gave half of its structured
records a repeated key (a house credential and its sandbox look-alike under one key of
one TOML table, say) and unquoted YAML that does not parse. Here every structured
template has a writer that knows its format:

- keys are unique where the format requires it: a value whose key is already taken
  moves to another section of the file (``[sandbox]``, a second YAML or JSON block, a
  second Kubernetes Secret), or, in a flat file (.env, .npmrc, tfvars, source code),
  becomes a commented-out line, as a previous value kept for reference does;
- every value is quoted the way its format reads it back verbatim (a YAML value that
  would read as a number, a boolean or an alias is quoted; a shell value with ``!`` or
  ``$`` is single-quoted), so a labelled span is exactly the characters the file holds
  and its parser returns; a value no quoting of the format can carry verbatim is
  refused (`CannotPlace`) and the record is drawn again;
- Kubernetes Secrets carry the ``type`` their data needs, pypirc files the index
  servers they name, service-account key files their fixed fields.

Log-like templates (access logs, CI logs, syslog, logfmt, stack traces, shell
history) keep line formats; each format says which values it can carry (a URL query
takes only characters that need no percent-encoding).

Tests parse every structured record of dev and train tasks with its format's own
parser (json with a duplicate-key hook, PyYAML with a duplicate-key check, tomllib,
configparser strict, python-dotenv, python-hcl2 and a duplicate check, shlex, ast).
"""

from __future__ import annotations

import hashlib
import re
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import cache
from typing import TYPE_CHECKING

from .families import Family
from .policy import FIELD_CATEGORIES
from .rng import Rng
from .templates import FIELDS, MONTHS, PAD2, PAD3, SPACED2

if TYPE_CHECKING:
    from .templates import Template
    from .world import World

Labels = list[tuple[int, int, Family]]


class CannotPlace(Exception):
    """A value this format cannot carry verbatim here: the record is drawn again."""


@dataclass
class Item:
    """One value to write: a family's fragment under its key, or a filler."""
    key: str
    value: str
    labels: Labels  # spans inside ``value``, with their families
    context: str  # kv | escaped | block | shell | k8s | scoped | npmrc | pypirc | gcp_sa | filler
    variant: str = ""
    literal: bool = False  # a filler number or boolean: unquoted where the format has types
    section: str | None = None  # the one section of the file it belongs in


@dataclass
class Out:
    """The record's text as it is written, and the absolute spans of its labels."""
    parts: list[str] = field(default_factory=list)
    labels: Labels = field(default_factory=list)
    pos: int = 0

    def add(self, text: str, labels: Sequence[tuple[int, int, Family]] = ()) -> None:
        if labels:
            pos = self.pos
            self.labels += [(pos + s, pos + e, f) for s, e, f in labels]
        self.parts.append(text)
        self.pos += len(text)

    def line(self, text: str = "", labels: Sequence[tuple[int, int, Family]] = ()) -> None:
        if labels:
            pos = self.pos
            self.labels += [(pos + s, pos + e, f) for s, e, f in labels]
        self.parts.append(text + "\n")
        self.pos += len(text) + 1

    def value_line(self, head: str, item: Item, quote: tuple[str, str], tail: str = "") -> None:
        """``head`` + quoted value + ``tail`` on one line, the value's labels kept."""
        opening, closing = quote
        value = item.value
        start = self.pos + len(head) + len(opening)
        if item.labels:
            self.labels += [(start + s, start + e, f) for s, e, f in item.labels]
        self.parts.append(f"{head}{opening}{value}{closing}{tail}\n")
        self.pos = start + len(value) + len(closing) + len(tail) + 1

    @property
    def text(self) -> str:
        return "".join(self.parts)


# -- filling {field}s ------------------------------------------------------------------

_FORMATTER = string.Formatter()


Field = tuple[str, str | None, bool, Callable[[Rng], str] | None]


@cache
def _parsed(fmt: str) -> tuple[str | None, bool, tuple[Field, ...]]:
    """``fmt`` as its text when it has no field, whether a field occurs twice, and its
    (literal, field name or None, whether the field draws a policy category, its
    `FIELDS` drawer) parts."""
    parts = tuple((literal, name, name in FIELD_CATEGORIES, FIELDS.get(name) if name is not None else None)
                  for literal, name, _, _ in _FORMATTER.parse(fmt))
    names = [name for _, name, _, _ in parts if name is not None]
    return ("".join(literal for literal, _, _, _ in parts) if not names else None,
            len(set(names)) < len(names), parts)


_NO_FIXED: dict[str, str] = {}  # (never written to)


def fill(fmt: str, r: Rng, world: World, **fixed: str) -> tuple[str, Labels]:
    """Fills a template line; a field that draws a policy category (``{host}``,
    ``{ip}``) comes back as a labelled span, secret or decoy as the policy says."""
    return _fill(fmt, r, world, fixed)


def _fill(fmt: str, r: Rng, world: World, fixed: dict[str, str]) -> tuple[str, Labels]:
    """`fill` with its fixed fields as one dict (callers filling many lines build it once)."""
    text, repeats, parts = _parsed(fmt)
    if text is not None:
        return text, []
    out: list[str] = []
    append = out.append
    spans: Labels = []
    # a field that occurs twice is drawn once
    drawn: dict[str, tuple[str, Family | None]] | None = {} if repeats else None
    for literal, name, category, draw in parts:
        if literal:
            append(literal)
        if name is None:
            continue
        if name in fixed:
            append(fixed[name])
            continue
        if drawn is not None and name in drawn:
            value, family = drawn[name]
        else:
            # Only a category field can come back labelled (`World.field` answers None
            # for any other, drawing nothing): the others are drawn here directly.
            labelled = world.field(name, r) if category else None
            if labelled:
                value, family = labelled
            else:
                value, family = (draw or FIELDS[name])(r), None
            if drawn is not None:
                drawn[name] = (value, family)
        if family is not None:
            pos = sum(map(len, out))
            spans.append((pos, pos + len(value), family))
        append(value)
    return "".join(out), spans


def filler_items(template: Template, r: Rng, world: World, fixed: dict[str, str] = _NO_FIXED) -> list[Item]:
    """One to four of the template's filler entries, each key at most once."""
    chosen = r.sample(template.entries, min(len(template.entries), r.between(*world.lv.lines_per_record)))
    items = []
    for key, fmt, literal in chosen:
        value, labels = _fill(fmt, r, world, fixed)
        items.append(Item(key, value, labels, "filler", "", literal))
    return items


# -- quoting: how each format carries a value verbatim -----------------------------------

# The stdlib's `re` for these fixed ASCII patterns (the same matches; a third of
# `regex`'s cost per call, and each runs per value or per line).
_YAML_PLAIN = re.compile(r"[A-Za-z_/$<][A-Za-z0-9_./@+=~$<>()-]*")
_YAML_WORDS = frozenset({"true", "false", "yes", "no", "on", "off", "null", "y", "n", "~"})
_DOTENV_BARE = re.compile(r"[A-Za-z0-9_./:@%+,~=*-]+")
# (no ~ first: a word's leading ~ names a home directory, and zsh stops at an unknown one)
_SHELL_BARE = re.compile(r"(?!~)[A-Za-z0-9_./:@%+,~=-]+")
_NPMRC_BARE = re.compile(r"[A-Za-z0-9_./:@%+,~=*!${}-]+")
_NOT_NEWLINE_ESCAPE = re.compile(r"\\(?!n)")
_CONTROL = re.compile(r"[\x00-\x1f]")


def _has(value: str, chars: str) -> bool:
    for c in chars:  # noqa: SIM110 - a loop: any() over a generator costs twice as much for so few
        if c in value:
            return True
    return False


def yaml_quote(value: str, r: Rng) -> tuple[str, str]:
    if "\n" in value:
        raise CannotPlace
    plain = _YAML_PLAIN.fullmatch(value) is not None and value.lower() not in _YAML_WORDS
    if plain and not r.chance(1, 3):
        return "", ""
    if not _has(value, '"\\'):
        return '"', '"'
    if "'" not in value:
        return "'", "'"
    raise CannotPlace


def json_quote(value: str, escaped: bool) -> tuple[str, str]:
    """Verbatim inside a JSON string: no quote, no control character, and a backslash
    only where the value is itself JSON-escaped text (``\\n`` in a service-account key)."""
    if '"' in value or _CONTROL.search(value):
        raise CannotPlace
    if "\\" in value and (not escaped or _NOT_NEWLINE_ESCAPE.search(value)):
        raise CannotPlace
    return '"', '"'


def toml_quote(value: str) -> tuple[str, str]:
    if "\n" in value or _CONTROL.search(value):
        raise CannotPlace
    if not _has(value, '"\\'):
        return '"', '"'
    if "'" not in value:
        return "'", "'"
    raise CannotPlace


def dotenv_quote(value: str, r: Rng, escaped: bool = False) -> tuple[str, str]:
    if escaped:  # python-dotenv decodes \n inside double quotes, as dotenv files mean it
        if _has(value, '"$') or "\n" in value:
            raise CannotPlace
        return '"', '"'
    if "\n" in value:
        raise CannotPlace
    if _DOTENV_BARE.fullmatch(value) and r.chance(1, 2):
        return "", ""
    if "'" not in value:
        return "'", "'"
    if not _has(value, '"\\$`'):
        return '"', '"'
    raise CannotPlace


def shell_quote(value: str) -> tuple[str, str]:
    if "\n" in value:
        raise CannotPlace
    if _SHELL_BARE.fullmatch(value):
        return "", ""
    if "'" not in value:
        return "'", "'"
    raise CannotPlace


def python_quote(value: str, r: Rng) -> tuple[str, str]:
    if "\n" in value or "\\" in value:
        raise CannotPlace
    options = [q for q in ('"', "'") if q not in value]
    if not options:
        raise CannotPlace
    q = r.choice(options)
    return q, q


def hcl_quote(value: str) -> tuple[str, str]:
    if _has(value, '"\\\n') or "${" in value or "%{" in value:
        raise CannotPlace
    return '"', '"'


def ini_quote(value: str, interpolated: bool = False) -> tuple[str, str]:
    """Bare: configparser (and twine, reading a .pypirc through it) keeps quotes as part
    of the value, so a quoted value would read back as another value. ``interpolated``:
    the file's reader is ``ConfigParser()`` with its default interpolation (an app's
    settings, as alembic.ini and Paste/Pyramid .ini files are read), which refuses a
    lone % on reading the value; such a value is drawn again rather than written %%,
    so the text labelled is the value the app reads. Twine reads a .pypirc raw."""
    if "\n" in value or value != value.strip() or not value or "%(" in value or (interpolated and "%" in value):
        raise CannotPlace  # (ConfigParser reads "%(name)s" as a reference to another option)
    return "", ""


def npmrc_quote(value: str) -> tuple[str, str]:
    if "\n" in value:
        raise CannotPlace
    if _NPMRC_BARE.fullmatch(value):
        return "", ""
    if not _has(value, '"\\'):
        return '"', '"'
    raise CannotPlace


# -- layout: unique keys -----------------------------------------------------------------

def sections(items: list[Item], first: str, pool: tuple[str, ...], r: Rng,
             fold: Callable[[str], str] = str.lower) -> list[tuple[str, list[Item]]]:
    """Items in sections where each key occurs once: an item whose key its section
    already holds goes to the next section without it, or to a new one from ``pool``."""
    out: list[tuple[str, list[Item], set[str]]] = [(first, [], set())]
    spare = [name for name in r.shuffled(pool) if name != first]
    for item in items:
        key = fold(item.key)
        if item.section is not None:  # it belongs in one section: that one, made if missing
            home = next((entry for entry in out if entry[0] == item.section), None)
            if home is None:
                home = (item.section, [], set())
                out.append(home)
                if item.section in spare:
                    spare.remove(item.section)
            if key in home[2]:
                raise CannotPlace
            home[1].append(item)
            home[2].add(key)
            continue
        for _, members, keys in out:
            if key not in keys:
                members.append(item)
                keys.add(key)
                break
        else:
            if not spare:
                raise CannotPlace
            out.append((spare.pop(), [item], {key}))
    return [(name, members) for name, members, _ in out]


def flat(items: list[Item], fold: Callable[[str], str] = str.lower) -> list[tuple[Item, bool]]:
    """Items with, for each, whether its line is commented out: a key's later values
    are kept as comments, as a previous value kept for reference is."""
    seen: set[str] = set()
    out = []
    for item in items:
        key = fold(item.key)
        out.append((item, key in seen))
        seen.add(key)
    return out


def _key(template: Template, key: str) -> str:
    if template.key_case == "keep":
        return key
    return key.upper() if template.key_case == "upper" else key.lower()


@cache
def _lines(lines: tuple[str, ...]) -> str:
    return "\n".join(lines)


def _header(template: Template, out: Out, r: Rng, world: World, fixed: dict[str, str] = _NO_FIXED) -> None:
    """The header's lines, filled together: a file names one app (a YAML file's
    comment, ``name:`` and image agree)."""
    if template.header:
        out.line(*_fill(_lines(template.header), r, world, fixed))


def _footer(template: Template, out: Out, r: Rng, world: World, fixed: dict[str, str] = _NO_FIXED) -> None:
    if template.footer:
        out.line(*_fill(_lines(template.footer), r, world, fixed))


def _mix(template: Template, items: list[Item], r: Rng, world: World,
         fixed: dict[str, str] = _NO_FIXED) -> list[Item]:
    for item in items:
        item.key = _key(template, item.key)
    return r.shuffled(items + filler_items(template, r, world, fixed))


def _one_app(r: Rng) -> dict[str, str]:
    """A file's app and environment, drawn once: a .env's header and its NODE_ENV, a
    tfvars file's header, ``environment`` and ``tags`` name the same ones (a realism
    audit, 2026-12-04, found two thirds of corpus-v13's disagreeing)."""
    return {"app": FIELDS["app"](r), "env": FIELDS["env"](r)}


# -- structured writers ------------------------------------------------------------------

def write_dotenv(template: Template, items: list[Item], r: Rng, world: World) -> Out:
    out, fixed = Out(), _one_app(r)
    _header(template, out, r, world, fixed)
    for item, commented in flat(_mix(template, items, r, world, fixed), fold=str):
        head = ("# " if commented else "") + ("export " if r.chance(1, 5) else "") + item.key + "="
        out.value_line(head, item, dotenv_quote(item.value, r, escaped=item.context == "escaped"))
    if r.chance(1, 3):
        out.line(*fill("# rotated {date}", r, world))
    return out


def write_yaml(template: Template, items: list[Item], r: Rng, world: World) -> Out:
    out = Out()
    _header(template, out, r, world)
    mixed = _mix(template, items, r, world)
    for name, members in sections(mixed, r.choice(template.sections), template.sections, r):
        out.line(f"{name}:")
        for item in members:
            if item.context == "block":
                out.line(f"  {item.key}: |")
                indented = item.value.replace("\n", "\n    ")
                shift = _indent_labels(item.value, item.labels, "    ")
                out.line("    " + indented, [(s + 4, e + 4, f) for s, e, f in shift])
            elif item.literal:
                out.value_line(f"  {item.key}: ", item, ("", ""))
            else:
                out.value_line(f"  {item.key}: ", item, yaml_quote(item.value, r))
    return out


def _indent_labels(value: str, labels: Labels, indent: str) -> Labels:
    """Labels of a multi-line value once every line after the first is indented: a
    label grows by the indentation inside it and moves by the indentation before it."""
    out = []
    for s, e, f in labels:
        before, inside = value.count("\n", 0, s), value.count("\n", s, e)
        out.append((s + before * len(indent), e + (before + inside) * len(indent), f))
    return out


def write_json(template: Template, items: list[Item], r: Rng, world: World) -> Out:
    out = Out()
    groups = sections(_mix(template, items, r, world), r.choice(template.sections), template.sections, r)
    app, labels = fill("{app}", r, world)
    out.line("{")
    out.line(f'  "service": "{app}",', [(s + 14, e + 14, f) for s, e, f in labels])
    for name, members in groups:
        out.line(f'  "{name}": {{')
        for i, item in enumerate(members):
            tail = "," if i < len(members) - 1 else ""
            quote = ("", "") if item.literal else json_quote(item.value, item.context == "escaped")
            out.value_line(f'    "{item.key}": ', item, quote, tail)
        out.line("  },")
    out.line(*fill('  "version": {small}', r, world))
    out.line("}")
    return out


def write_ini(template: Template, items: list[Item], r: Rng, world: World) -> Out:
    out = Out()
    _header(template, out, r, world)
    style = r.choice(("{k} = ", "{k}=", "{k} = "))
    for g, (name, members) in enumerate(sections(_mix(template, items, r, world), r.choice(template.sections),
                                                 template.sections, r)):
        if g:
            out.line()
        out.line(f"[{name}]")
        for item in members:
            out.value_line(style.format(k=item.key), item, ini_quote(item.value, interpolated=True))
    return out


def write_toml(template: Template, items: list[Item], r: Rng, world: World) -> Out:
    out = Out()
    _header(template, out, r, world)
    for g, (name, members) in enumerate(sections(_mix(template, items, r, world), r.choice(template.sections),
                                                 template.sections, r, fold=str)):
        if g:
            out.line()
        out.line(f"[{name}]")
        for item in members:
            out.value_line(f"{item.key} = ", item, ("", "") if item.literal else toml_quote(item.value))
    return out


def write_hcl(template: Template, items: list[Item], r: Rng, world: World) -> Out:
    out, fixed = Out(), _one_app(r)
    _header(template, out, r, world, fixed)
    for item, commented in flat(_mix(template, items, r, world, fixed), fold=str):
        head = ("# " if commented else "") + item.key + " = "
        out.value_line(head, item, ("", "") if item.literal else hcl_quote(item.value))
    if r.chance(1, 2):
        out.line(*_fill('tags = {{ team = "{app}", managed_by = "terraform" }}', r, world, fixed))
    return out


def write_python(template: Template, items: list[Item], r: Rng, world: World) -> Out:
    out = Out()
    _header(template, out, r, world)
    previous: dict[str, int] = {}
    for item, commented in flat(_mix(template, items, r, world), fold=str):
        head = ("# " if commented else "") + item.key + " = "
        if item.context == "block":
            if '"""' in item.value or "\\" in item.value:
                raise CannotPlace
            # a second block under one name is kept as the previous one, not commented
            # out (a third as the one before: module-level names stay unique)
            if commented:
                n = previous[item.key] = previous.get(item.key, 0) + 1
                head = f"{item.key}_PREVIOUS" + (f"_{n}" if n > 1 else "") + " = "
            out.value_line(head, item, ('"""', '"""'))
        elif item.literal:
            out.value_line(head, item, ("", ""))
        else:
            out.value_line(head, item, python_quote(item.value, r))
    return out


def write_js(template: Template, items: list[Item], r: Rng, world: World) -> Out:
    """An ES module (some constants exported where they are declared, the rest in one
    ``export { ... }``) or a CommonJS one (``module.exports``): one system per file, as
    Node runs a file under one."""
    out = Out()
    _header(template, out, r, world)
    esm = r.chance(1, 2)
    names = []
    for item, commented in flat(_mix(template, items, r, world), fold=str):
        exported = esm and r.chance(1, 3)
        head = ("// " if commented else "") + ("export const " if exported else "const ") + item.key + " = "
        if not commented and not exported:
            names.append(item.key)
        out.value_line(head, item, ("", "") if item.literal else python_quote(item.value, r), ";")
    if names:
        out.line(f"export {{ {', '.join(names)} }};" if esm else f"module.exports = {{ {', '.join(names)} }};")
    return out


def write_npmrc(template: Template, items: list[Item], r: Rng, world: World) -> Out:
    out = Out()
    _header(template, out, r, world)
    mixed = []
    for item in _mix(template, items, r, world):
        # npm reads a token only as a registry's _authToken (any other key is an unknown
        # config npm warns about and ignores): an npm_ token is npmjs.org's, a GitHub
        # token GitHub Packages'.
        if item.context == "npmrc":
            registry = "//npm.pkg.github.com/" if item.value.startswith("gh") else "//registry.npmjs.org/"
            item.key = f"{registry}:_authToken"
        mixed.append(item)
    for item, commented in flat(mixed, fold=str):
        out.value_line(("; " if commented else "") + item.key + "=", item, npmrc_quote(item.value))
    return out


_PYPI_SECTIONS = {"pypi": "https://upload.pypi.org/legacy/", "testpypi": "https://test.pypi.org/legacy/"}


def write_pypirc(template: Template, items: list[Item], r: Rng, world: World) -> Out:
    """A .pypirc: [distutils] names the index servers; each server's section holds its
    repository, username and password, once. A PyPI token goes to the index it names
    (its macaroon says pypi.org or test.pypi.org), other passwords to a private index."""
    by_section: dict[str, list[Item]] = {}
    for item in items:
        # a pypi-AgEI... placeholder stands where the PyPI token goes
        section = "pypi" if item.variant == "pypi_token" else item.variant if item.variant in _PYPI_SECTIONS \
            else "internal"
        by_section.setdefault(section, []).append(item)
    names = sorted(by_section) or ["pypi"]
    out = Out()
    out.line("[distutils]")
    out.line("index-servers =")
    for name in names:
        out.line(f"    {name}")
    for name in names:
        out.line()
        out.line(f"[{name}]")
        if name in _PYPI_SECTIONS:
            out.line(f"repository = {_PYPI_SECTIONS[name]}")
            out.line("username = __token__")
        else:
            out.line(*fill("repository = https://{host}/simple/", r, world))
            out.line(*fill("username = {user}", r, world))
        for k, item in enumerate(by_section.get(name, [])):
            out.value_line(("# " if k else "") + "password = ", item, ini_quote(item.value))
    return out


def _secrets(items: list[Item], r: Rng) -> list[tuple[str, str, list[Item]]]:
    """Kubernetes Secrets whose type matches their data: Opaque for plain keys (a key
    once per Secret), one ``kubernetes.io/dockerconfigjson`` Secret per registry
    credential, whose only key is ``.dockerconfigjson``. Data keys in sorted order, as
    ``kubectl get -o yaml`` / ``-o json`` print a Secret (Go maps marshal sorted): in
    the order the values were planned, a Secret's first key was its secret in 95% of
    level-5 held-out Secrets (corpus-v5), a position any reader could take."""
    opaque = [i for i in items if i.key != ".dockerconfigjson"]
    docker = [i for i in items if i.key == ".dockerconfigjson"]
    docs: list[tuple[str, str, list[Item]]] = []
    if opaque or not docker:
        for name, members in sections(opaque, "credentials", ("credentials", "config", "extra", "legacy"), r):
            docs.append(("Opaque", name, sorted(members, key=lambda item: item.key)))
    docs += [("kubernetes.io/dockerconfigjson", "registry" if k == 0 else f"registry-{k + 1}", [item])
             for k, item in enumerate(docker)]
    return docs


def write_k8s_json(template: Template, items: list[Item], r: Rng, world: World) -> Out:
    """What ``kubectl get secret -o json`` prints: one Secret, or a List of them, with
    kubectl's indentation and key order."""
    docs = _secrets(items, r)
    app, env = FIELDS_OF(r, world)
    out = Out()
    pad = "" if len(docs) == 1 else "        "
    if len(docs) > 1:
        out.line("{")
        out.line('    "apiVersion": "v1",')
        out.line('    "items": [')
    for d, (kind, suffix, members) in enumerate(docs):
        out.line(pad + "{")
        out.line(pad + '    "apiVersion": "v1",')
        out.line(pad + '    "data": {')
        for k, item in enumerate(members):
            out.value_line(pad + f'        "{item.key}": ', item, ('"', '"'), "," if k < len(members) - 1 else "")
        out.line(pad + "    },")
        out.line(pad + '    "kind": "Secret",')
        out.line(pad + '    "metadata": {')
        out.line(pad + f'        "name": "{app}-{suffix}",')
        out.line(pad + f'        "namespace": "{env}"')
        out.line(pad + "    },")
        out.line(pad + f'    "type": "{kind}"')
        out.line(pad + "}" + ("," if len(docs) > 1 and d < len(docs) - 1 else ""))
    if len(docs) > 1:
        out.line("    ],")
        out.line('    "kind": "List"')
        out.line("}")
    return out


def FIELDS_OF(r: Rng, world: World) -> tuple[str, str]:
    text, _ = fill("{app}\x00{env}", r, world)
    app, env = text.split("\x00")
    return app, env


def write_k8s(template: Template, items: list[Item], r: Rng, world: World) -> Out:
    """A manifest of Kubernetes Secrets (`_secrets`), several documents in one file."""
    docs = _secrets(items, r)
    out = Out()
    for d, (kind, suffix, members) in enumerate(docs):
        if d:
            out.line("---")
        out.line("apiVersion: v1")
        out.line("kind: Secret")
        out.line("metadata:")
        out.line(*fill(f"  name: {{app}}-{suffix}", r, world))
        out.line(*fill("  namespace: {env}", r, world))
        out.line(f"type: {kind}")
        out.line("data:")
        for item in members:
            out.value_line(f"  {item.key}: ", item, ("", ""))
        if kind == "Opaque" and not members:
            out.line(*fill("  # managed by {app}-operator", r, world))
    return out


_SA_FIELDS = ('  "type": "service_account",', '  "project_id": "{app}-{env}",', '  "private_key_id": "{hex40}",')
_SA_TAIL = ('  "client_email": "{app}-deployer@{app}-{env}.iam.gserviceaccount.com",',
            '  "client_id": "{digits21}",',
            '  "auth_uri": "https://accounts.google.com/o/oauth2/auth",',
            '  "token_uri": "https://oauth2.googleapis.com/token",',
            '  "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",',
            '  "client_x509_cert_url": "https://www.googleapis.com/robot/v1/metadata/x509/{app}-deployer%40{app}-{env}'
            '.iam.gserviceaccount.com",',
            '  "universe_domain": "googleapis.com"')


def write_gcp_sa(template: Template, items: list[Item], r: Rng, world: World) -> Out:
    """A service-account key file: its fixed fields, each once, the private key among
    them (a second key in one record is another file's: refused). The fields are
    filled together, so the project, account and e-mail agree."""
    if len(items) != 1:
        raise CannotPlace
    text, _ = fill("\n".join(_SA_FIELDS) + "\x00" + "\n".join(_SA_TAIL), r, world)
    head, tail = text.split("\x00")
    out = Out()
    out.line("{")
    out.line(head)
    out.value_line('  "private_key": ', items[0], json_quote(items[0].value, True), ",")
    out.line(tail)
    out.line("}")
    return out


# -- line formats (logs, shell history, PEM files) ----------------------------------------

# What a line format can carry verbatim, by the name it declares. (Compiled once, with
# the stdlib's `re`: a third of `regex`'s cost per call. A space is what `regex` reads
# as \s, Unicode's White_Space: `re`'s \s would add \x1c-\x1f.)
_SPACE = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
_NOT_BARE = re.compile(f"[{_SPACE}\"'\\\\]")
_NOT_LOGFMT = re.compile(f"[{_SPACE}\"'\\\\=]")
_URL_SAFE = re.compile(r"[A-Za-z0-9._~!$'()*,;:@/-]+")
_NOT_SQUOTED = re.compile(r"['\n]")
_NOT_DQUOTED = re.compile(r"[\"\\\n]")
_NOT_SHELL_DQUOTED = re.compile(r"[\"\\\n$`!]")
CARRIES: dict[str, Callable[[str], bool]] = {
    "any": lambda v: "\n" not in v,
    "bare": lambda v: not _NOT_BARE.search(v),
    # a bare logfmt value holds no "=" (a reader splits the pair there)
    "logfmt": lambda v: not _NOT_LOGFMT.search(v),
    "url": lambda v: _URL_SAFE.fullmatch(v) is not None,
    "squote": lambda v: not _NOT_SQUOTED.search(v),
    "dquote": lambda v: not _NOT_DQUOTED.search(v),
    # inside a typed command's double quotes a shell expands $ and ` (and ! at a prompt)
    "shell_dquote": lambda v: not _NOT_SHELL_DQUOTED.search(v),
    "shell": lambda v: _SHELL_BARE.fullmatch(v) is not None,
}

# A log's time fields are written as placeholders of their exact width, then replaced in
# file order from one clock (`_clocked`): log lines are written as they happen, so their
# times never go back. Same width, so no label moves.
_CLOCK_FIELDS = {"ts": "\x01" * 24, "clf": "\x02" * 26, "syslog_ts": "\x03" * 15}
_CLOCK_MARKS = tuple(_CLOCK_FIELDS.values())


def _clock_marks(text: str) -> list[tuple[int, int]]:
    """Where each time placeholder is, in file order: (offset, its index in
    `_CLOCK_MARKS`). Found with str.find, each kind from the end of its last, as a
    scan for ``\x01{24}|\x02{26}|\x03{15}`` finds them (the kinds share no character,
    so no two overlap) at a fraction of its cost."""
    found = []
    for kind, mark in enumerate(_CLOCK_MARKS):
        pos = text.find(mark)
        while pos >= 0:
            found.append((pos, kind))
            pos = text.find(mark, pos + len(mark))
    found.sort()
    return found


def _clocked(out: Out, r: Rng) -> Out:
    text = out.text
    marks = _clock_marks(text)
    if not marks:
        return out
    t = datetime(2026, r.between(1, 12), r.between(1, 28), r.below(24), r.below(60), r.below(60),
                 1000 * r.below(1000))
    timed: list[str] = []
    end = 0
    for pos, kind in marks:
        t += timedelta(0, 0, 1000 * r.below(30_000))  # milliseconds, as microseconds: no keyword to parse
        if kind == 0:
            field = (f"{t.year}-{PAD2[t.month]}-{PAD2[t.day]}T{PAD2[t.hour]}:{PAD2[t.minute]}:{PAD2[t.second]}."
                     f"{PAD3[t.microsecond // 1000]}Z")
        elif kind == 1:
            field = (f"{PAD2[t.day]}/{MONTHS[t.month - 1]}/{t.year}:{PAD2[t.hour]}:{PAD2[t.minute]}:"
                     f"{PAD2[t.second]} +0000")
        else:
            field = f"{MONTHS[t.month - 1]} {SPACED2[t.day]} {PAD2[t.hour]}:{PAD2[t.minute]}:{PAD2[t.second]}"
        if len(field) != len(_CLOCK_MARKS[kind]):  # pragma: no cover - a time format changed width
            raise AssertionError("a time field changed the record's length")
        timed += (text[end:pos], field)
        end = pos + len(field)
    timed.append(text[end:])
    out.parts = timed
    return out


_LOCAL = re.compile(r" +([^ =]+) = ")
_STEP = re.compile(r"^\x01+ Step (\d+)/(\d+) : (.*)$")  # a CI log's build step, its time not yet placed
_ADDR = re.compile(r"\{addr:(\w+)\}")
_BUILT = re.compile(r"^(\x01+ )Successfully built (\S+)$")
# The Dockerfile a CI log's `docker build` runs, its instruction per step, as the legacy
# builder prints each ("Step 4/9 : RUN pip install ..."): a service's usual nine.
_DOCKERFILE = ("FROM python:3.12-slim", "WORKDIR /app", "COPY requirements.txt .",
               "RUN pip install --no-cache-dir -r requirements.txt", "COPY . .", "RUN make build",
               "ENV PYTHONUNBUFFERED=1", "EXPOSE 8080", 'CMD ["python", "-m", "app"]')


def _steps_in_order(lines: list[tuple[str, Labels]]) -> list[tuple[str, Labels]]:
    """A build's "Step N/M" lines numbered as a runner prints them, each above the one
    before (each number was drawn on its own until corpus-v14's last fix: 132 of 1,649
    CI logs over dev 0..63 and train 0..299 at levels 1-5 counted back, 35 more showed
    a step twice, which no runner prints).
    The drawn numbers are kept, sorted, each raised past the one before and lowered
    under the total where needed: no draw changes, so nothing else in the file moves.
    Each step then prints its own instruction of `_DOCKERFILE` (all read "RUN make
    build" before), and "Successfully built <id>" stands only after the last step (it
    came after step 1/9 too): one drawn elsewhere, or in a file that shows no last
    step, is that id's "---> <id>" line, which the builder prints after each step.
    Text only, no draw changes."""
    at = [(i, m) for i, (text, _) in enumerate(lines) if (m := _STEP.search(text))]
    out = list(lines)
    last = None  # the last step's line, if the file shows it
    if at:
        total = int(at[0][1].group(2))
        if (len(at) > total or total != len(_DOCKERFILE)
                or any(int(m.group(2)) != total or lines[i][1] for i, m in at)):  # pragma: no cover
            raise AssertionError("a build's steps cannot be numbered in order")
        numbers = sorted(int(m.group(1)) for _, m in at)
        for k in range(1, len(numbers)):
            numbers[k] = max(numbers[k], numbers[k - 1] + 1)
        for k in range(len(numbers) - 1, -1, -1):
            numbers[k] = min(numbers[k], total - (len(numbers) - 1 - k))
        for (i, m), number in zip(at, numbers, strict=True):
            text = lines[i][0]
            out[i] = (f"{text[:m.start(1)]}{number}/{total} : {_DOCKERFILE[number - 1]}", lines[i][1])
            if number == total:
                last = i
    built = [i for i, (text, _) in enumerate(lines) if _BUILT.match(text)]
    keep = built[-1] if built and last is not None and built[-1] > last else None
    for i in built:
        if i != keep:
            m = _BUILT.match(lines[i][0])
            assert m is not None and not lines[i][1]
            out[i] = (f"{m.group(1)}---> {m.group(2)}", lines[i][1])
    return out


def _address(seed: str, key: str) -> str:
    """An object's address as CPython prints it on 64-bit Linux (heap memory near
    0x7f..., 16-byte aligned): fixed by the file and the object, so no draw moves."""
    h = int.from_bytes(hashlib.blake2b(f"{key}\0{seed}".encode(), digest_size=8).digest(), "big")
    return f"0x7f{h % 16 ** 9:09x}0"


def _arguments(template: Template, index: int, depth: int, frame: list[tuple[str, Labels]],
               seed: str) -> list[tuple[str, Labels]]:
    """The frame's arguments its source line reads, among its locals as `traceback`
    prints them (corpus-v14 before its last fix left them out: `connect` read
    ``settings`` and ``pool_size`` and printed neither) where no drawn local has the
    name. One object one address per file (``settings`` is passed on from `load` to
    `connect`); a repeated frame's own (a further wrapper's ``fn``) by its depth."""
    if index >= len(template.frame_arguments):
        return []
    names = {m.group(1) for text, _ in frame if (m := _LOCAL.match(text))}
    out: list[tuple[str, Labels]] = []
    for text in template.frame_arguments[index]:
        m = _LOCAL.match(text)
        assert m is not None
        if m.group(1) not in names:
            out.append((_ADDR.sub(lambda a: _address(seed, f"{a.group(1)}@{depth - index}"), text), []))
    return out


def _by_name(frame: list[tuple[str, Labels]]) -> list[tuple[str, Labels]]:
    """A frame's locals sorted by name, as `traceback` prints them with captured locals."""
    return sorted(frame, key=lambda line: m.group(1) if (m := _LOCAL.match(line[0])) else line[0])


def _frames(lines: list[tuple[str, Labels]]) -> list[list[tuple[str, Labels]]]:
    """Locals lines dealt to frames so each frame names a local once: a name's n-th
    line goes to the n-th frame out (a placeholder under a key beside the real value
    is another frame's local of that name)."""
    frames: list[list[tuple[str, Labels]]] = [[]]
    seen: dict[str, int] = {}
    for text, labels in lines:
        m = _LOCAL.match(text)
        name = m.group(1) if m else text
        depth = seen[name] = seen.get(name, -1) + 1
        while len(frames) <= depth:
            frames.append([])
        frames[depth].append((text, labels))
    return frames


@cache
def _split_value(fmt: str) -> tuple[str, str]:
    head, tail = fmt.split("{v}")
    return head, tail


@cache
def _kv_formats(kv: tuple[tuple[str, str], ...]) -> tuple[tuple[str, Callable[[str], bool], str], ...]:
    """Each line format of ``kv`` with its test of what it carries and its text
    without the key's own ``{k}=``."""
    return tuple((f, CARRIES[carries], f.replace("{k}=", "")) for f, carries in kv)


def write_lines(template: Template, items: list[Item], r: Rng, world: World) -> Out:
    # one app per file, and times placed in order once the lines are (`_clocked`)
    fixed = {"app": _fill("{app}", r, world, _NO_FIXED)[0], **_CLOCK_FIELDS}
    lines: list[tuple[str, Labels]] = []
    for item in items:
        key = _key(template, item.key)
        if item.context == "block":
            assert template.block is not None
            fmt, value = template.block, item.value.replace("\n", "\n" + template.block_indent)
            labels = _indent_labels(item.value, item.labels, template.block_indent)
        elif item.context == "shell":
            assert template.shell is not None
            fmt, value, labels = template.shell, item.value, item.labels
        else:
            # a line names a key once (a logfmt reader keeps the last request_id=)
            named = f" {key}="
            options = [f for f, carries, others in _kv_formats(template.kv) if carries(item.value)
                       and named not in others]
            if not options:
                raise CannotPlace
            fmt, value, labels = r.choice(options), item.value, item.labels
        head, tail = _split_value(fmt)
        with_key = {**fixed, "k": key}
        head_text, head_labels = _fill(head, r, world, with_key)
        tail_text, tail_labels = _fill(tail, r, world, with_key)
        at = len(head_text)
        if labels:
            head_labels += [(at + s, at + e, f) for s, e, f in labels]
        if tail_labels:
            shift = at + len(value)
            head_labels += [(s + shift, e + shift, f) for s, e, f in tail_labels]
        lines.append((head_text + value + tail_text, head_labels))
    for _ in range(r.between(*world.lv.lines_per_record)):
        if template.fillers:
            lines.append(_fill(r.choice(template.fillers), r, world, fixed))
    out = Out()
    _header(template, out, r, world, fixed)
    lines = _steps_in_order(r.shuffled(lines))
    if template.frames:  # a traceback: outermost frame first, each with its locals
        frames = _frames(lines)
        seed = "\n".join([fixed["app"], *(text for text, _ in lines)])
        for depth in range(len(frames) - 1, -1, -1):  # the last frame stands for any further out
            index = min(depth, len(template.frames) - 1)
            out.line(*_fill(_lines(template.frames[index]), r, world, fixed))
            for text, labels in _by_name(frames[depth] + _arguments(template, index, depth, frames[depth], seed)):
                out.line(text, labels)
    else:
        for text, labels in lines:
            out.line(text, labels)
    _footer(template, out, r, world, fixed)
    return _clocked(out, r)


WRITERS: dict[str, Callable[[Template, list[Item], Rng, World], Out]] = {
    "dotenv": write_dotenv, "yaml": write_yaml, "json": write_json, "ini": write_ini, "toml": write_toml,
    "hcl": write_hcl, "python": write_python, "js": write_js, "npmrc": write_npmrc, "pypirc": write_pypirc,
    "k8s": write_k8s, "k8s_json": write_k8s_json, "gcp_sa": write_gcp_sa, "lines": write_lines,
}

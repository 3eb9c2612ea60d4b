"""Schema validation against the versioned JSON Schemas in ``schemas/``.

Every ``$ref`` resolves from a local ``referencing.Registry`` built from the installed
schema files; a reference to anything else fails instead of fetching it, so validation
never touches the network. Formats (``date-time``...) are asserted, not just
annotated, and the module refuses to run when the checker for ``date-time`` is
missing (jsonschema checks it with ``rfc3339-validator``, MIT, a runtime dependency;
the ``jsonschema[format]`` extra is not used: it pulls in the GPL ``rfc3987``),
rather than silently accepting bad dates.
"integer" is a JSON integer: ``5.0`` is not one (jsonschema's default accepts it).
Errors are reported with the JSON path of the offending value, all of them up to a
limit (``MAX_ERRORS`` per document by default): past it, collecting stops and the list
says so (``ErrorList.truncated``), so a document made of errors cannot make the report
as large as the document.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any, NoReturn

import jsonschema
from referencing import Registry, Resource
from referencing.exceptions import NoSuchResource
from referencing.jsonschema import DRAFT202012

from redaction_pressure.contract import json_path, schema_dir

BASE_URI = "https://redaction-pressure.dev/schemas/"
IDENTITY, TRACE, EPISODE = "identity-v1", "trace-v1", "episode-v1"
MANIFEST, STATEMENT, ENVELOPE = "manifest-v3", "statement-v3", "envelope-v2"
MANIFEST_V1, INTOTO_STATEMENT = "manifest-v1", "intoto-statement-v1"
MANIFEST_V2, STATEMENT_V2 = "manifest-v2", "statement-v2"  # archives of 0.2.x and 0.3.x
_MAX_MESSAGE = 300
_DRAFT = "https://json-schema.org/draft/2020-12/schema"
MAX_ERRORS = 1000


@dataclass(frozen=True)
class SchemaError:
    path: str  # JSONPath-style, "$" for the document root
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


def _no_network(uri: str) -> NoReturn:
    # referencing's attrs classes declare their fields through a pre-PEP 681
    # ``__dataclass_transform__`` that mypy does not read: this is the documented constructor.
    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]


@lru_cache(maxsize=1)
def registry() -> Registry[Any]:
    resources = []
    for path in sorted(schema_dir().glob("*.schema.json")):
        contents = json.loads(path.read_text(encoding="utf-8"))
        # A "$schema" makes jsonschema validate a $ref'd schema with that draft's stock
        # class (`Validator.evolve`), not `StrictValidator`: every schema is 2020-12, so
        # it is dropped here (in memory; the files, and the source digest, are untouched).
        if contents.pop("$schema", _DRAFT) != _DRAFT:
            raise RuntimeError(f"{path.name} is not a JSON Schema draft 2020-12 document")
        resources.append((contents["$id"], Resource.from_contents(contents, default_specification=DRAFT202012)))
    empty: Registry[Any] = Registry(retrieve=_no_network)  # type: ignore[call-arg]  # (as in _no_network)
    return empty.with_resources(resources).crawl()


def format_checker() -> jsonschema.FormatChecker:
    checker = jsonschema.FormatChecker()
    if "date-time" not in checker.checkers:
        raise RuntimeError("jsonschema cannot check the date-time format: install rfc3339-validator")
    return checker


def _is_integer(checker: Any, instance: Any) -> bool:
    # JSON Schema's "integer" is a mathematical one: jsonschema accepts 5.0. Every count,
    # index, seed and level this environment writes is a JSON integer, and readers that
    # want an int (class tables, coverage, levels) silently skip a float: a 5.0 that
    # verified would be a value the audit vouched for and the reader then dropped.
    return isinstance(instance, int) and not isinstance(instance, bool)


# Draft 2020-12, with "integer" meaning a JSON integer (no fraction, no exponent).
StrictValidator = jsonschema.validators.extend(  # type: ignore[no-untyped-call]
    jsonschema.Draft202012Validator,
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine("integer", _is_integer))


@cache
def validator(name: str) -> jsonschema.Draft202012Validator:
    schema = registry().contents(f"{BASE_URI}{name}.schema.json")
    jsonschema.Draft202012Validator.check_schema(schema)
    checked: jsonschema.Draft202012Validator = StrictValidator(schema, registry=registry(),
                                                               format_checker=format_checker())
    return checked


def _short(message: str) -> str:
    return message if len(message) <= _MAX_MESSAGE else message[:_MAX_MESSAGE] + "…"


class ErrorList(list[SchemaError]):
    """A list of SchemaError; ``truncated`` is True when collecting stopped at the limit."""

    truncated = False


def schema_errors(name: str, instance: Any, prefix: tuple[str | int, ...] = (),
                  limit: int | None = MAX_ERRORS) -> ErrorList:
    """The schema errors of ``instance`` under schema ``name``, in the validator's order,
    at most ``limit`` of them (None: all). ``prefix`` is prepended to paths (e.g. to
    report a trace inside an Episode)."""
    out: dict[SchemaError, None] = {}
    truncated = False
    try:
        for error in validator(name).iter_errors(instance):
            if limit is not None and len(out) >= limit:
                truncated = True
                break
            # anyOf/oneOf keep each branch's reasons in error.context; the umbrella
            # message at the value's path is the one a reader can act on.
            out[SchemaError(json_path(prefix + tuple(error.absolute_path)), _short(error.message))] = None
    except RecursionError:
        out[SchemaError(json_path(prefix), "value nested too deeply to validate")] = None
    result = ErrorList(out)
    result.truncated = truncated
    return result


def error_lines(errors: ErrorList, lead: str = "") -> list[str]:
    """Display lines for ``errors``, with a last line saying when collecting stopped."""
    lines = [f"{lead}{e}" for e in errors]
    if errors.truncated:
        lines.append(f"{lead}(stopped after {len(errors)} errors; there are more)")
    return lines

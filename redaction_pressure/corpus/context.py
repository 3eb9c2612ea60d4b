"""Context secrets: values that are secret only because of where they sit.

A stream's own configuration keys (``ledger_seal``) or command-line flags
(``--ledger-seal``) hold secrets whose values have no recognisable format; beside
them, look-alike values of exactly the same shape sit under keys of the same service
that are not secret (``ledger_cursor``). The key names are invented per seed, and
which noun marks the secret is drawn too, so only the shown records say which key
to redact under.
"""

from __future__ import annotations

from dataclasses import dataclass

import regex

from .families import Family, Fragment
from .families.base import Make, fast_chars
from .house import ALPHABETS
from .names import new_service_name
from .rng import Rng

_NOUNS = ("seal", "stamp", "mark", "ref", "tag", "code", "slug", "handle", "cursor", "digest",
          "lease", "phrase", "cipher", "unlock", "badge", "ticket", "voucher", "anchor", "latch")
_VERBS = ("sync", "push", "attach", "enroll", "rotate", "publish")
# Words around a secret's key name that make a key of the same service holding a value
# that grants nothing: its publishable counterpart, a documentation sample, its id, the
# fingerprint a dashboard shows.
_BEFORE = ("public", "sample", "demo")
_AFTER = ("id", "fingerprint", "name")


@dataclass(frozen=True)
class ContextSecret:
    service: str
    kind: str  # "kv" (a configuration key) or "flag" (a command-line flag)
    secret_name: str  # key or flag name that holds the secret
    decoy_names: tuple[str, ...]
    alphabet: str
    char_class: str
    # One length per stream, so every held-out value has a length the shown ones have
    # (corpus-v3 drew each value's length from a range, and 42 of 64 level-1 dev tasks
    # held a value longer or shorter than every shown one: a reader who took the length
    # from the examples leaked it).
    length: int

    def _value(self, r: Rng) -> str:
        return fast_chars(r, self.alphabet, self.length)

    def pattern(self) -> str:
        value = f"{self.char_class}{{{self.length}}}(?![A-Za-z0-9_-])"
        # The one-character lookbehind first: it rejects most positions before the key's
        # is tried (with the scoped oracle's, the oracle reply's level-5 scan takes a fifth less).
        if self.kind == "flag":
            return rf"(?<=[ =])(?<=(?<![A-Za-z0-9_-])--(?i:{regex.escape(self.secret_name)})[ =]){value}"
        return (rf"(?<=[\s:=\"'])(?<=(?<![A-Za-z0-9_-])(?i:{regex.escape(self.secret_name)})[\"']?\s*[:=]\s*[\"']?)"
                f"{value}")

    def _maker(self, name: str) -> Make:
        if self.kind == "kv":
            def make(r: Rng, variant: str = "") -> Fragment:
                text = self._value(r)
                return Fragment(text, ((0, len(text)),), key=name)
        else:
            def make(r: Rng, variant: str = "") -> Fragment:
                value = self._value(r)
                head = f"{self.service}ctl {r.choice(_VERBS)} --{name}{r.choice((' ', '='))}"
                return Fragment(head + value + f" --retries {r.between(1, 5)}",
                                ((len(head), len(head) + len(value)),))
        return make

    def families(self) -> tuple[Family, list[Family]]:
        contexts = frozenset({"kv" if self.kind == "kv" else "shell"})
        where = "key" if self.kind == "kv" else "flag"
        secret = Family(self.secret_name.replace("-", "_"), "secret", contexts, (self.secret_name,),
                        self._maker(self.secret_name), oracle=(self.pattern(),),
                        why=f"the value of the stream's {where} {self.secret_name!r}",
                        hints=(self.secret_name.lower(),), hints_anchor=True, group="context_secret")
        decoys = [Family(d.replace("-", "_"), "decoy", contexts, (d,), self._maker(d),
                         why=f"a value of the same shape under the {where} {d!r}, which this stream "
                             f"does not treat as secret; only {self.secret_name!r} is", group="context_lookalike")
                  for d in self.decoy_names]
        return secret, decoys


def draw_context_secret(r: Rng, kind: str, taken: set[str], lookalikes: tuple[int, int] = (2, 3),
                        affixed: int = 0) -> ContextSecret:
    """``lookalikes``: how many same-shaped keys of the service are not secret (a range);
    ``affixed`` of them are the secret's own key with a word before or after it: one
    end of the key name, drawn, or (two) both ends."""
    service = new_service_name(r, taken)
    nouns = r.sample(_NOUNS, 1 + r.between(*lookalikes))
    sep = "-" if kind == "flag" else "_"
    names = [f"{service}{sep}{n}" for n in nouns]
    if affixed:
        words = [f"{r.choice(_BEFORE)}{sep}{names[0]}", f"{names[0]}{sep}{r.choice(_AFTER)}"]
        names[1:1 + affixed] = [words[r.below(2)]] if affixed == 1 else words[:affixed]
        # A kept key has its affixed twin too: on levels-v5 only the secret key had one,
        # and a constant rule taking a value whose key's affixed twin was in the record
        # took secrets only (levels-v6).
        if len(names) > 2 + affixed:
            kept = names[1 + affixed]
            names[2 + affixed] = (f"{r.choice(_BEFORE)}{sep}{kept}" if r.below(2) else f"{kept}{sep}{r.choice(_AFTER)}")
    _, alphabet, char_class = r.choice(ALPHABETS)
    return ContextSecret(service, kind, names[0], tuple(names[1:]), alphabet, char_class, r.between(14, 30))

"""Labelling policies: which optional categories a stream treats as secret.

Personal and internal data (email addresses, phone numbers, client IP addresses,
internal hostnames, customer ids) is secret under some data-handling policies and
plain operational data under others. Each stream draws its policy from the seed and
states it in words in the prompt; the same forms are labelled secrets in one stream
and decoys, to be kept, in the next. So a constant reply either destroys them where
they must survive or leaks them where they must go.

The forms themselves are partly per stream too: each stream has its own company
domains, its own internal host names, one phone-number style and one customer-id
format, so a rule has to be fitted to the examples.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass

import regex

from ..scoring.cidr import within
from .families import Family, Fragment
from .families.base import Make
from .names import ok as name_ok
from .names import service_name
from .rng import Rng

CATEGORIES = ("email_address", "phone_number", "client_ip", "internal_hostname", "customer_id")
DESCRIPTIONS = {
    # Only the stream's own mail domains are the category (`Policy.pattern`); said so, since
    # a service account's address (...@...iam.gserviceaccount.com) and a login (deploy@host)
    # are kept under every policy (a reader of 2026-12-04 saw a service account's address
    # unlabelled under a policy that "treats as secret: email addresses"; naming the kinds
    # kept made the next reader guess which of the company's own addresses they were).
    "email_address": "email addresses at the company's own mail domains",
    "phone_number": "phone numbers",
    "client_ip": "client IP addresses",
    "internal_hostname": "internal hostnames",
    "customer_id": "customer and account ids",
}
KEYS = {
    "email_address": ("owner_email", "contact", "notify_to", "reply_to", "billing_contact"),
    "phone_number": ("support_phone", "oncall_phone", "sms_to", "callback_number"),
    "client_ip": ("client_ip", "remote_addr", "forwarded_for", "peer"),
    "internal_hostname": ("upstream_host", "db_host", "cache_host", "broker_host"),
    "customer_id": ("customer", "account", "tenant_account", "billing_account"),
}
# Filler fields that draw a category value (labelled by the policy wherever they land).
FIELD_CATEGORIES = {"host": "internal_hostname", "ip": "client_ip"}

_FIRST = ("ana", "ben", "chloe", "dmitri", "elif", "farah", "goran", "hana", "ivan", "jun",
          "kofi", "lena", "mateo", "nadia", "omar", "priya", "quinn", "rosa", "sven", "tariq")
_LAST = ("alvarez", "brandt", "chen", "dubois", "eriksen", "fischer", "garcia", "haddad", "ito",
         "jensen", "kowalski", "lindqvist", "moreau", "novak", "okafor", "petrov", "rossi", "sato")
_TLDS = ("io", "com", "net", "dev", "co")
_ROLES = ("db", "cache", "queue", "search", "api", "worker", "ledger", "mq", "kv", "etl")
_HOST_SUFFIXES = ("internal", "lan", "corp", "svc.cluster.local")
# A hostname never spans lines: the generator scans only lines ending one.
_HOST_GATE = r"\.(?:internal|lan|corp|svc\.cluster\.local)(?![A-Za-z0-9_.-])"
_ENVS = ("prod", "stg", "eu1", "us2", "ops")
_ID_PREFIXES = ("cust", "acct", "cid", "member", "client", "tenant")

_PHONE_STYLES = (
    # (style, regex of exactly that style)
    ("+1-NNN-555-01NN", r"\+1-[2-9][0-9]{2}-555-01[0-9]{2}"),
    ("+44 20 7946 0NNN", r"\+44 20 7946 0[0-9]{3}"),
    ("(NNN) 555-01NN", r"\([2-9][0-9]{2}\) 555-01[0-9]{2}"),
)
_EMAIL_LOCAL = r"(?<![A-Za-z0-9._%+/:@!*~#$&-])[a-z0-9._+-]+"
_IPV4 = r"(?<![0-9.])(?:[0-9]{1,3}\.){3}[0-9]{1,3}(?![0-9.])"


@dataclass(frozen=True)
class Policy:
    secret: tuple[str, ...]  # categories this stream treats as secret, in CATEGORIES order
    domains: tuple[str, ...]
    hosts: tuple[str, ...]
    phone_style: int
    id_prefix: str
    id_digits: int
    # Secret categories with a stated exception: category -> the value or range that
    # stays (a support desk's domain, the private address range, the build hosts' prefix,
    # the public support line, the test account).
    exceptions: tuple[tuple[str, str], ...] = ()

    def describe(self) -> str:
        notes = dict(self.exceptions)

        def words(cats: Iterable[str]) -> str:
            names = [DESCRIPTIONS[c] + (f" (except {_EXCEPTION_WORDS[c].format(notes[c])})" if c in notes else "")
                     for c in cats]
            # "nothing" read as if the stream held no secret at all (a reader's note, 0.10.0)
            return ", ".join(names) if names else "none of its optional categories"
        kept = [c for c in CATEGORIES if c not in self.secret]
        return (f"This stream's labelling policy treats as secret: {words(self.secret)}. "
                f"It does not treat as secret (they must survive): {words(kept)}.")

    def exception_value(self, category: str, r: Rng) -> str:
        """A value of ``category`` that its stated exception keeps."""
        note = dict(self.exceptions)[category]
        if category == "email_address":
            return f"{r.choice(('support', 'help', 'status', 'noreply', 'billing'))}@{note}"
        if category == "client_ip":
            if not note.endswith("/16"):  # a range that splits an octet: any host inside it
                net = ipaddress.IPv4Network(note)
                return str(net.network_address + r.between(1, net.num_addresses - 2))
            a, b = note.split(".")[:2]
            return f"{a}.{b}.{r.below(256)}.{r.between(1, 254)}"
        if category == "internal_hostname":
            return f"{note}{r.between(1, 12):02d}.{self.hosts[0].split('.', 1)[1]}"
        return note

    def value(self, category: str, r: Rng) -> str:
        if category == "email_address":
            first, last = r.choice(_FIRST), r.choice(_LAST)
            local = r.choice((f"{first}.{last}", f"{first[0]}{last}", first, f"{first}+alerts"))
            return f"{local}@{r.choice(self.domains)}"
        if category == "phone_number":
            n = r.between(200, 999)
            tail = r.chars("0123456789", 2)
            return (f"+1-{n}-555-01{tail}", f"+44 20 7946 0{r.chars('0123456789', 3)}",
                    f"({n}) 555-01{tail}")[self.phone_style]
        if category == "client_ip":
            note = dict(self.exceptions).get(category, "")
            if note and not note.endswith("/16") and r.chance(1, 2):
                return _near_miss(ipaddress.IPv4Network(note), r)
            kept = note.split(".")[:2]
            while True:
                octet = r.choice(_FIRST_OCTETS)
                second = r.below(256)
                if [str(octet), str(second)] != kept:  # never inside the stated exception's range
                    return f"{octet}.{second}.{r.below(256)}.{r.between(1, 254)}"
        if category == "internal_hostname":
            return r.choice(self.hosts)
        if category == "customer_id":
            return self.id_prefix + r.chars("123456789", 1) + r.chars("0123456789", self.id_digits - 1)
        raise KeyError(category)

    def pattern(self, category: str) -> str:
        note = dict(self.exceptions).get(category)
        if category == "email_address":
            # Only this stream's mail domains: ``ssh deploy@db.example.net`` is a login, not an address
            # (and an exception's support subdomain is another domain).
            domains = "|".join(regex.escape(d) for d in self.domains)
            return rf"{_EMAIL_LOCAL}@(?:{domains})(?![A-Za-z0-9_.@-])"
        if category == "phone_number":
            keep = f"(?!{regex.escape(note)})" if note else ""
            return rf"(?<![0-9A-Za-z+(-]){keep}{_PHONE_STYLES[self.phone_style][1]}(?![0-9])"
        if category == "client_ip":
            if not note:
                return _IPV4
            if not note.endswith("/16"):
                return rf"(?<![0-9.])(?!{within(note)})(?:[0-9]{{1,3}}\.){{3}}[0-9]{{1,3}}(?![0-9.])"
            a, b = note.split(".")[:2]
            return rf"(?<![0-9.])(?!{a}\.{b}\.)(?:[0-9]{{1,3}}\.){{3}}[0-9]{{1,3}}(?![0-9.])"
        if category == "internal_hostname":
            keep = f"(?!{regex.escape(note)})" if note else ""
            return (rf"(?<![A-Za-z0-9_.@-]){keep}[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:internal|lan|corp|svc\.cluster\.local)"
                    r"(?![A-Za-z0-9_.-])")
        if category == "customer_id":
            keep = f"(?!{regex.escape(note)}(?![A-Za-z0-9_-]))" if note else ""
            return (rf"(?<![A-Za-z0-9_-]){keep}{regex.escape(self.id_prefix)}[1-9][0-9]{{{self.id_digits - 1}}}"
                    r"(?![A-Za-z0-9_-])")
        raise KeyError(category)

    def families(self) -> dict[str, Family]:
        """One family per category, a secret or a decoy as the policy says."""
        out = {}
        for cat in CATEGORIES:
            make = _maker(self, cat)
            if cat in self.secret:
                hints = tuple(s.split(".")[-1] for s in _HOST_SUFFIXES) if cat == "internal_hostname" else ()
                out[cat] = Family(cat, "secret", frozenset({"kv"}), KEYS[cat], make,
                                  oracle=(self.pattern(cat),), hints=hints, line_gate=_HOST_GATE if hints else "",
                                  why=f"{DESCRIPTIONS[cat]} are secret under this stream's policy")
            else:
                out[cat] = Family(cat, "decoy", frozenset({"kv"}), KEYS[cat], make,
                                  why=f"{DESCRIPTIONS[cat]} are operational data under this stream's "
                                      "policy, which the stream states in words")
        return out

    def exception_families(self) -> tuple[Family, ...]:
        """One decoy family per stated exception, under the category's own keys."""
        out = []
        for cat, note in self.exceptions:
            def make(r: Rng, variant: str = "", cat: str = cat) -> Fragment:
                text = self.exception_value(cat, r)
                return Fragment(text, ((0, len(text)),))
            out.append(Family(EXCEPTION_NAMES[cat], "decoy", frozenset({"kv"}), KEYS[cat], make,
                              why=f"{DESCRIPTIONS[cat]} are secret under this stream's policy, except "
                                  f"{_EXCEPTION_WORDS[cat].format(note)}, as the policy states",
                              group="policy_exception"))
        return tuple(out)


def _maker(policy: Policy, category: str) -> Make:
    def make(r: Rng, variant: str = "") -> Fragment:
        text = policy.value(category, r)
        return Fragment(text, ((0, len(text)),))
    return make


_EXCEPTION_WORDS = {
    "email_address": "addresses at {}, the public support desk",
    "client_ip": "addresses in {}, the stream's own egress range",
    "internal_hostname": "the hosts whose names start with {}, which serve only test data",
    "phone_number": "the public support line {}",
    "customer_id": "the test account {}",
}
EXCEPTION_NAMES = {"email_address": "support_email", "client_ip": "egress_ip", "internal_hostname": "test_host",
                    "phone_number": "support_line", "customer_id": "test_account"}


_FIRST_OCTETS = (23, 31, 45, 52, 66, 81, 94, 103, 145, 178, 185, 203)


def _near_miss(net: ipaddress.IPv4Network, r: Rng) -> str:
    """A host address within one range-width below or above ``net``, in its /16: a
    secret that only the stated range's exact boundary tells from a kept address."""
    span = net.num_addresses
    block = ipaddress.IPv4Network((int(net.network_address) & 0xFFFF0000, 16))
    while True:
        step = r.between(1, span)
        addr = (net.network_address - step) if r.chance(1, 2) else (net.broadcast_address + step)
        if addr in block and addr not in net and 0 < int(addr) & 0xFF < 255:
            return str(addr)


def _exception_word(r: Rng, policy: Policy) -> str:
    """An invented word no domain of the stream starts with."""
    while True:
        word = service_name(r)[:r.between(3, 5)]
        if name_ok(word) and not any(d.startswith(word) for d in policy.domains):
            return word


def draw_exceptions(r: Rng, policy: Policy, count: int, egress_prefix: tuple[int, int] = (16, 16)) -> Policy:
    """``policy`` with ``count`` secret categories given a stated exception. Exceptions
    go to the categories the policy already treats as secret, and make another one
    secret only when it has too few: forced onto any category, they made most
    categories secret at the levels that state several (on levels-v5, client addresses
    in every level-5 stream and hostnames in two of three), and since hostnames and
    addresses are half of a level-5 stream's secret spans, a constant reply removing
    every one of them scored more on level 5 than on level 4. ``egress_prefix``: the
    prefix lengths an egress range draws from (a range below /16 splits an octet)."""
    if count <= 0:
        return policy
    already = [c for c in CATEGORIES if c in policy.secret]
    chosen = r.sample(already, min(count, len(already)))
    if len(chosen) < count:
        chosen += r.sample([c for c in CATEGORIES if c not in already], count - len(chosen))
    chosen.sort(key=CATEGORIES.index)
    secret = tuple(c for c in CATEGORIES if c in policy.secret or c in chosen)
    notes = []
    for cat in chosen:
        # The kept part is drawn per stream (a desk subdomain, an address range, a host
        # prefix): stated in words in the prompt, so only a reader of the prompt knows it.
        if cat == "email_address":
            note = f"{_exception_word(r, policy)}.{policy.domains[0]}"
        elif cat == "client_ip" and egress_prefix == (16, 16):
            note = f"{r.choice(_FIRST_OCTETS)}.{r.below(256)}.0.0/16"
        elif cat == "client_ip":
            address = (r.choice(_FIRST_OCTETS) << 24) | (r.below(256) << 16) | (r.below(256) << 8) | r.below(256)
            note = str(ipaddress.IPv4Network((address, r.between(*egress_prefix)), strict=False))
        elif cat == "internal_hostname":  # a role none of the stream's secret hosts has
            note = r.choice([x for x in _ROLES if not any(h.startswith(x + "-") for h in policy.hosts)]) + "-"
        elif cat == "phone_number":
            note = policy.value("phone_number", r)
        else:
            note = policy.value("customer_id", r)
        notes.append((cat, note))
    return Policy(secret, policy.domains, policy.hosts, policy.phone_style, policy.id_prefix, policy.id_digits,
                  tuple(notes))


def draw_policy(r: Rng) -> Policy:
    secret = tuple(c for c in CATEGORIES if r.chance(1, 3))
    # One mail domain: an address at a domain the shown records never showed could not
    # be told from a decoy's.
    domains = (f"{service_name(r)}.{r.choice(_TLDS)}",)
    corp, suffix = service_name(r), r.choice(_HOST_SUFFIXES)
    hosts = tuple(sorted({f"{r.choice(_ROLES)}-{r.between(1, 12):02d}.{r.choice(_ENVS)}.{corp}.{suffix}"
                          for _ in range(r.between(3, 5))}))
    sep = r.choice(("-", "_", ""))
    return Policy(secret, domains, hosts, r.below(len(_PHONE_STYLES)),
                  r.choice(_ID_PREFIXES) + sep, r.between(6, 9))

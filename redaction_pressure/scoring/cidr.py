"""An IPv4 address range written as a regex: how a rule keeps (or takes) exactly the
addresses of a stated range such as ``66.94.32.0/19``, whose boundary splits an octet.
The generator's oracle and `induce` (which reads the range where the prompt states it)
write the same text."""

from __future__ import annotations

import ipaddress


def within(network: str) -> str:
    """A regex matching, at the current position, a dotted quad inside ``network`` and
    nothing else: the whole octets the prefix fixes as literals, the octet it splits as
    the alternation of its values, the rest as any octet."""
    net = ipaddress.IPv4Network(network)
    octets = net.network_address.packed
    whole, split = divmod(net.prefixlen, 8)
    parts = [str(o) for o in octets[:whole]]
    if whole < 4:
        if split:
            lo = octets[whole]
            parts.append("(?:" + "|".join(str(v) for v in range(lo, lo + (1 << (8 - split)))) + ")")
        parts += ["[0-9]{1,3}"] * (4 - len(parts))
    return r"\.".join(parts) + "(?![0-9])"

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
            parts.append(number_range(lo, lo + (1 << (8 - split)) - 1))
        parts += ["[0-9]{1,3}"] * (4 - len(parts))
    return r"\.".join(parts) + "(?![0-9])"


def number_range(lo: int, hi: int) -> str:
    """A regex for the decimal numbers lo..hi (no leading zeros), as few alternatives of
    a fixed prefix, one digit range and free digits as cover it: 128..255 is
    ``(?:12[8-9]|1[3-9][0-9]|2[0-4][0-9]|25[0-5])``. Listing all 128 numbers instead made
    the pattern long enough that compiling it in `regex`'s own parser took a level-5
    task build from 33 to 48 ms (median)."""
    if not 0 <= lo <= hi:
        raise ValueError(f"not a range: {lo}..{hi}")
    out = []
    start = lo
    while start <= hi:
        width = len(str(start))
        top = min(hi, 10 ** width - 1)  # a block never spans two numbers of digits
        k = 0  # the block is start .. start + 10**k * m - 1, aligned on 10**k
        while k + 1 < width and start % 10 ** (k + 1) == 0 and start + 10 ** (k + 1) - 1 <= top:
            k += 1
        step, end = 10 ** k, start + 10 ** k - 1
        while end + step <= top and (end + 1) % 10 ** (k + 1):
            end += step
        first, last = str(start), str(end)
        head, a, b = first[:len(first) - k - 1], first[len(first) - k - 1], last[len(last) - k - 1]
        digit = a if a == b else f"[{a}-{b}]"
        out.append(head + digit + ("[0-9]" * k if k < 2 else f"[0-9]{{{k}}}"))
        start = end + 1
    return out[0] if len(out) == 1 else "(?:" + "|".join(out) + ")"

"""Signs in source text that code may write a tensor, step or run a backward: the
pre-filters that decide what is parsed and interpreted at all.

Every pattern starts with a literal, so that the regex engine jumps from one occurrence
of it to the next; a leading ``\\b`` or character class, or an alternation of them,
makes it try every position of the text, 10-20 times slower on real trees. A word
boundary is a look-behind placed after the literal instead."""

from __future__ import annotations

import re


class Signs:
    """Does any of these patterns occur in a text? A pattern given as a pair is tried
    only where its first, quick one occurs."""

    def __init__(self, *patterns: str | tuple[str, str]) -> None:
        self._patterns = tuple(
            (re.compile(p[0]), re.compile(p[1], re.MULTILINE)) if isinstance(p, tuple)
            else (None, re.compile(p, re.MULTILINE)) for p in patterns)

    def search(self, text: str) -> bool:
        return any((quick is None or quick.search(text) is not None)
                   and exact.search(text) is not None for quick, exact in self._patterns)


_UNDERSCORE_CALL = r"_(?<=[A-Za-z0-9]_)\s*\("  # x.add_(...), torch.relu_(...)
_METHOD_UNDERSCORE_CALL = r"\.[A-Za-z0-9]\w*_\s*\("  # x.add_(...) only
_OUT = r"out(?<!\wout)\s*="
_STEP = r"\.step\s*\("
_BACKWARD = r"backward(?<!\wbackward)\s*\("

# Every hazard needs an in-place write, an optimizer step or a backward; text with none
# of these cannot hold one, and skipping its parse is most of the speed on real trees.
CANDIDATE = Signs(
    "inplace", _UNDERSCORE_CALL, r"[-+*/@%&|]=",
    (r"\]\s*=[^=]", r"^[ \t]*[\w.]+\[[^\n]*\]\s*=[^=]"),  # x[i] = v
    _OUT, _STEP, _BACKWARD)

# What surely writes a tensor, steps or runs a backward: ``+=`` and ``x[i] = v`` also
# write dictionaries, lists and counters, which most helper code is full of.
STRONG = Signs("inplace", _METHOD_UNDERSCORE_CALL, _OUT, _STEP, _BACKWARD)

# What can write a tensor while a module is built: an in-place method (not an
# ``nn.init`` function, which runs under no_grad), an optimizer step, a backward.
BUILD_WRITES = Signs(r"\.(?<!init\.)[A-Za-z0-9]\w*_\s*\(", _STEP, _BACKWARD)

# Without torch in sight nothing can be known to require grad (no parameters, no
# requires_grad=True, no nn.Module): only uncertain findings are possible there.
TORCH = Signs("torch", "requires_grad", r"nn\.(?<!\wnn\.)", r"F\.(?<!\wF\.)")

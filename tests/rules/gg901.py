"""GG901: code the analysis could not follow to its end (information, not a hazard).

The smallest real code that triggers it (INVALID, the line marked ``# expect: GG901``)
and the closest code that must not (VALID), as in docs/rules/GG901.md. Every case runs
through ``gradguard check`` (tests/test_hostile_input.py).
"""

from tests.rulecases import case

RULE = "GG901"

INVALID = [
    case("GG901: a sum of 70 terms is nested deeper than the analysis reads", """
        import torch
        a = torch.randn(3, requires_grad=True)
        y = """ + " + ".join(["a"] * 70) + """  # expect: GG901
        y.sum().backward()
    """, severity="information"),
]

VALID = [
    case("GG901: a sum of 60 terms is read to its end", """
        import torch
        a = torch.randn(3, requires_grad=True)
        y = """ + " + ".join(["a"] * 60) + """
        y.sum().backward()
    """),
]

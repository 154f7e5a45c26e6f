"""GG900: a file that could not be analysed (not readable, not UTF-8, not parsable).

The smallest real code that triggers it (INVALID, the line marked ``# expect: GG900``)
and the closest code that must not (VALID), as in docs/rules/GG900.md. The finding is a
status of the whole file, made by ``gradguard check``, so these cases run through it
(tests/test_hostile_input.py), not through the analysis of source that parses.
"""

from tests.rulecases import case

RULE = "GG900"

INVALID = [
    case("GG900: a syntax error: nothing in the file is checked", """
        import torch
        def f(:  # expect: GG900
            return torch.ones(1)
    """),
    case("GG900: nested deeper than Python's parser accepts", """
        import torch
        x = """ + "(" * 250 + "1" + ")" * 250 + """  # expect: GG900
    """),
]

VALID = [
    case("GG900: the same code once it parses", """
        import torch
        def f():
            return torch.ones(1)
    """),
    case("GG900: brackets nested as deep as Python accepts", """
        import torch
        x = """ + "(" * 150 + "1" + ")" * 150 + """
    """),
]

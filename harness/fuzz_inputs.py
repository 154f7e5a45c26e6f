"""Hostile inputs for the fuzz tests (tests/fuzz) and ``bench/fuzz.py``: random bytes, and
real files (the accuracy corpus, the examples) mutated the ways editors and users break them."""

from __future__ import annotations

from pathlib import Path

from hypothesis import strategies as st

REPO = Path(__file__).resolve().parents[1]
SEEDS = sorted([*REPO.glob("examples/*.py"), *REPO.glob("tests/corpus/positive/*.py"),
                *REPO.glob("tests/corpus/negative/*.py")])
SEED_TEXTS = [path.read_text("utf-8") for path in SEEDS]

# Text typed or pasted into a file: code, half-typed code, brackets, unicode of every
# kind the line-break rules care about.
FRAGMENTS = st.sampled_from([
    "(", ")", "[", "]", "{", "}", ":", "\n", "    ", "\t", "x", "y += 1", "x.add_(1)",
    "def f(", "class A:", "import torch\n", "torch.relu_(x)\n", "nn.ReLU(inplace=True)",
    "lambda: ", "\"\"\"", "'", "#", "\\", "\u2028", "\u2029", "\x0c", "\x85", "\x0b",
    "é", "🙂", "\u200b", "\r", "\r\n", "\x00", "@", "async ", "await ", "yield ",
])
DEPTHS = st.sampled_from([1, 10, 63, 64, 65, 150, 199, 200, 201, 1000, 3000, 6000])


@st.composite
def deep_line(draw: st.DrawFn) -> str:
    """A statement nested ``n`` levels deep, up to and past CPython's limits."""
    n = draw(DEPTHS)
    kind = draw(st.sampled_from(["parens", "sum", "unary", "calls", "lists", "attrs"]))
    body = {
        "parens": "(" * n + "x" + ")" * n,
        "sum": " + ".join(["x"] * n),
        "unary": "-" * n + "x",
        "calls": "f(" * n + "x" + ")" * n,
        "lists": "[" * n + "x" + "]" * n,
        "attrs": "x" + ".a" * n,
    }[kind]
    return f"y = {body}\n"


@st.composite
def mutated_source(draw: st.DrawFn) -> bytes:
    """A corpus file after a few random mutations, as bytes (some no longer UTF-8)."""
    text = draw(st.sampled_from(SEED_TEXTS))
    lines = text.splitlines(keepends=True) or [""]
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(lines) - 1))
        mutation = draw(st.sampled_from(
            ["delete", "duplicate", "insert", "deep", "line-ends", "truncate"]))
        if mutation == "delete" and len(lines) > 1:
            del lines[at]
        elif mutation == "duplicate":
            lines.insert(at, lines[at])
        elif mutation == "insert":
            line = lines[at]
            column = draw(st.integers(0, len(line)))
            lines[at] = line[:column] + draw(FRAGMENTS) + line[column:]
        elif mutation == "deep":
            indent = lines[at][:len(lines[at]) - len(lines[at].lstrip(" "))]
            lines.insert(at, indent + draw(deep_line()))
        elif mutation == "line-ends":
            ending = draw(st.sampled_from(["\r\n", "\r", "\n"]))
            lines = [line.rstrip("\r\n") + ending if line.endswith(("\n", "\r")) else line
                     for line in lines]
        elif mutation == "truncate":
            lines = lines[:at + 1]
            lines[-1] = lines[-1][:draw(st.integers(0, len(lines[-1])))]
    data = "".join(lines).encode("utf-8", errors="surrogatepass")
    prefix = draw(st.sampled_from([b"", b"\xef\xbb\xbf", b"\x00", b"\xed\xa0\x80"]))
    return prefix + data


# Any input: random bytes, random text, or a mutated real file.
SOURCES = st.one_of(
    st.binary(max_size=2000),
    st.text(max_size=500).map(lambda text: text.encode("utf-8", errors="surrogatepass")),
    mutated_source(),
)

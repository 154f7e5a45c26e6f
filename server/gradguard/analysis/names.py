"""Qualified names: what a dotted expression like ``F.relu`` or ``nn.ReLU`` refers to."""

from __future__ import annotations

import libcst as cst

# Used when a snippet has no imports (a half-typed file, a pasted cell): the names
# PyTorch code conventionally uses.
CONVENTIONAL_ALIASES = {
    "torch": "torch",
    "nn": "torch.nn",
    "F": "torch.nn.functional",
    "optim": "torch.optim",
}


def dotted_name(node: cst.BaseExpression) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    parts: list[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


def _module_name(node: cst.BaseExpression) -> str:
    name = dotted_name(node)
    return name or ""


def imported_names(statement: cst.BaseStatement) -> list[tuple[str, str]]:
    """(local name, qualified name) of each name a top-level statement imports, in order."""
    names: list[tuple[str, str]] = []
    if not isinstance(statement, cst.SimpleStatementLine):
        return names
    for small in statement.body:
        if isinstance(small, cst.Import):
            for alias in small.names:
                full = _module_name(alias.name)
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    names.append((alias.asname.name.value, full))
                else:
                    top = full.split(".")[0]
                    names.append((top, top))
        elif isinstance(small, cst.ImportFrom) and small.module is not None:
            if small.relative or isinstance(small.names, cst.ImportStar):
                continue
            base = _module_name(small.module)
            for alias in small.names:
                name = _module_name(alias.name)
                local = name
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    local = alias.asname.name.value
                names.append((local, f"{base}.{name}"))
    return names


def qualify(dotted: str, aliases: dict[str, str]) -> str:
    """Expand the first component of ``dotted`` through the import aliases."""
    head, _, rest = dotted.partition(".")
    full = aliases.get(head)
    if full is None:
        return dotted
    return f"{full}.{rest}" if rest else full

"""Qualified names: what a dotted expression like ``F.relu`` or ``nn.ReLU`` refers to."""

from __future__ import annotations

import ast

# Used when a snippet has no imports (a half-typed file, a pasted cell): the names
# PyTorch code conventionally uses.
CONVENTIONAL_ALIASES = {
    "torch": "torch",
    "nn": "torch.nn",
    "F": "torch.nn.functional",
    "optim": "torch.optim",
}


def dotted_name(node: ast.AST) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def imported_names(statement: ast.stmt) -> list[tuple[str, str]]:
    """(local name, qualified name) of each name an import statement binds, in order.

    A relative import keeps its leading dots (``from .models import Net`` gives
    ``.models.Net``): the project resolves them against the importing file.
    """
    names: list[tuple[str, str]] = []
    if isinstance(statement, ast.Import):
        for alias in statement.names:
            if alias.asname is not None:
                names.append((alias.asname, alias.name))
            else:
                top = alias.name.split(".")[0]
                names.append((top, top))
    elif isinstance(statement, ast.ImportFrom):
        base = "." * statement.level + (statement.module or "")
        for alias in statement.names:
            if alias.name == "*":
                continue
            qualified = f"{base}.{alias.name}" if statement.module else f"{base}{alias.name}"
            names.append((alias.asname or alias.name, qualified))
    return names


def qualify(dotted: str, aliases: dict[str, str]) -> str:
    """Expand the first component of ``dotted`` through the import aliases."""
    head, _, rest = dotted.partition(".")
    full = aliases.get(head)
    if full is None:
        return dotted
    return f"{full}.{rest}" if rest else full

"""Whether two parse trees are the same code: ``CSTNode.deep_equals``, made fast.

libcst's own comparison asks ``dataclasses.fields`` and the abstract ``Sequence`` type
of every node it visits; comparing a re-parsed class's methods with their earlier
nodes on each keystroke cost as much as parsing the class. This compares the same
fields (those with ``compare=True``) with their names looked up once per node type.
"""

from __future__ import annotations

import dataclasses

import libcst as cst

_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields(node: cst.CSTNode) -> tuple[str, ...]:
    names = _FIELDS.get(type(node))
    if names is None:
        names = tuple(f.name for f in dataclasses.fields(node) if f.compare)
        _FIELDS[type(node)] = names
    return names


def same_code(a: object, b: object) -> bool:
    if a is b:
        return True
    if isinstance(a, cst.CSTNode):
        return type(a) is type(b) and all(
            same_code(getattr(a, name), getattr(b, name)) for name in _fields(a))
    if isinstance(a, (tuple, list)):
        # libcst exposes every sequence as a Sequence: a list equals a tuple of the same.
        return isinstance(b, (tuple, list)) and len(a) == len(b) and \
            all(same_code(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(b, cst.CSTNode) or isinstance(b, (tuple, list)):
        return False
    return a == b

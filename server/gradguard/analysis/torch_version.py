"""``torch.__version__`` as the analysis knows it: the version the facts come from."""

from __future__ import annotations

import re

_NUMBERS = re.compile(r"\d+")


class TorchVersion(str):
    """A version string that orders as a version (``"2.13.0" > "2.2"``), as torch's own
    ``TorchVersion`` does, and equals plain strings as a string."""

    __slots__ = ()

    def _key(self, other: object) -> tuple[int, ...] | None:
        if not isinstance(other, str):
            return None
        return tuple(int(n) for n in _NUMBERS.findall(other.split("+")[0])[:3])

    def _mine(self) -> tuple[int, ...]:
        return tuple(int(n) for n in _NUMBERS.findall(self.split("+")[0])[:3])

    def __lt__(self, other: object) -> bool:
        key = self._key(other)
        return NotImplemented if key is None else self._mine() < key

    def __le__(self, other: object) -> bool:
        key = self._key(other)
        return NotImplemented if key is None else self._mine() <= key

    def __gt__(self, other: object) -> bool:
        key = self._key(other)
        return NotImplemented if key is None else self._mine() > key

    def __ge__(self, other: object) -> bool:
        key = self._key(other)
        return NotImplemented if key is None else self._mine() >= key

    __hash__ = str.__hash__
    __eq__ = str.__eq__

"""Records as plain classes: equality and a repr made from their ``__slots__``.

A dataclass compiles its methods when its module is imported, about 2 to 4 M instructions a
class; a cycle built 21 of them, a sixth of what it cost beyond starting Python. A record that a
command builds subclasses ``Plain`` instead and writes its ``__init__`` (compiled once, into the
module's bytecode cache); ``Frozen`` adds a hash, for the records a dataclass froze.
"""

from __future__ import annotations


class Plain:
    """Equal to a record of the same class whose slots hold equal values; shown as
    ``Name(slot=value, ...)``, slots in the order ``__slots__`` names them (sorted, as the house
    lints them)."""

    __slots__: tuple[str, ...] = ()

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, k) == getattr(other, k) for k in self.__slots__)

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={getattr(self, k)!r}" for k in self.__slots__)
        return f"{type(self).__name__}({shown})"


class Frozen(Plain):
    """A ``Plain`` record that is never changed once built, so it may be a key (hashed by value)."""

    __slots__: tuple[str, ...] = ()

    def __hash__(self) -> int:
        return hash(tuple(getattr(self, k) for k in self.__slots__))

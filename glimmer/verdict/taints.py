"""A node taint as the API stores it: one shape for the run's admission (E28) and the
qualify-on-join trigger (J6-J8). Pure."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Taint:
    """One node taint (a missing value reads as "", as the API stores it)."""

    key: str
    value: str
    effect: str

    @classmethod
    def of(cls, entry: Mapping[str, Any]) -> Taint:
        return cls(
            key=str(entry.get("key") or ""),
            value=str(entry.get("value") or ""),
            effect=str(entry.get("effect") or ""),
        )

    def __str__(self) -> str:
        """As ``kubectl taint`` writes it: ``key=value:Effect`` (``key:Effect`` with no
        value)."""
        value = f"={self.value}" if self.value else ""
        return f"{self.key}{value}:{self.effect}"

    def toleration(self) -> dict[str, str]:
        """The one toleration that tolerates this taint and no other (Equal on key, value
        and effect: never ``Exists``, never an empty key or effect)."""
        return {"key": self.key, "operator": "Equal", "value": self.value, "effect": self.effect}

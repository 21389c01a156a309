"""The one name of a BurnInRun other objects carry: ``(namespace, name, uid)``.

A cordon stamp (``<namespace>/<name>/<uid>`` on a node), a pod's controller reference
and a ConfigMap's owner are the same triple, so they are one type: what a stamp names
and what a pod's owner reference names can never disagree on a field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from glimmer.api import API_VERSION
from glimmer.controllers.kit.view import ObjectView

JSON = dict[str, Any]


@dataclass(frozen=True, slots=True)
class RunRef:
    """The owning BurnInRun, as nodes, pods and ConfigMaps refer to it."""

    namespace: str
    name: str
    uid: str

    @classmethod
    def of(cls, run: Mapping[str, Any]) -> RunRef:
        """The reference of a run object (its metadata must name all three)."""
        view = ObjectView(run)
        ref = cls(namespace=view.namespace, name=view.name, uid=view.uid)
        if not (ref.namespace and ref.name and ref.uid):
            raise KeyError(f"the run {ref.key!r} does not name its namespace, name and uid")
        return ref

    @property
    def key(self) -> str:
        """``namespace/name``: the run's workqueue key."""
        return f"{self.namespace}/{self.name}"

    def render(self) -> str:
        """The cordon-owner stamp, ``<namespace>/<name>/<uid>``."""
        return f"{self.namespace}/{self.name}/{self.uid}"

    @classmethod
    def parse(cls, text: str | None) -> RunRef | None:
        """A stamp: exactly three non-empty ``/`` parts, else None (and it is left alone)."""
        if not text:
            return None
        parts = text.split("/")
        if len(parts) != 3 or not all(parts):
            return None
        return cls(namespace=parts[0], name=parts[1], uid=parts[2])

    def owner_reference(self) -> JSON:
        """The controller reference a runner pod (or the artifacts ConfigMap) carries."""
        return {
            "apiVersion": API_VERSION,
            "kind": "BurnInRun",
            "name": self.name,
            "uid": self.uid,
            "controller": True,
            "blockOwnerDeletion": True,
        }

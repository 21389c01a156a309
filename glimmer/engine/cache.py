"""The informer's store: objects by key, plus secondary indexes.

An index maps each object to zero or more index values (a pod to the value of one
of its labels, a node to one of its annotations) so a reconciler can ask "pods
labelled X" in O(result) instead of scanning 50,000 pods. Index functions see the
stored (already transformed) object, so a transform must keep every field an
index reads.

The store hands out its own dicts; callers treat them as read-only (copy
before mutating) since copying every read would double the memory the
ingest transform saves.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal

import attrs

from glimmer.engine.client import JSON, object_key

IndexFunc = Callable[[Mapping[str, Any]], Iterable[str]]


def label_index(label: str) -> IndexFunc:
    """Index objects by the value of one label (objects without it are not indexed)."""

    def index(obj: Mapping[str, Any]) -> list[str]:
        value = ((obj.get("metadata") or {}).get("labels") or {}).get(label)
        return [str(value)] if value is not None else []

    return index


def annotation_index(annotation: str) -> IndexFunc:
    """Index objects by the value of one annotation."""

    def index(obj: Mapping[str, Any]) -> list[str]:
        value = ((obj.get("metadata") or {}).get("annotations") or {}).get(annotation)
        return [str(value)] if value is not None else []

    return index


def namespace_index(obj: Mapping[str, Any]) -> list[str]:
    namespace = (obj.get("metadata") or {}).get("namespace")
    return [str(namespace)] if namespace else []


Operator = Literal["=", "!=", "exists", "!exists"]


@attrs.frozen
class Requirement:
    """One term of an equality-based label selector."""

    key: str
    operator: Operator
    value: str = ""

    def matches(self, labels: Mapping[str, Any]) -> bool:
        if self.operator == "=":
            return labels.get(self.key) == self.value
        if self.operator == "!=":
            return labels.get(self.key) != self.value
        if self.operator == "exists":
            return self.key in labels
        return self.key not in labels


@attrs.frozen
class LabelSelector:
    """An equality-based label selector (`k=v`, `k==v`, `k!=v`, `k`, `!k`), parsed once.

    Set-based terms (`k in (a,b)`, `k notin (a)`) are refused rather than half-read: the
    cache must never answer a query it only partly understood.
    """

    requirements: frozenset[Requirement] = frozenset()

    @classmethod
    def parse(cls, text: str | None) -> LabelSelector:
        terms: set[Requirement] = set()
        for raw in (text or "").split(","):
            term = raw.strip()
            if not term:
                continue
            if "(" in term or ")" in term or " in " in f" {term} " or " notin " in term:
                raise ValueError(f"set-based label selector {text!r} is not supported here")
            if "!=" in term:
                key, value = term.split("!=", 1)
                terms.add(Requirement(key.strip(), "!=", value.strip()))
            elif "=" in term:
                key, value = term.replace("==", "=", 1).split("=", 1)
                terms.add(Requirement(key.strip(), "=", value.strip()))
            elif term.startswith("!"):
                terms.add(Requirement(term[1:].strip(), "!exists"))
            else:
                terms.add(Requirement(term, "exists"))
        for requirement in terms:
            if not requirement.key or " " in requirement.key:
                raise ValueError(f"label selector {text!r} has an invalid key")
        return cls(frozenset(terms))

    def matches(self, obj: Mapping[str, Any]) -> bool:
        labels = (obj.get("metadata") or {}).get("labels") or {}
        return all(r.matches(labels) for r in self.requirements)

    def implies(self, other: LabelSelector) -> bool:
        """True when every object this selector matches also matches ``other``.

        So a cache filled through ``other`` holds every object this selector asks for.
        Decided term by term, and only where that is certain (``k=v`` implies ``k`` and
        ``k!=w``); anything else counts as not implied.
        """
        return all(self._implies(r) for r in other.requirements)

    def _implies(self, wanted: Requirement) -> bool:
        if wanted in self.requirements:
            return True
        for have in self.requirements:
            if have.key != wanted.key or have.operator != "=":
                continue
            if wanted.operator == "exists":
                return True
            if wanted.operator == "!=" and have.value != wanted.value:
                return True
        return False


class Store:
    """Thread-free (single event loop) keyed store with indexes."""

    def __init__(self, indexers: Mapping[str, IndexFunc] | None = None) -> None:
        self._items: dict[str, JSON] = {}
        self._indexers: dict[str, IndexFunc] = dict(indexers or {})
        self._indices: dict[str, defaultdict[str, set[str]]] = {
            name: defaultdict(set) for name in self._indexers
        }

    def add_indexers(self, indexers: Mapping[str, IndexFunc]) -> None:
        for name, func in indexers.items():
            existing = self._indexers.get(name)
            if existing is not None and existing is not func:
                raise ValueError(f"indexer {name!r} already registered with another function")
            if existing is None:
                self._indexers[name] = func
                index: defaultdict[str, set[str]] = defaultdict(set)
                for key, obj in self._items.items():
                    for value in func(obj):
                        index[value].add(key)
                self._indices[name] = index

    def _unindex(self, key: str, obj: JSON) -> None:
        for name, func in self._indexers.items():
            index = self._indices[name]
            for value in func(obj):
                keys = index.get(value)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del index[value]

    def _index(self, key: str, obj: JSON) -> None:
        for name, func in self._indexers.items():
            for value in func(obj):
                self._indices[name][value].add(key)

    def upsert(self, obj: JSON) -> JSON | None:
        """Store `obj`; return what it replaced."""
        key = object_key(obj)
        old = self._items.get(key)
        if old is not None:
            self._unindex(key, old)
        self._items[key] = obj
        self._index(key, obj)
        return old

    def remove(self, key: str) -> JSON | None:
        old = self._items.pop(key, None)
        if old is not None:
            self._unindex(key, old)
        return old

    def get(self, key: str) -> JSON | None:
        return self._items.get(key)

    def keys(self) -> list[str]:
        return list(self._items)

    def values(self) -> list[JSON]:
        return list(self._items.values())

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def has_index(self, index_name: str) -> bool:
        return index_name in self._indices

    def by_index(self, index_name: str, value: str) -> list[JSON]:
        """Objects whose index function returned `value`."""
        if index_name not in self._indices:
            raise KeyError(f"no indexer named {index_name!r}")
        return [self._items[k] for k in sorted(self._indices[index_name].get(value, ()))]

    def index_keys(self, index_name: str, value: str) -> list[str]:
        if index_name not in self._indices:
            raise KeyError(f"no indexer named {index_name!r}")
        return sorted(self._indices[index_name].get(value, ()))

"""Ingest transforms for the shapes a fleet caches by the thousand: nodes and pods.

An informer stores whatever its transform returns, for as long as the object exists,
so what is dropped here is memory saved per object for the life of the manager. Two
kinds of saving, both lossless for a reader:

- fields no reconciler reads: ``metadata.managedFields`` everywhere (often half an
  object), and on nodes the kubelet's image list and volume bookkeeping, which on a real
  GPU node run to tens of kilobytes (``status.images`` lists every cached image with
  all its tags and digests);
- duplicate strings: a JSON decoder makes a fresh ``str`` for every key and value of
  every object, so ten thousand pods hold ten thousand copies of ``"containerStatuses"``,
  of the image name and of ``"Running"``. :func:`share_strings` makes equal short
  strings one object (``sys.intern``), which changes no value a reader can see.

Each transform edits and returns the object it is given (the informer owns it: it was
just decoded). What is kept is every field a reconciler may read, so a cached read
answers exactly what a live read would, less the fields named above.
"""

from __future__ import annotations

import sys
from typing import Any

from glimmer.engine.client import JSON

SHARED_STRING_MAX = 128
"""Strings up to this many characters are shared: names, labels, phases, images,
timestamps. Longer ones (messages, annotations holding documents) are rarely equal."""

NODE_STATUS_DROPPED = ("images", "volumesInUse", "volumesAttached")
"""Node status fields no reconciler reads; `images` is usually most of a real node."""


def _share(value: Any) -> Any:
    if isinstance(value, str):
        return sys.intern(value) if len(value) <= SHARED_STRING_MAX else value
    if isinstance(value, dict):
        return {sys.intern(k) if isinstance(k, str) else k: _share(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_share(item) for item in value]
    return value


def share_strings(obj: JSON) -> JSON:
    """``obj`` with every key and every short string value shared (``sys.intern``).

    Equal in value to ``obj``; only the identity of equal strings changes.
    """
    shared: JSON = _share(obj)
    return shared


def _drop_managed_fields(obj: JSON) -> None:
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        meta.pop("managedFields", None)


def compact_node(obj: JSON) -> JSON:
    """A Node for the cache: no managedFields, no image list or volume bookkeeping,
    strings shared. Metadata, spec (taints, unschedulable) and the rest of status
    (conditions, capacity, allocatable, addresses, nodeInfo) are kept whole."""
    _drop_managed_fields(obj)
    status = obj.get("status")
    if isinstance(status, dict):
        for field in NODE_STATUS_DROPPED:
            status.pop(field, None)
    return share_strings(obj)


def compact_pod(obj: JSON) -> JSON:
    """A Pod for the cache: no managedFields, strings shared; spec and status whole
    (a reconciler compares a runner pod's whole spec with what it would create)."""
    _drop_managed_fields(obj)
    return share_strings(obj)


def compact(obj: JSON) -> JSON:
    """Any object for the cache: no managedFields, strings shared."""
    _drop_managed_fields(obj)
    return share_strings(obj)

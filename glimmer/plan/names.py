"""Deterministic names and label values for the objects a run creates (E13, api §9.3, §9.4).

Pod and Service names are a pure function of (run UID, run name, test index, node,
attempt[, role]) so that a controller restarted at any instant finds the pods it
already created instead of creating twins, and so that a repeat never re-harvests a
previous attempt's pod. The hash covers the full inputs; the readable prefix is only a
courtesy and is cut to fit.

Every name produced here is a valid DNS-1123 label (lower-case alphanumerics and
``-``, alphanumeric at both ends, at most 63 characters), so it is also a valid pod
name, Service name (DNS-1035: the ``bp-`` prefix starts with a letter) and hostname.

Label values are clamped with one rule, :func:`label_value` (upstream does not clamp
them, so a run or test name over 63 characters made every pod invalid; we do not
reproduce that):

* a value that is already a valid label value (≤ 63 characters, alphanumeric at both
  ends, only ``[-_.A-Za-z0-9]`` inside) is used verbatim;
* anything else becomes ``<prefix>-<8 hex of sha256(value)>`` where the prefix is the
  value with invalid characters replaced by ``-``, cut to 54 characters and stripped of
  non-alphanumerics at both ends (omitted, with its ``-``, when nothing survives).

The controller must select by ``label_value(name)``, never by the raw name.
"""

from __future__ import annotations

import hashlib
import re
from typing import Final

MAX_LABEL: Final = 63
_HASH_HEX: Final = 8
_NAME_PREFIX_MAX: Final = 36
_SERVICE_PREFIX_MAX: Final = 26

_LABEL_VALUE: Final = re.compile(r"(?:[A-Za-z0-9](?:[-_.A-Za-z0-9]*[A-Za-z0-9])?)?")
_NOT_DNS: Final = re.compile(r"[^a-z0-9-]+")
_NOT_LABEL: Final = re.compile(r"[^-_.A-Za-z0-9]+")


def _digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()[:_HASH_HEX]


def _dns_prefix(text: str, *, limit: int) -> str:
    """``text`` lower-cased, reduced to ``[a-z0-9-]``, cut to ``limit``, trimmed of ``-``."""
    return _NOT_DNS.sub("-", text.lower())[: max(limit, 0)].strip("-")


def _join(prefix: str, suffix: str) -> str:
    # suffix starts with "-"; with an empty prefix drop that dash so the name starts
    # with an alphanumeric.
    return prefix + suffix if prefix else suffix[1:]


def pod_name(
    *,
    run_name: str,
    run_uid: str,
    test_index: int,
    node: str,
    attempt: int,
    role: str | None = None,
    tag: str = "",
) -> str:
    """``<run[:36]>-t<i>-a<n>[-<role>]-<8 hex>`` with the hash over every input.

    ``role`` is ``server``/``client`` for a Pair and ``rank-<i>`` for a Group rank.
    ``tag`` (hashed only when set, so every other name is unchanged) tells apart the
    pods of a link-blame re-pair from the unit's own (F10).
    """
    if test_index < 0 or attempt < 1:
        raise ValueError(f"invalid test index {test_index} or attempt {attempt}")
    parts = [run_uid, run_name, str(test_index), node, str(attempt)]
    if tag:
        parts.append(f"tag={tag}")
    role_part = ""
    if role is not None:
        parts.append(role)
        role_part = "-" + _dns_prefix(role, limit=MAX_LABEL).strip("-")
    suffix = f"-t{test_index}-a{attempt}{role_part}-{_digest(*parts)}"
    if len(suffix) - 1 > MAX_LABEL:
        raise ValueError("test index, attempt and role are too long for a pod name")
    budget = min(_NAME_PREFIX_MAX, MAX_LABEL - len(suffix))
    return _join(_dns_prefix(run_name, limit=budget), suffix)


def service_name(
    *, run_name: str, run_uid: str, test_index: int, attempt: int, tag: str = ""
) -> str:
    """The rendezvous Service: ``bp-<run[:26]>-t<i>-a<n>-<8 hex>``.

    ``tag`` (hashed only when set) tells apart the Services of one test's several
    units: a Pair over more than two targets (its lead node) and a re-pair (F10)."""
    if test_index < 0 or attempt < 1:
        raise ValueError(f"invalid test index {test_index} or attempt {attempt}")
    extra = (f"tag={tag}",) if tag else ()
    digest = _digest(run_uid, run_name, str(test_index), str(attempt), *extra)
    suffix = f"-t{test_index}-a{attempt}-{digest}"
    budget = min(_SERVICE_PREFIX_MAX, MAX_LABEL - len(suffix) - len("bp-"))
    if budget < 0:
        raise ValueError("test index and attempt are too long for a service name")
    prefix = _dns_prefix(run_name, limit=budget)
    return f"bp-{prefix}{suffix}" if prefix else f"bp{suffix}"


def host_path_volume_name(*, index: int, mount_path: str) -> str:
    """The pod volume for ``runner.hostPaths[index]``: ``host-<index>-<sanitised mountPath>``.

    The mount path is lower-cased with every run of other characters turned into one
    ``-``; the name is cut to 63 characters. The index keeps names unique even when two
    mount paths sanitise alike.
    """
    stem = _NOT_DNS.sub("-", mount_path.lower()).strip("-")
    name = f"host-{index}-{stem}" if stem else f"host-{index}"
    return name[:MAX_LABEL].rstrip("-")


def is_valid_label_value(value: str) -> bool:
    return len(value) <= MAX_LABEL and _LABEL_VALUE.fullmatch(value) is not None


def label_value(value: str) -> str:
    """A valid label value standing for ``value`` (see the module docstring for the rule)."""
    if is_valid_label_value(value):
        return value
    keep = MAX_LABEL - _HASH_HEX - 1
    prefix = _NOT_LABEL.sub("-", value)[:keep]
    prefix = re.sub(r"^[^A-Za-z0-9]+|[^A-Za-z0-9]+$", "", prefix)
    digest = hashlib.sha256(value.encode("utf-8")).hexdigest()[:_HASH_HEX]
    return f"{prefix}-{digest}" if prefix else digest

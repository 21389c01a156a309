"""Plan-time checks of the fields a runner is built from (``runner``, ``resources``).

Both dispatchers turn these fields into a process at *attempt* time: the operator
into a pod (which the apiserver may then refuse), ``glimmer run`` into a local
command and environment. A malformed field found only then surfaces after a node
was cordoned, or as a crash whose exit status (1) reads as a hardware Fail. So the
plan refuses it up front, naming the exact field (``spec.tests[2].inline.runner.env[0]
.valueFrom``), by the rules the kubelet would apply to the pod: an env entry needs a
name, ``value`` and ``valueFrom`` exclude each other, ``valueFrom`` names exactly one
source and that source is complete and supported.

The checks look only at shapes and vocabularies, never at the cluster, so the
operator and the bare host refuse exactly the same malformed specs. Unknown field names
are not judged here: the apiserver prunes them and the CLI's strict loader refuses them.

Every corev1 ``EnvVarSource`` is in the schema, ``fileKeyRef`` included (the reference's
CRDs carry it). A ``fileKeyRef`` reads a key of an env file on one of the pod's
``emptyDir`` volumes, and a runner pod has none (its only volumes are
``runner.hostPaths``; a bare host has no pod at all), so no runner could ever start with
it: the apiserver would refuse the pod after its node was cordoned, and a bare host would
run the test without the variable. It is refused here instead, naming the field, in both
dispatchers (I24).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

ENV_SOURCES: Final = (
    "configMapKeyRef",
    "fieldRef",
    "fileKeyRef",
    "resourceFieldRef",
    "secretKeyRef",
)

#: ``fieldRef.fieldPath`` values a container's env may select (the kubelet's list).
FIELD_PATHS: Final[frozenset[str]] = frozenset(
    {
        "metadata.name",
        "metadata.namespace",
        "metadata.uid",
        "spec.nodeName",
        "spec.serviceAccountName",
        "status.hostIP",
        "status.hostIPs",
        "status.podIP",
        "status.podIPs",
    }
)
_SUBSCRIPTED_PATH: Final = re.compile(r"metadata\.(labels|annotations)\['[^']+'\]")

#: ``resourceFieldRef.resource`` values (plus the hugepages-<size> families).
RESOURCE_FIELDS: Final[frozenset[str]] = frozenset(
    {
        f"{side}.{name}"
        for side in ("limits", "requests")
        for name in ("cpu", "memory", "ephemeral-storage")
    }
)
_HUGEPAGES: Final = re.compile(r"(limits|requests)\.hugepages-[0-9A-Za-z]+")


def _is_str(value: Any) -> bool:
    return isinstance(value, str)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_quantity(value: Any) -> bool:
    return isinstance(value, str | int | float) and not isinstance(value, bool)


def _type_problem(value: Any, *, at: str, want: str) -> str:
    return f"{at}: must be {want}, got {value!r}"


def string_list_problems(value: Any, *, at: str) -> list[str]:
    """``command`` / ``args``: a list of strings (a bare string would be split per letter)."""
    if value is None:
        return []
    if not isinstance(value, list | tuple):
        return [_type_problem(value, at=at, want="a list of strings")]
    return [
        _type_problem(item, at=f"{at}[{index}]", want="a string")
        for index, item in enumerate(value)
        if not _is_str(item)
    ]


def env_problems(value: Any, *, at: str) -> list[str]:
    """A container ``env`` list, by the pod's rules."""
    if value is None:
        return []
    if not isinstance(value, list | tuple):
        return [_type_problem(value, at=at, want="a list of {name, value | valueFrom}")]
    found: list[str] = []
    for index, entry in enumerate(value):
        found += _env_entry_problems(entry, at=f"{at}[{index}]")
    return found


def _env_entry_problems(entry: Any, *, at: str) -> list[str]:
    if not isinstance(entry, Mapping):
        return [_type_problem(entry, at=at, want="an object with a name")]
    found: list[str] = []
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        found.append(f"{at}.name: required (a non-empty string), got {name!r}")
    elif "=" in name or "\0" in name:
        found.append(f"{at}.name: {name!r} cannot be an environment variable name (no '=' or NUL)")
    value = entry.get("value")
    if value is not None and not _is_str(value):
        found.append(_type_problem(value, at=f"{at}.value", want='a string (quote it: "...")'))
    source = entry.get("valueFrom")
    if source is None:
        return found
    if value:
        found.append(f"{at}: value and valueFrom exclude each other; keep one")
    return found + _source_problems(source, at=f"{at}.valueFrom")


def _source_problems(source: Any, *, at: str) -> list[str]:
    if not isinstance(source, Mapping):
        return [
            _type_problem(source, at=at, want=f"an object with one of {', '.join(ENV_SOURCES)}")
        ]
    named = [key for key in ENV_SOURCES if source.get(key) is not None]
    if len(named) != 1:
        found = ", ".join(named) if named else "none"
        return [f"{at}: must set exactly one of {', '.join(ENV_SOURCES)} (found {found})"]
    (key,) = named
    body = source[key]
    where = f"{at}.{key}"
    if not isinstance(body, Mapping):
        return [_type_problem(body, at=where, want="an object")]
    if key == "fieldRef":
        return _field_ref_problems(body, at=where)
    if key == "resourceFieldRef":
        return _resource_ref_problems(body, at=where)
    if key == "fileKeyRef":
        return _file_key_ref_problems(body, at=where)
    return _key_ref_problems(body, at=where)


def _field_ref_problems(body: Mapping[str, Any], *, at: str) -> list[str]:
    found: list[str] = []
    path = body.get("fieldPath")
    if not isinstance(path, str) or not path:
        found.append(f"{at}.fieldPath: required (a string), got {path!r}")
    elif path not in FIELD_PATHS and not _SUBSCRIPTED_PATH.fullmatch(path):
        found.append(
            f"{at}.fieldPath: {path!r} is not selectable; use one of "
            f"{', '.join(sorted(FIELD_PATHS))}, metadata.labels['KEY'] or "
            "metadata.annotations['KEY']"
        )
    api_version = body.get("apiVersion")
    if api_version is not None and not _is_str(api_version):
        found.append(_type_problem(api_version, at=f"{at}.apiVersion", want="a string"))
    return found


def _resource_ref_problems(body: Mapping[str, Any], *, at: str) -> list[str]:
    found: list[str] = []
    resource = body.get("resource")
    if not isinstance(resource, str) or not resource:
        found.append(f"{at}.resource: required (a string), got {resource!r}")
    elif resource not in RESOURCE_FIELDS and not _HUGEPAGES.fullmatch(resource):
        found.append(
            f"{at}.resource: {resource!r} is not selectable; use one of "
            f"{', '.join(sorted(RESOURCE_FIELDS))}"
        )
    container = body.get("containerName")
    if container is not None and not _is_str(container):
        found.append(_type_problem(container, at=f"{at}.containerName", want="a string"))
    divisor = body.get("divisor")
    if divisor is not None and not _is_quantity(divisor):
        found.append(_type_problem(divisor, at=f"{at}.divisor", want="a quantity"))
    return found


def _key_ref_problems(body: Mapping[str, Any], *, at: str) -> list[str]:
    found: list[str] = []
    key = body.get("key")
    if not isinstance(key, str) or not key:
        found.append(f"{at}.key: required (a non-empty string), got {key!r}")
    name = body.get("name")
    if name is not None and not _is_str(name):
        found.append(_type_problem(name, at=f"{at}.name", want="a string"))
    optional = body.get("optional")
    if optional is not None and not isinstance(optional, bool):
        found.append(_type_problem(optional, at=f"{at}.optional", want="true or false"))
    return found


def _file_key_ref_problems(body: Mapping[str, Any], *, at: str) -> list[str]:
    found: list[str] = []
    for name in ("volumeName", "path", "key"):
        value = body.get(name)
        if not isinstance(value, str) or not value:
            found.append(f"{at}.{name}: required (a non-empty string), got {value!r}")
    path = body.get("path")
    if isinstance(path, str) and path and (path.startswith("/") or ".." in path.split("/")):
        found.append(f"{at}.path: {path!r} must be relative to the volume, with no '..'")
    key = body.get("key")
    if isinstance(key, str) and "=" in key:
        found.append(f"{at}.key: {key!r} cannot be an env file key (no '=')")
    optional = body.get("optional")
    if optional is not None and not isinstance(optional, bool):
        found.append(_type_problem(optional, at=f"{at}.optional", want="true or false"))
    if not found:
        found.append(
            f"{at}: reads an env file from an emptyDir volume of the pod, and a runner "
            "pod has none (its only volumes are runner.hostPaths; a bare host has no pod), "
            "so the runner could never start with it; set value, or use secretKeyRef or "
            "configMapKeyRef"
        )
    return found


def runner_problems(spec: Mapping[str, Any], *, at: str) -> list[str]:
    """Every malformed runner-building field of a BurnInTest ``spec`` at path ``at``."""
    found: list[str] = []
    resources = spec.get("resources")
    if resources is not None:
        found += _resources_problems(resources, at=f"{at}.resources")
    runner = spec.get("runner")
    if runner is None:
        return found
    where = f"{at}.runner"
    if not isinstance(runner, Mapping):
        return [*found, _type_problem(runner, at=where, want="an object")]
    for key in ("image", "priorityClassName"):
        value = runner.get(key)
        if value is not None and not _is_str(value):
            found.append(_type_problem(value, at=f"{where}.{key}", want="a string"))
    for key in ("command", "args"):
        found += string_list_problems(runner.get(key), at=f"{where}.{key}")
    found += env_problems(runner.get("env"), at=f"{where}.env")
    privileged = runner.get("privileged")
    if privileged is not None and not isinstance(privileged, bool):
        found.append(_type_problem(privileged, at=f"{where}.privileged", want="true or false"))
    uid = runner.get("runAsUser")
    if uid is not None and not _is_int(uid):
        found.append(_type_problem(uid, at=f"{where}.runAsUser", want="an integer"))
    found += _list_of_objects(runner.get("hostPaths"), at=f"{where}.hostPaths")
    found += _list_of_objects(runner.get("imagesByVendor"), at=f"{where}.imagesByVendor")
    probe = runner.get("readinessProbe")
    if probe is not None and not isinstance(probe, Mapping):
        found.append(_type_problem(probe, at=f"{where}.readinessProbe", want="an object"))
    return found


def _list_of_objects(value: Any, *, at: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list | tuple):
        return [_type_problem(value, at=at, want="a list of objects")]
    return [
        _type_problem(item, at=f"{at}[{index}]", want="an object")
        for index, item in enumerate(value)
        if not isinstance(item, Mapping)
    ]


def _resources_problems(resources: Any, *, at: str) -> list[str]:
    if not isinstance(resources, Mapping):
        return [_type_problem(resources, at=at, want="an object")]
    found: list[str] = []
    for side in ("limits", "requests"):
        block = resources.get(side)
        if block is None:
            continue
        if not isinstance(block, Mapping):
            found.append(_type_problem(block, at=f"{at}.{side}", want="an object"))
            continue
        found += [
            _type_problem(quantity, at=f"{at}.{side}.{name}", want="a quantity")
            for name, quantity in block.items()
            if not _is_quantity(quantity)
        ]
    return found

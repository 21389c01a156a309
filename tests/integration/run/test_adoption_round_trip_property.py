"""Adoption against the real apiserver, for generated runner specs: whatever the pod
builder emits, the pod the apiserver stores for it is recognised as ours; the stored
pod of a copy changed in its image, command, node, volumes, security context or
credentials is not.

Each example posts the built pod into one namespace and a changed copy, under the same
name, into another, reads both back, and asks :func:`foreign_reason` about each.
"""

from __future__ import annotations

import asyncio
import copy
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glimmer.controllers.kit import names
from glimmer.controllers.run.pods import PodRequest, RunRef, build_pod, foreign_reason
from glimmer.engine import PODS, ApiServerClient
from glimmer.plan import PlannedTest
from glimmer.plan.env import PairRendezvous
from glimmer.testing import ControlPlane

pytestmark = pytest.mark.controlplane

JSON = dict[str, Any]
EXAMPLES = 30
HOST_PATH_TYPES = ("Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket",
                   "CharDevice", "BlockDevice")  # fmt: skip

_words = st.text(alphabet="abcxyz019 -_./$", max_size=8)
_env_name = st.from_regex(r"[A-Z][A-Z0-9_]{0,6}", fullmatch=True).filter(
    lambda name: not name.startswith("BURNIN")
)
_env = st.one_of(
    st.builds(lambda n, v: {"name": n, "value": v}, _env_name, _words),
    st.builds(lambda n: {"name": n, "value": ""}, _env_name),
    st.builds(
        lambda n, p: {"name": n, "valueFrom": {"fieldRef": {"fieldPath": p}}},
        _env_name, st.sampled_from(["metadata.name", "spec.nodeName", "status.hostIP"]),
    ),
    st.builds(
        lambda n, d: {"name": n, "valueFrom": {"resourceFieldRef": {
            "resource": "limits.memory", **({"divisor": d} if d else {})}}},
        _env_name, st.sampled_from([None, "1Mi", "1024Ki", "1"]),
    ),
)  # fmt: skip
_absolute = st.lists(st.sampled_from(["dev", "infiniband", "sys", "var", "x_1", "Run"]),
                     min_size=1, max_size=3).map(lambda parts: "/" + "/".join(parts))  # fmt: skip


@st.composite
def _host_paths(draw: st.DrawFn) -> list[JSON]:
    mounts = draw(st.lists(_absolute, max_size=3, unique=True))
    entries = []
    for mount in mounts:
        entry: JSON = {"path": draw(_absolute), "mountPath": mount,
                       "readOnly": draw(st.booleans())}  # fmt: skip
        kind = draw(st.sampled_from((None, *HOST_PATH_TYPES)))
        if kind:
            entry["type"] = kind
        entries.append(entry)
    return entries


_small = st.integers(min_value=0, max_value=5)
_handler = st.one_of(
    st.builds(lambda p, path: {"httpGet": {"port": p, **({"path": path} if path else {})}},
              st.integers(1, 65535), st.sampled_from([None, "/ready", ""])),
    st.builds(lambda p: {"tcpSocket": {"port": p}}, st.integers(1, 65535)),
    st.builds(lambda c: {"exec": {"command": c}}, st.lists(_words, min_size=1, max_size=3)),
    st.builds(lambda p: {"grpc": {"port": p}}, st.integers(1, 65535)),
)  # fmt: skip


@st.composite
def _probe(draw: st.DrawFn) -> JSON:
    probe = dict(draw(_handler))
    for key in ("initialDelaySeconds", "periodSeconds", "timeoutSeconds",
                "successThreshold", "failureThreshold"):  # fmt: skip
        value = draw(st.one_of(st.none(), _small))
        if value is not None:
            probe[key] = value
    return probe


_memory = st.sampled_from(["1Gi", "1024Mi", "512Mi", "1073741824", "2G"])
_cpu = st.sampled_from(["500m", "0.5", "1", "2", "1500m"])


@st.composite
def _resources(draw: st.DrawFn) -> JSON | None:
    limits: JSON = {}
    if draw(st.booleans()):
        limits["memory"] = draw(_memory)
    if draw(st.booleans()):
        limits["cpu"] = draw(_cpu)
    if draw(st.booleans()):
        limits["nvidia.com/gpu"] = draw(st.sampled_from([1, 8, "4"]))
    # A request only where no limit is set (a request above its limit is refused).
    requests = {"cpu": "100m"} if "cpu" not in limits and draw(st.booleans()) else {}
    resources = {k: v for k, v in (("limits", limits), ("requests", requests)) if v}
    return resources or None


@st.composite
def runner_specs(draw: st.DrawFn) -> JSON:
    """A BurnInTest spec as the builder reads it (after CRD defaulting)."""
    runner: JSON = {"image": "example.com/runner:1"}
    for key in ("command", "args"):
        if draw(st.booleans()):
            runner[key] = draw(st.lists(_words, min_size=1, max_size=3))
    if draw(st.booleans()):
        runner["env"] = draw(st.lists(_env, max_size=3))
    runner["privileged"] = draw(st.sampled_from([None, True, False]))
    runner["runAsUser"] = draw(st.sampled_from([None, 0, 1000]))
    runner["hostPaths"] = draw(_host_paths())
    if draw(st.booleans()):
        runner["readinessProbe"] = draw(_probe())
    spec: JSON = {"kind": "custom", "scope": "Node",
                  "durationSeconds": draw(st.integers(1, 3600)),
                  "runner": {k: v for k, v in runner.items() if v is not None}}  # fmt: skip
    resources = draw(_resources())
    if resources:
        spec["resources"] = resources
    if draw(st.booleans()):
        spec["hostNetwork"] = True
    return spec


def _request(spec: JSON, *, paired: bool) -> PodRequest:
    test = PlannedTest(name="t", required=True, spec=spec)
    if not paired:
        return PodRequest(test_index=0, test=test, node="n0", attempt=1,
                          image="example.com/runner:1")  # fmt: skip
    return PodRequest(
        test_index=0, test=test, node="n0", attempt=1, image="example.com/runner:1",
        role="server", service="t-rdv",
        rendezvous=PairRendezvous(role="server", peer_host="client.t-rdv", peer_node="n1"),
    )  # fmt: skip


# --- changes that must make a pod foreign: each is a real change for any built pod ---


def _other_image(pod: JSON) -> None:
    pod["spec"]["containers"][0]["image"] = "example.com/other:2"


def _other_command(pod: JSON) -> None:
    container = pod["spec"]["containers"][0]
    container["command"] = [*container.get("command", ["sh"]), "-c", "exit 0"]


def _other_args(pod: JSON) -> None:
    container = pod["spec"]["containers"][0]
    container["args"] = [*container.get("args", []), "--pass"]


def _other_node_selector(pod: JSON) -> None:
    pod["spec"]["nodeSelector"][names.HOSTNAME_LABEL] = "n9"


def _bound_to_another_node(pod: JSON) -> None:
    pod["spec"]["nodeName"] = "n9"


def _extra_host_path(pod: JSON) -> None:
    pod["spec"].setdefault("volumes", []).append({"name": "extra", "hostPath": {"path": "/"}})
    pod["spec"]["containers"][0].setdefault("volumeMounts", []).append(
        {"name": "extra", "mountPath": "/host"}
    )


def _host_path_moved_or_added(pod: JSON) -> None:
    if not pod["spec"].get("volumes"):
        _extra_host_path(pod)
        return
    pod["spec"]["volumes"][0]["hostPath"]["path"] = "/etc/other-host-path"


def _read_only_flipped_or_mount_added(pod: JSON) -> None:
    mounts = pod["spec"]["containers"][0].get("volumeMounts")
    if not mounts:
        _extra_host_path(pod)
        return
    mounts[0]["readOnly"] = not mounts[0]["readOnly"]


def _privilege_flipped(pod: JSON) -> None:
    container = pod["spec"]["containers"][0]
    context = container.setdefault("securityContext", {})
    if context.get("privileged"):
        del context["privileged"]
        if not context:
            del container["securityContext"]
    else:
        context["privileged"] = True


def _other_user(pod: JSON) -> None:
    context = pod["spec"]["containers"][0].setdefault("securityContext", {})
    context.update(runAsUser=int(context.get("runAsUser", 0)) + 7, runAsNonRoot=True)


def _capability_added(pod: JSON) -> None:
    context = pod["spec"]["containers"][0].setdefault("securityContext", {})
    context["capabilities"] = {"add": ["SYS_ADMIN"]}


def _pod_runs_as_root(pod: JSON) -> None:
    pod["spec"]["securityContext"] = {"runAsUser": 0}


def _host_pid(pod: JSON) -> None:
    pod["spec"]["hostPID"] = True


def _token_mounted(pod: JSON) -> None:
    pod["spec"]["automountServiceAccountToken"] = True


def _automount_unset(pod: JSON) -> None:
    del pod["spec"]["automountServiceAccountToken"]


def _other_service_account(pod: JSON) -> None:
    pod["spec"]["serviceAccountName"] = "admin"


CHANGES: tuple[Callable[[JSON], None], ...] = (
    _other_image, _other_command, _other_args, _other_node_selector, _bound_to_another_node,
    _extra_host_path, _host_path_moved_or_added, _read_only_flipped_or_mount_added,
    _privilege_flipped, _other_user, _capability_added, _pod_runs_as_root, _host_pid,
    _token_mounted, _automount_unset, _other_service_account,
)  # fmt: skip


@pytest.fixture
def other_namespace(control_plane: ControlPlane, namespace: str) -> Iterator[str]:
    name = f"{namespace[:50]}-b"
    control_plane.kubectl("create", "namespace", name)
    try:
        yield name
    finally:
        control_plane.delete_namespace(name)


def test_adoption_recognises_the_stored_form_of_every_built_pod_and_no_changed_one(
    control_plane: ControlPlane, namespace: str, other_namespace: str
) -> None:
    with asyncio.Runner() as runner:
        client = runner.run(ApiServerClient.connect(str(control_plane.kubeconfig_path)))

        async def round_trip(pod: JSON, ns: str) -> JSON:
            await client.create(PODS, pod, namespace=ns)
            return await client.get(PODS, pod["metadata"]["name"], namespace=ns)

        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
        )
        @given(
            spec=runner_specs(), paired=st.booleans(), change=st.sampled_from(CHANGES),
            service_account=st.sampled_from(["glimmer-runner", None]),
        )  # fmt: skip
        def check(
            spec: JSON, paired: bool, change: Callable[[JSON], None], service_account: str | None
        ) -> None:
            run = RunRef(namespace, "r", str(uuid.uuid4()))
            ours = build_pod(
                run=run, request=_request(spec, paired=paired),
                tolerations=[{"key": "gpu", "operator": "Exists"}],
                service_account=service_account,
            )  # fmt: skip
            stored = runner.run(round_trip(ours, namespace))
            assert foreign_reason(stored, expected=ours) is None, (ours, stored)
            changed = copy.deepcopy(ours)
            change(changed)
            changed["metadata"]["namespace"] = other_namespace
            stored_change = runner.run(round_trip(changed, other_namespace))
            assert foreign_reason(stored_change, expected=ours) is not None, (
                change.__name__, stored_change,
            )  # fmt: skip

        try:
            check()
        finally:
            runner.run(client.close())

"""``--run ns/name``: a run's report from what the cluster holds.

The envelopes come from the run's ConfigMap sinks (L7: one ``data`` entry per
deliveryId), not from the run's status: the report shows what was *delivered*, the
same documents a webhook consumer received. The sinks are the pinned plan's (E5);
a run refused before its plan was pinned delivered to its profile's sinks (L4). A run
with no ConfigMap sink is refused: there is nothing delivered to read, and reading
the status instead would be a second, differently-built view.

A sink ConfigMap is shared by every run that names the sink, so entries are kept by
``run.uid``; an entry that does not decode is refused (it could be this run's). The
pinned plan also gives each test's thresholds (drawn on the distributions) and
required flags; NodeFingerprints (any namespace) give each node's identity; the
run's ``status.cohortVerdicts`` gives the cohort bands its fleet charts draw (C9).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from glimmer.api import GROUP, KINDS_BY_NAME, VERSION
from glimmer.api.vocabulary import ConditionStatus
from glimmer.contract import envelope as wire
from glimmer.engine import CONFIGMAPS, ApiError, KubeClient, Resource, is_not_found
from glimmer.plan import PinnedPlan
from glimmer.plan.gates import planned_thresholds
from glimmer.plan.pinned import PlanDecodeError
from glimmer.report.assemble import assemble
from glimmer.report.model import Gate, NodeIdentity, Report, cohort_bands
from glimmer.report.reading import ReportInputError
from glimmer.report.sources import envelopes_from_text

PLAN_ANNOTATION: Final = f"{GROUP}/plan"


def _resource(kind: str) -> Resource:
    info = KINDS_BY_NAME[kind]
    return Resource(GROUP, VERSION, info.plural, True, info.kind)


RUNS: Final = _resource("BurnInRun")
PROFILES: Final = _resource("BurnInProfile")
SINKS: Final = _resource("BurnInSink")
FINGERPRINTS: Final = _resource("NodeFingerprint")


def parse_run_ref(text: str) -> tuple[str, str]:
    namespace, sep, name = text.partition("/")
    if not sep or not namespace or not name or "/" in name:
        raise ReportInputError(f"--run {text!r}: expected <namespace>/<name>")
    return namespace, name


async def _get(client: KubeClient, resource: Resource, name: str, *, namespace: str) -> Any:
    try:
        return await client.get(resource, name, namespace=namespace)
    except ApiError as err:
        if is_not_found(err):
            return None
        raise ReportInputError(f"reading {resource} {namespace}/{name}: {err}") from None


def _plan(run: Mapping[str, Any]) -> PinnedPlan | None:
    annotations = (run.get("metadata") or {}).get("annotations") or {}
    text = annotations.get(PLAN_ANNOTATION)
    if not isinstance(text, str):
        return None
    try:
        return PinnedPlan.from_annotation(text)
    except PlanDecodeError as err:
        raise ReportInputError(f"the run's pinned plan cannot be read: {err}") from None


async def _sink_names(
    client: KubeClient, run: Mapping[str, Any], plan: PinnedPlan | None, *, namespace: str
) -> Sequence[str]:
    if plan is not None:
        return plan.sinks
    profile_name = (run.get("spec") or {}).get("profileRef")
    if not isinstance(profile_name, str) or not profile_name:
        return ()
    profile = await _get(client, PROFILES, profile_name, namespace=namespace)
    sinks = ((profile or {}).get("spec") or {}).get("sinks") or []
    return [s for s in sinks if isinstance(s, str)]


async def _delivered(
    client: KubeClient, *, namespace: str, uid: str, sinks: Sequence[str]
) -> tuple[list[wire.Envelope], list[str]]:
    """This run's envelopes from every ConfigMap sink, and the sinks read."""
    envelopes: list[wire.Envelope] = []
    read: list[str] = []
    for sink_name in sinks:
        sink = await _get(client, SINKS, sink_name, namespace=namespace)
        spec = (sink or {}).get("spec") or {}
        if spec.get("type") != "ConfigMap":
            continue
        map_name = (spec.get("configMap") or {}).get("name")
        if not isinstance(map_name, str) or not map_name:
            raise ReportInputError(f"sink {namespace}/{sink_name} has no configMap.name")
        read.append(sink_name)
        config_map = await _get(client, CONFIGMAPS, map_name, namespace=namespace)
        for key, text in sorted(((config_map or {}).get("data") or {}).items()):
            where = f"ConfigMap {namespace}/{map_name} key {key}"
            for envelope in envelopes_from_text(str(text), where=where):
                if envelope.run.uid == uid:
                    envelopes.append(envelope)
    return envelopes, read


def _identity(item: Mapping[str, Any]) -> NodeIdentity:
    status = item.get("status") or {}
    gpus = []
    for gpu in status.get("gpus") or []:
        if isinstance(gpu, Mapping):
            words = [str(gpu.get(k)) for k in ("vendor", "model", "arch") if gpu.get(k)]
            gpus.append(f"#{gpu.get('index', '?')} " + " ".join(words))
    drifted = any(
        isinstance(c, Mapping)
        and c.get("type") == "Drifted"
        and c.get("status") == ConditionStatus.TRUE
        for c in status.get("conditions") or []
    )
    return NodeIdentity(
        node=str((item.get("spec") or {}).get("nodeName", "")),
        gpus=tuple(gpus),
        os_image=str(status.get("osImage") or ""),
        kernel=str(status.get("kernel") or ""),
        digest=str(status.get("digest") or ""),
        drifted=drifted,
    )


async def _identities(client: KubeClient, nodes: set[str]) -> list[NodeIdentity]:
    try:
        listing = await client.list(FINGERPRINTS)
    except ApiError:
        return []  # identities are context, never part of the verdict
    found = [_identity(i) for i in listing.get("items") or [] if isinstance(i, Mapping)]
    return sorted((i for i in found if i.node in nodes), key=lambda i: i.node)


def _gates(plan: PinnedPlan) -> list[Gate]:
    return [
        Gate(
            test=test.name,
            metric=t.metric,
            comparison=t.comparison,
            value=t.value,
            applicability=t.applicability,
        )
        for test, t in planned_thresholds(plan)
    ]


async def report_from_cluster(client: KubeClient, *, namespace: str, name: str) -> Report:
    run = await _get(client, RUNS, name, namespace=namespace)
    if run is None:
        raise ReportInputError(f"BurnInRun {namespace}/{name} not found")
    uid = str((run.get("metadata") or {}).get("uid", ""))
    plan = _plan(run)
    sinks = await _sink_names(client, run, plan, namespace=namespace)
    envelopes, read = await _delivered(client, namespace=namespace, uid=uid, sinks=sinks)
    if not read:
        raise ReportInputError(
            f"BurnInRun {namespace}/{name} has no ConfigMap sink (sinks: "
            f"{', '.join(sinks) or 'none'}); a report reads delivered envelopes, so give the "
            "profile a ConfigMap sink, or report from the envelopes a webhook received "
            "(--from-file / --results-dir)"
        )
    if not envelopes:
        raise ReportInputError(
            f"no envelope of BurnInRun {namespace}/{name} (uid {uid}) in its ConfigMap "
            f"sink(s) {', '.join(read)}"
        )
    nodes = {n for e in envelopes for r in e.results for n in r.nodes}
    return assemble(
        envelopes,
        source=f"cluster: BurnInRun {namespace}/{name}, ConfigMap sink(s) {', '.join(read)}",
        gates=_gates(plan) if plan is not None else None,
        required={t.name: t.required for t in plan.tests} if plan is not None else None,
        identities=await _identities(client, nodes),
        # C9: the bands the run recorded as it judged its cohorts (no envelope carries
        # them); drawn beside the delivered results, whose violations say who failed.
        cohort_bands=cohort_bands((run.get("status") or {}).get("cohortVerdicts")),
    )

"""Pair and Group units: one execution over several pods, one result (F1-F9).

Per attempt a Pair is a headless rendezvous Service, both nodes cordoned, the server
pod, and, only once the server pod is Ready, the client; a Group is the same with rank
0 first and every worker together once rank 0 is Ready. The order is the point: a
client that connects before its server listens gets "connection refused", and that
reads as a bad link. Readiness is the server's ``readinessProbe`` as the kubelet judges
it (the PodReady condition); a server without a probe is Ready once it runs.

Settlement. A Pair settles when its client terminates and its server has terminated
too, or once :data:`~glimmer.verdict.links.SERVER_REPORT_GRACE_SECONDS` have passed
since the client ended (the pass requeues meanwhile; it never blocks): a server usually
ends a moment after its client, and its own report is folded in by the same
``combine_pair`` the bare host's ``--server-record`` path uses. A server still running
past the grace did not report, and is deleted after the status write. A Group waits
for every rank.
A server (rank 0) that ends before its client (workers) exist settles the attempt on
its own report alone, and a pod overdue (E16) or whose image will not arrive settles it
Error, every live pod of the attempt deleted after the write. The verdict is never
decided here: each side's log is read into a report (its pod's end folded in, see
:func:`~glimmer.controllers.run.evidence.side_report`), the reports are combined by
``glimmer.verdict.links`` (F3, F6-F8) and the combination is judged by
:func:`~glimmer.verdict.judge_attempt`, the one choke point every scope goes through.
Provenance is decided there too (:func:`~glimmer.verdict.links.link_provenance`), over
EVERY member of the attempt and every planned node of the unit, terminated or not,
pod or no pod: a member whose pod spec points at the simulated GPU or whose node the
simulated kubelet labels is ``sim``, one that did not report is ``unknown``, and the
weakest wins, so a link certifies its nodes only when every side reported silicon.

Names are deterministic (run UID, test index, node, attempt, role), so a manager
restarted at any instant finds the Service and pods it already made; each is used only
when it is provably ours (the lead's UID once its attempt entry pins it, else equality
with what the builder makes), exactly as a Node pod (I18). The attempt is recorded
against the server (rank 0) node and pod (F9); the checkpoint reads the client (Pair) or
rank 0 (Group). Nothing is deleted before the status write that justifies it, and every
settled attempt's Service is deleted after that write.

One upstream quirk is kept (F2): when the client's (a worker's) image cannot be
resolved, the attempt is Error but the already running server (rank 0) is not killed;
it runs on to its own kubelet deadline, even while a retry's new pods start.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

from glimmer.api import format_time, parse_time
from glimmer.api.vocabulary import ConditionStatus
from glimmer.controllers.kit import checkpoint, names
from glimmer.controllers.kit.core_view import PodView
from glimmer.controllers.kit.ref import RunRef
from glimmer.controllers.kit.view import ObjectView
from glimmer.controllers.run import kube, podstate, soak
from glimmer.controllers.run.context import RunOptions
from glimmer.controllers.run.evidence import Evidence, SideRead, sim_node
from glimmer.controllers.run.passes import (
    Execution,
    Launch,
    Pass,
    Step,
    error_verdict,
    live_pod_settled,
    new_result,
)
from glimmer.controllers.run.pods import PodRequest, build_pod
from glimmer.controllers.run.reads import RunReads
from glimmer.controllers.run.services import (
    build_service,
    foreign_service_reason,
)
from glimmer.engine import NODES, ApiError, KubeClient, is_already_exists
from glimmer.plan import (
    ImageError,
    PinnedPlan,
    PlannedTest,
    Unit,
    can_launch,
    group_rendezvous,
    overdue_after_seconds,
    pair_rendezvous,
    pod_name,
    service_name,
)
from glimmer.plan import spec as specs
from glimmer.plan.gates import threshold_from_wire
from glimmer.plan.units import CLIENT, SERVER, rank_hostname
from glimmer.verdict import AttemptVerdict, Phase, judge_attempt
from glimmer.verdict.dissent import DID_NOT_REPORT
from glimmer.verdict.links import (
    SERVER_REPORT_GRACE_SECONDS,
    SideReport,
    combine_group,
    combine_pair,
)
from glimmer.verdict.messages import bracket, join_clauses

JSON = dict[str, Any]

#: Rendezvous Service UIDs remembered from their creates (deletes without a read).
REMEMBERED_SERVICES: Final = 4096
#: How an overdue message names a member that never ran / was still running (F5).
NEVER_STARTED: Final = "never started"
NEVER_FINISHED: Final = "never finished"


@dataclass(frozen=True)
class Member:
    """One pod of a link attempt: its hostname (``server``, ``client``, ``rank-<i>``),
    node, position (0 = the server / rank 0) and deterministic pod name."""

    role: str
    node: str
    position: int
    pod: str

    @property
    def label(self) -> str:
        """How messages name it: ``server``/``client``, or ``rank <i>``."""
        return self.role if self.role in (SERVER, CLIENT) else f"rank {self.position}"


@dataclass(frozen=True)
class LinkAttempt:
    """The names of one attempt of a Pair or Group unit."""

    ex: Execution
    service: str
    members: tuple[Member, ...]
    #: A link-blame re-pair's pod tag ("" for a planned unit, see :func:`unit_tags`).
    pod_tag: str = ""

    @property
    def lead(self) -> Member:
        return self.members[0]

    @property
    def followers(self) -> tuple[Member, ...]:
        return self.members[1:]

    @property
    def pair(self) -> bool:
        return self.ex.test.scope == "Pair"

    @property
    def what(self) -> str:
        """The lead clause of a controller-written message (F3: about the link)."""
        nodes = "+".join(self.ex.unit.nodes)
        if self.pair:
            return f"the link {nodes} (server {self.lead.node}, client {self.members[1].node})"
        return f"the group of {len(self.members)} over {nodes}"


def unit_tags(plan: PinnedPlan, test: PlannedTest, unit: Unit) -> tuple[str, str]:
    """``(pod tag, Service tag)`` of a link unit (F10): a re-pair (its test is not the
    plan's test at its index: the diagnostic copy, see ``repairs.py``) tags both with
    its nodes, since its server's node also serves the unit it re-pairs; a Pair over
    more than two targets tags its Service with its lead node (its pods differ by node
    already); anything else is untagged, so every earlier name is unchanged."""
    if plan.tests[unit.test_index].name != test.name:
        tag = "repair:" + "+".join(unit.nodes)
        return tag, tag
    if test.scope == "Pair" and len(plan.targets) > 2:
        return "", unit.lead_node
    return "", ""


def link_attempt(work: Pass, ex: Execution) -> LinkAttempt:
    """Every name of ``ex``'s attempt, computed once (E13: deterministic)."""
    view = work.view
    nodes = ex.unit.nodes
    pod_tag, service_tag = unit_tags(work.plan, ex.test, ex.unit)
    if ex.test.scope == "Pair":
        roles = [SERVER, CLIENT]
    else:
        roles = [rank_hostname(i) for i in range(len(nodes))]
    members = tuple(
        Member(
            role=role,
            node=node,
            position=i,
            pod=pod_name(
                run_name=view.name,
                run_uid=view.uid,
                test_index=ex.test_index,
                node=node,
                attempt=ex.attempt,
                role=role,
                tag=pod_tag,
            ),
        )
        for i, (role, node) in enumerate(zip(roles, nodes, strict=True))
    )
    service = service_name(
        run_name=view.name, run_uid=view.uid, test_index=ex.test_index, attempt=ex.attempt,
        tag=service_tag,
    )  # fmt: skip
    # The attempt is the server's (rank 0's): its entry names that pod (F9).
    return LinkAttempt(ex=dataclasses.replace(ex, pod_name=members[0].pod), service=service,
                       members=members, pod_tag=pod_tag)  # fmt: skip


def _age(work: Pass, pod: Mapping[str, Any]) -> float:
    created = ObjectView(pod).created_at
    return (work.now - parse_time(str(created))).total_seconds() if created else 0.0


def ready(pod: Mapping[str, Any]) -> bool:
    """The kubelet's PodReady condition (F1): what gates the client and the workers."""
    if not podstate.live(pod) or not podstate.started_at(pod):
        return False
    return PodView(pod).condition("Ready") == ConditionStatus.TRUE


def lead_alone(pod: Mapping[str, Any], pods: Sequence[Mapping[str, Any]]) -> bool:
    """E18: a Pair server or Group rank 0 whose client or workers were not created yet
    is not running a measurement (a Graceful cancel does not wait for it)."""
    pod_labels = ObjectView(pod).labels
    if pod_labels.get(names.PAIR_ROLE_LABEL) == SERVER:
        partner = {names.PAIR_ROLE_LABEL: CLIENT}
    elif pod_labels.get(names.RANK_LABEL) == "0":
        partner = {}
    else:
        return False
    keys = (names.RUN_LABEL, names.TEST_LABEL, names.ATTEMPT_LABEL)
    for other in pods:
        other_labels = ObjectView(other).labels
        if other is pod or any(other_labels.get(k) != pod_labels.get(k) for k in keys):
            continue
        if partner and all(other_labels.get(k) == v for k, v in partner.items()):
            return False
        if not partner and other_labels.get(names.RANK_LABEL) not in (None, "0"):
            return False
    return True


class UnitOps(Protocol):
    """The unit operations a link unit is stepped with: the pass's own records,
    cordons, pod checks and image choice (the sweeper provides them, and Node units use
    the same ones), and the reads, client and evidence it shares."""

    options: RunOptions
    reads: RunReads
    client: KubeClient
    evidence: Evidence

    async def get_pod(self, work: Pass, name: str) -> JSON | None: ...

    def foreign_pod(
        self,
        work: Pass,
        pod: JSON,
        *,
        test: PlannedTest,
        recorded_uid: str | None,
        build: Callable[[str], JSON],
    ) -> str | None: ...

    def record(
        self,
        work: Pass,
        ex: Execution,
        verdict: AttemptVerdict,
        *,
        pod: str | None,
        started: str | None,
        finished: str | None = None,
        artifacts: Sequence[Mapping[str, Any]] = (),
        base: JSON | None = None,
        pod_uid: str = "",
    ) -> Step: ...

    def record_foreign(
        self, work: Pass, ex: Execution, pod: JSON, *, problem: str, record_as: str | None = None
    ) -> Step: ...

    async def confirm(self, work: Pass) -> None: ...

    async def cordon(self, work: Pass, test: PlannedTest, node: str) -> None: ...

    async def image_for(
        self, work: Pass, test: PlannedTest, node: str
    ) -> str | ImageError | None: ...


class Links:
    """Steps Pair and Group units with the unit operations (:class:`UnitOps`)."""

    def __init__(self, ops: UnitOps) -> None:
        self.ops = ops
        self.options = ops.options
        #: (namespace, name) -> UID of each rendezvous Service this process created and
        #: has not deleted yet: its delete then needs no read (the UID precondition still
        #: guards it). Oldest forgotten first; a forgotten one is read before its delete.
        self._services: OrderedDict[tuple[str, str], str] = OrderedDict()

    # --- names and manifests -----------------------------------------------------------

    def _request(self, work: Pass, att: LinkAttempt, member: Member, *, image: str) -> PodRequest:
        namespace = work.view.namespace
        ex = att.ex
        rendezvous: Any
        if att.pair:
            peer = att.members[1 - member.position].node
            rendezvous = pair_rendezvous(
                role=member.role, peer_node=peer, service=att.service, namespace=namespace
            )
            rank = None
        else:
            rendezvous = group_rendezvous(
                rank=member.position, nranks=len(att.members), root_node=att.lead.node,
                service=att.service, namespace=namespace,
            )  # fmt: skip
            rank = member.position
        return PodRequest(
            test_index=ex.test_index, test=ex.test, node=member.node, attempt=ex.attempt,
            image=image, role=member.role, rank=rank, service=att.service,
            rendezvous=rendezvous, tag=att.pod_tag,
        )  # fmt: skip

    def manifest(self, work: Pass, att: LinkAttempt, member: Member, *, image: str) -> JSON:
        """What the one builder (E13) makes for ``member``: created, or compared with."""
        return build_pod(
            run=RunRef.of(work.run),
            request=self._request(work, att, member, image=image),
            tolerations=work.view.tolerations,
            service_account=self.options.runner_service_account,
        )

    def _builder(self, work: Pass, att: LinkAttempt, member: Member) -> Callable[[str], JSON]:
        def build(image: str) -> JSON:
            return self.manifest(work, att, member, image=image)

        return build

    async def delete_service(self, work: Pass, name: str) -> None:
        """Delete one of this run's rendezvous Services (after the status write that
        settled its attempt): only one this run controls, by UID precondition, so a
        Service someone else put under the name is never touched. Gone is fine."""
        namespace = work.view.namespace
        uid = self._services.pop((namespace, name), None)
        if uid is None:
            found = await self.ops.reads.live_get(names.SERVICES, name, namespace=namespace)
            if found is None or not podstate.owned_by(found, work.view.uid):
                return
            uid = ObjectView(found).uid
        with contextlib.suppress(ApiError):
            await self.ops.client.delete(
                names.SERVICES, name, namespace=namespace, precondition_uid=uid or None
            )

    # --- the step ---------------------------------------------------------------------

    async def step(self, work: Pass, ex: Execution, *, launch: bool) -> Step:
        """The one step of a link unit's current attempt."""
        att = link_attempt(work, ex)
        ex = att.ex
        lead = await self._find(work, att.lead, confirm=ex.flight is not None)
        if lead is None:
            if ex.flight is not None:
                return await self._lead_vanished(work, att)
            if not launch:
                return Step.WAITING
            return await self._launch_lead(work, att)
        problem = self._foreign(work, att, att.lead, lead)
        if problem is not None:
            return await self._foreign_member(work, att, att.lead, lead, problem=problem)
        work.add_pod(lead)
        att = self._note_start(work, att, lead)
        ex = att.ex
        lead_done = podstate.terminated(lead)
        pods: dict[Member, JSON] = {att.lead: lead}
        for member in att.followers:
            # A missing follower decides something only once the lead has ended (an early
            # server); elsewhere a create that meets a twin adopts it.
            pod = await self._find(work, member, confirm=lead_done)
            if pod is None:
                continue
            problem = self._foreign(work, att, member, pod)
            if problem is not None:
                return await self._foreign_member(work, att, member, pod, problem=problem)
            work.add_pod(pod)
            pods[member] = pod
        missing = [m for m in att.followers if m not in pods]
        if len(pods) == 1:
            if lead_done:
                return await self._settle(work, att, pods, early=True)
            stuck = await self._stuck(work, att, pods)
            if stuck is not None:
                return stuck
            if ready(lead) and launch:
                return await self._launch_followers(work, att, missing)
            work.wait(self.options.requeue_rendezvous_seconds)
            return Step.WAITING
        if att.pair:
            client = pods[att.members[1]]
            if podstate.terminated(client):
                left = 0.0 if lead_done else self._server_grace_left(work, client)
                if left <= 0:
                    return await self._settle(work, att, pods, early=False)
                # F2: the client ended; the server's own report is worth a bounded wait
                # (its termination requeues this run sooner).
                work.wait(left)
                return Step.WAITING
        elif all(podstate.terminated(p) for p in pods.values()):
            return await self._settle(work, att, pods, early=False)
        stuck = await self._stuck(work, att, pods)
        if stuck is not None:
            return stuck
        if missing and not lead_done and ready(lead) and launch:
            # A restart came between two worker creates: the rest are made now.
            await self._launch_followers(work, att, missing)
        watched = pods.get(att.members[1]) if att.pair else lead
        if watched is not None and podstate.live(watched) and podstate.started_at(watched):
            await self.ops.evidence.checkpoint(work, ex.test, ex.unit, watched)
        return Step.WAITING

    @staticmethod
    def _server_grace_left(work: Pass, client: Mapping[str, Any]) -> float:
        """Seconds left of the grace a settled client gives its live server to report
        (from the client's kubelet-reported end, so a restarted manager waits out the
        same grace; a client with no recorded end gives none)."""
        ended = podstate.finished_at(client)
        if not ended:
            return 0.0
        since = (work.now - parse_time(str(ended))).total_seconds()
        return SERVER_REPORT_GRACE_SECONDS - max(since, 0.0)

    async def _simulated(self, member: Member, pod: Mapping[str, Any] | None) -> bool:
        """I14 over a planned member, whatever became of it: its pod's spec points at
        the simulated GPU or its pod's node is simulated, or (pod or no pod) the node the
        unit planned for it carries the simulated kubelet's labels."""
        if pod is not None and await self.ops.evidence.simulated(pod):
            return True
        return sim_node(await self.ops.reads.get(NODES, member.node))

    async def _find(self, work: Pass, member: Member, *, confirm: bool) -> JSON | None:
        """The member's pod from the pass; a miss read live when ``confirm`` (H: the
        cache may lag a pod created a moment ago)."""
        if member.pod in work.foreign:
            return None
        pod = work.pods.get(member.pod)
        if pod is None and confirm:
            pod = await self.ops.get_pod(work, member.pod)
        return pod

    def _foreign(self, work: Pass, att: LinkAttempt, member: Member, pod: JSON) -> str | None:
        """I18 for a link pod: the lead's UID once pinned, else the builder's manifest."""
        recorded = (att.ex.flight or {}).get("podUID") if member.position == 0 else None
        return self.ops.foreign_pod(
            work, pod, test=att.ex.test, recorded_uid=recorded,
            build=lambda image: self.manifest(work, att, member, image=image),
        )  # fmt: skip

    def _note_start(self, work: Pass, att: LinkAttempt, lead: JSON) -> LinkAttempt:
        """E15: the result opens when the server (rank 0) has started; its attempt entry
        pins that pod's UID (I18) and names its node and pod (F9)."""
        ex = att.ex
        started = podstate.started_at(lead)
        if not started or ex.flight is not None:
            return att
        base = dict(ex.result) if ex.result is not None else new_result(ex.test, ex.unit)
        base.setdefault("startedAt", started)
        flight = {
            "attempt": ex.attempt,
            "trigger": str(ex.trigger),
            "phase": str(Phase.RUNNING),
            "node": att.lead.node,
            "podName": att.lead.pod,
            "podUID": ObjectView(lead).uid,
            "startedAt": started,
        }
        base["attempts"] = [*(base.get("attempts") or []), flight]
        work.put(base, ex.state)  # the in-flight entry is not the verdict's
        fresh = work.execution(ex.test_index, ex.test, ex.unit)
        return dataclasses.replace(att, ex=dataclasses.replace(fresh, pod_name=att.lead.pod))

    def _record(
        self,
        work: Pass,
        att: LinkAttempt,
        verdict: AttemptVerdict,
        *,
        lead: JSON | None,
        finished: str | None = None,
        artifacts: Sequence[Mapping[str, Any]] = (),
        unload: Sequence[JSON] = (),
        ours_service: bool = True,
    ) -> Step:
        """Apply one attempt (D2-D4) against the server (rank 0), its Service deleted
        after the status write (unless it is not ``ours_service``), and ``unload`` (the
        attempt's live pods) too."""
        ex = att.ex
        killed = False
        for pod in unload:
            name = ObjectView(pod).name
            if podstate.live(pod) and name not in work.delete_after_write:
                work.delete_after_write.append(name)
                killed = True
        if ours_service:
            work.services_after_write.append(att.service)
        started = (ex.flight or {}).get("startedAt")
        if not started and lead is not None:
            started = podstate.started_at(lead)
        step = self.ops.record(
            work, ex, verdict, pod=att.lead.pod, started=started, finished=finished,
            artifacts=artifacts,
            pod_uid=ObjectView(lead).uid if lead is not None else "",
        )  # fmt: skip
        return live_pod_settled(step) if killed else step

    # --- launching ---------------------------------------------------------------------

    async def _ensure_service(self, work: Pass, att: LinkAttempt) -> str | None:
        """The attempt's rendezvous Service, created if absent; why one found under its
        name is not ours, or None."""
        expected = build_service(
            run=RunRef.of(work.run), name=att.service, test=att.ex.test.name,
            attempt=att.ex.attempt,
        )  # fmt: skip
        await self.ops.confirm(work)
        namespace = work.view.namespace
        if (namespace, att.service) in self._services:
            return None  # made by this process (a pass before its lead pod was cached)
        # Created first: an AlreadyExists answer is what says one is there (ours from
        # before a restart, or someone else's), and only then is it read and checked.
        try:
            made = await self.ops.client.create(names.SERVICES, expected, namespace=namespace)
        except ApiError as err:
            if not is_already_exists(err):
                if kube.refusal(err):
                    return f"the apiserver refused it: {checkpoint.api_message(err)}"
                raise
        else:
            self._remember_service(namespace, att.service, ObjectView(made).uid)
            return None
        found = await self.ops.reads.live_get(names.SERVICES, att.service, namespace=namespace)
        if found is None:
            return "it was deleted while being created"
        return foreign_service_reason(found, expected=expected)

    def _remember_service(self, namespace: str, name: str, uid: str) -> None:
        if uid:
            self._services[(namespace, name)] = uid
            while len(self._services) > REMEMBERED_SERVICES:
                self._services.popitem(last=False)

    def _service_problem(
        self, work: Pass, att: LinkAttempt, problem: str, *, lead: JSON | None = None
    ) -> Step:
        """A Service under the attempt's name that is not ours: Error, and the
        attempt's own pods (the running server or rank 0, if any) go after the write;
        the Service itself is never deleted (it is not ours)."""
        message = (
            f"{att.what}: rendezvous Service {att.service} cannot be used: {problem}; no verdict"
        )
        work.events.append(("Warning", "ForeignService", message))
        return self._record(work, att, error_verdict(message), lead=lead,
                            unload=[lead] if lead is not None else [],
                            ours_service=False)  # fmt: skip

    async def _launch_lead(self, work: Pass, att: LinkAttempt) -> Step:
        """F1/F4: Service, every node cordoned, then the server (rank 0), created after
        the status write that records the cordons (E10)."""
        ex = att.ex
        if not can_launch(
            ex.unit.nodes, busy=frozenset(work.busy()), cap=work.view.max_concurrent_nodes
        ):
            return Step.WAITING  # E9: every node of the unit admitted at once, or none
        image = await self._image(work, att.lead, ex)
        if image is None:
            return Step.WAITING  # E14: the lead node's fingerprint is not captured yet
        if isinstance(image, ImageError):
            # E14: that execution is an Error (no cordon placed), retried under the budget.
            message = (
                f"no runner image for node {att.lead.node} ({att.lead.label}): {image.message}"
            )
            return self._record(work, att, error_verdict(message), lead=None, ours_service=False)
        problem = await self._ensure_service(work, att)
        if problem is not None:
            return self._service_problem(work, att, problem)
        for node in ex.unit.nodes:
            await self.ops.cordon(work, ex.test, node)
        if ex.attempt > 1:
            # A crash between an attempt's status write and its Service's delete.
            work.services_after_write.append(
                service_name(
                    run_name=work.view.name,
                    run_uid=work.view.uid,
                    test_index=ex.test_index,
                    attempt=ex.attempt - 1,
                    tag=unit_tags(work.plan, ex.test, ex.unit)[1],
                )
            )
        work.planned.append(
            Launch(
                execution=ex,
                manifest=self.manifest(work, att, att.lead, image=image),
                build=self._builder(work, att, att.lead),
                lead_pod=att.lead.pod,
            )
        )
        for node in ex.unit.nodes:
            work.launch(node)
        return Step.WAITING

    async def _image(self, work: Pass, member: Member, ex: Execution) -> str | ImageError | None:
        """E14 through the sweeper's one rule; None = the node's fingerprint is pending."""
        return await self.ops.image_for(work, ex.test, member.node)

    async def _launch_followers(
        self, work: Pass, att: LinkAttempt, missing: Sequence[Member]
    ) -> Step:
        """F1/F4: the server (rank 0) is Ready: the client (every worker) together."""
        images: dict[Member, str] = {}
        for member in missing:
            image = await self._image(work, member, att.ex)
            if image is None:
                return Step.WAITING  # E14: this member's fingerprint is not captured yet
            if isinstance(image, ImageError):
                # F2's quirk: Error, but the running server (rank 0) is left to run on.
                message = (
                    f"{att.what}: no runner image for node {member.node} ({member.label}): "
                    f"{image.message}; the {att.lead.label} pod {att.lead.pod} is left to run "
                    "to its own deadline; no verdict"
                )
                lead = work.pods.get(att.lead.pod)
                return self._record(work, att, error_verdict(message), lead=lead)
            images[member] = image
        problem = await self._ensure_service(work, att)
        if problem is not None:
            return self._service_problem(work, att, problem, lead=work.pods.get(att.lead.pod))
        siblings = tuple(m.pod for m in att.members)
        for member in missing:
            work.planned.append(
                Launch(
                    execution=dataclasses.replace(att.ex, pod_name=member.pod),
                    manifest=self.manifest(work, att, member, image=images[member]),
                    build=self._builder(work, att, member),
                    lead_pod=att.lead.pod,
                    siblings=tuple(s for s in siblings if s != member.pod),
                )
            )
        return Step.WAITING

    # --- settling ----------------------------------------------------------------------

    async def _lead_vanished(self, work: Pass, att: LinkAttempt) -> Step:
        """The server (rank 0) started and is gone unharvested: no verdict."""
        ours: list[JSON] = []
        for member in att.followers:
            pod = await self._find(work, member, confirm=True)
            if pod is not None and self._foreign(work, att, member, pod) is None:
                ours.append(pod)
        flight = att.ex.flight or {}
        message = (
            f"{att.what}: the {att.lead.label} pod {att.lead.pod} was deleted before it "
            "terminated; no verdict"
        )
        verdict = error_verdict(message, exit_code=-1, metrics=flight.get("metrics"))
        return self._record(work, att, verdict, lead=None, unload=ours)

    async def _foreign_member(
        self, work: Pass, att: LinkAttempt, member: Member, pod: JSON, *, problem: str
    ) -> Step:
        """I18: a foreign pod under one of the attempt's names is never read and left
        where it is; the attempt is Error and its own live pods go after the write."""
        ours: list[JSON] = []
        for other in att.members:
            if other == member:
                continue
            found = work.pods.get(other.pod)
            if found is not None and self._foreign(work, att, other, found) is None:
                ours.append(found)
        work.services_after_write.append(att.service)
        step = self.ops.record_foreign(work, att.ex, pod, problem=problem, record_as=att.lead.pod)
        killed = False
        for found in ours:
            name = ObjectView(found).name
            if podstate.live(found) and name not in work.delete_after_write:
                work.delete_after_write.append(name)
                killed = True
        return live_pod_settled(step) if killed else step

    async def _stuck(
        self, work: Pass, att: LinkAttempt, pods: Mapping[Member, JSON]
    ) -> Step | None:
        """E16/F2/F5: a pod overdue, or one whose image will not arrive, settles the
        attempt Error naming every unfinished member; every live pod goes after the
        write. None (and the requeue shortened) while each may still run."""
        overdue = overdue_after_seconds(att.ex.test.spec)
        grace = self.options.image_pull_grace_seconds
        trigger = False
        for pod in pods.values():
            if not podstate.live(pod):
                continue
            age = _age(work, pod)
            reason, _ = podstate.waiting(pod)
            started = podstate.started_at(pod)
            pulling = reason in podstate.IMAGE_PULL_REASONS
            if age >= overdue or (
                not started
                and (reason in podstate.PERMANENT_IMAGE_REASONS or (pulling and age >= grace))
            ):
                trigger = True
            work.wait(overdue - age)
            if not started:
                work.wait(min(self.options.requeue_unstarted_seconds, overdue - age))
                if pulling:
                    work.wait(grace - age)
        if not trigger:
            return None
        sides: list[SideReport] = []
        details: list[str] = []
        for member in att.members:
            found = pods.get(member)
            absent = DID_NOT_REPORT
            if found is None:
                absent = NEVER_STARTED
            elif podstate.live(found) and podstate.started_at(found):
                absent = NEVER_FINISHED
                age = int(_age(work, found))
                details.append(f"{member.pod} still running {age}s after creation")
            elif podstate.live(found):
                absent = NEVER_STARTED
                reason, detail = podstate.waiting(found)
                account = podstate.scheduler_message(found)
                if reason:
                    account = f"container waiting: {reason}" + (f": {detail}" if detail else "")
                details.append(
                    f"{member.pod} not started {int(_age(work, found))}s after creation: "
                    f"{account or 'no scheduler or kubelet account'}"
                )
            sides.append(SideReport(label=member.label, node=member.node, report=None,
                                    absent=absent,
                                    simulated=await self._simulated(member, found)))  # fmt: skip
        if att.pair:
            combined = combine_pair(server=sides[0], client=sides[1], overdue=True)
        else:
            combined = combine_group(sides, overdue=True)
        # F9: nothing is harvested on an overdue path; what a checkpoint read stays (I23).
        verdict = judge_attempt(combined, kind=att.ex.test.kind, thresholds=())
        note = bracket(f"{'; '.join(details)} (overdue after {overdue}s)")
        flight = att.ex.flight or {}
        verdict = dataclasses.replace(
            verdict,
            message=join_clauses(verdict.message, note),
            metrics={str(k): str(v) for k, v in (flight.get("metrics") or {}).items()},
        )
        return self._record(work, att, verdict, lead=pods.get(att.lead), unload=list(pods.values()))

    async def _settle(
        self, work: Pass, att: LinkAttempt, pods: Mapping[Member, JSON], *, early: bool
    ) -> Step:
        """Read every terminated side, combine (F3/F6-F8), judge once (D1); a member
        still running did not report (``unknown``) and is deleted after the write (F2).
        The link's provenance is decided over every member (see the module docstring)."""
        test = att.ex.test
        reads: dict[Member, SideRead] = {}
        for member, pod in pods.items():
            if podstate.terminated(pod):
                reads[member] = await self.ops.evidence.read_side(work, test, pod)
        # Every member, terminated or not, pod or no pod (an early server's client was
        # planned but never made): provenance is the weakest of them all.
        sides = [
            SideReport(
                label=member.label,
                node=member.node,
                report=reads[member].report if member in reads else None,
                simulated=await self._simulated(member, pods.get(member)),
            )
            for member in att.members
        ]
        if att.pair:
            combined = combine_pair(server=sides[0], client=sides[1], early=early)
        else:
            combined = combine_group(sides, workers_created=not early)
        verdict = judge_attempt(
            combined,
            kind=test.kind,
            thresholds=[threshold_from_wire(t) for t in specs.thresholds(test.spec)],
            # G2: a soak segment of a link is decided by its combined exit; the gates
            # judge the fold (Sweeper.record applies it, as for a Node soak).
            gate=not soak.segmented(test),
            logs_unavailable=any(r.unavailable for r in reads.values()),
        )
        refs: list[JSON] = []
        # F9: every side that reported, or the server alone when it ended before the
        # client existed; never a Group whose rank 0 ended before its workers existed.
        if att.pair or not early:
            for member, side in reads.items():
                refs += await self.ops.evidence.store_side_artifacts(work, test, member.pod, side)
        ends = [podstate.finished_at(p) for p in pods.values() if podstate.terminated(p)]
        finished = max((e for e in ends if e), default=None) or format_time(work.now)
        return self._record(
            work, att, verdict, lead=pods.get(att.lead), finished=finished, artifacts=refs,
            unload=[p for p in pods.values() if podstate.live(p)],
        )  # fmt: skip

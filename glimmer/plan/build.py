"""Profile + tests + targets -> the pinned plan, or every reason it is refused (E2, E4, I1).

Plan validation refuses a run *at start*, before anything is cordoned, with a config
Error that names the test and the fix; a misconfiguration must never surface later as
a plausible number, a hardware Fail or a hang. All refusals are collected (not just
the first), so an author fixes a profile in one round trip. The dispatcher turns a
:class:`PlanRefusal` into the synthetic ``resolve`` Error result; it is never Failed.

Beyond the upstream list (E4) this builder also refuses, failing closed, what only an
object that bypassed apiserver validation could carry: an unsupported scope, fields of
the wrong JSON type, ``repeatCount < 1`` (zero required passes would settle a result
without running it) and a negative ``durationSeconds`` (variant overlays have no
schema minimum).

``testRef`` names missing from ``tests`` are refused too, but reported separately in
:attr:`PlanRefusal.unresolved_refs` so that the operator can apply E2's 120-second
grace (``kubectl apply -f dir/`` races a run ahead of its tests) before finalising.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from glimmer.contract.kinds import is_burst_only, is_group_capable_by_default
from glimmer.plan import spec as specs
from glimmer.plan.gates import MALFORMED, describe_findings, lint_test, name_some
from glimmer.plan.pinned import PinnedPlan, PlannedTest, PlanTooLargeError
from glimmer.plan.runner_fields import env_problems, runner_problems, string_list_problems
from glimmer.plan.variants import expand_entry, inline_name
from glimmer.plan.waves import effective_cap

_AXIS_KEY: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: Shortest soak segment accepted (api §2, E4): shorter windows are not comparable.
MIN_SEGMENT_SECONDS: Final = 300


@dataclass(frozen=True)
class PlanRefusal:
    """Every reason the plan is refused, each naming the test and the fix."""

    messages: tuple[str, ...]
    #: ``testRef`` names not found (subject to E2's grace period, unlike the rest).
    unresolved_refs: tuple[str, ...] = ()

    @property
    def message(self) -> str:
        """All reasons as one line, for the synthetic ``resolve`` result."""
        return "plan refused: " + "; ".join(self.messages)


def build_plan(
    *,
    profile: Mapping[str, Any],
    tests: Mapping[str, Mapping[str, Any]],
    targets: Sequence[str],
    baseline: bool = False,
    max_concurrent_nodes: int | None = None,
    several_pairs: bool = False,
) -> PinnedPlan | PlanRefusal:
    """Expand and validate ``profile`` (a BurnInProfile ``spec``) against ``targets``.

    ``tests`` maps each ``testRef`` to its BurnInTest ``spec``; ``targets`` is the
    resolved node list in its verbatim order; ``max_concurrent_nodes`` is the run's
    live cap (nil/<1 means 1) that Pair/Group units must fit in. ``several_pairs``
    (the run sets ``spec.linkBlame``) lets a Pair test take an even number of targets,
    paired in order (F10); otherwise a Pair needs exactly 2, as the reference has it (E4).
    """
    messages: list[str] = []
    unresolved: list[str] = []
    entries = profile.get("tests")
    if not isinstance(entries, list | tuple) or not entries:
        return PlanRefusal(("the profile lists no tests; add at least one entry to spec.tests",))
    planned: list[PlannedTest] = []
    for index, entry in enumerate(entries):
        planned += _expand(index, entry, tests=tests, messages=messages, unresolved=unresolved)
    if not targets:
        messages.append("the run has no target nodes; set spec.target")
    messages += _repeated_node_targets(planned, targets=targets)
    cap = effective_cap(max_concurrent_nodes)
    for test in planned:
        try:
            messages += _validate_test(test, targets=targets, cap=cap, several_pairs=several_pairs)
        except specs.SpecError as err:
            messages.append(f"test {test.name!r}: {err}")
    messages += _duplicate_names(planned)
    messages += _malformed_thresholds(planned)
    if baseline:
        messages += _baseline_gates(planned)
    sinks = profile.get("sinks") or []
    if not isinstance(sinks, list | tuple) or not all(isinstance(s, str) for s in sinks):
        messages.append("profile spec.sinks must be a list of BurnInSink names")
        sinks = []
    fail_fast = profile.get("failFast")
    if fail_fast is not None and not isinstance(fail_fast, bool):
        messages.append("profile spec.failFast must be a boolean")
    plan = PinnedPlan(
        targets=tuple(targets),
        tests=tuple(planned),
        sinks=tuple(sinks),
        fail_fast=fail_fast is True,
        baseline=baseline,
        profile_entries=len(entries),
    )
    try:
        plan.to_annotation()
    except PlanTooLargeError as err:
        messages.append(str(err))
    except (ValueError, TypeError) as err:
        messages.append(f"the plan cannot be serialised: {err}")
    if messages:
        return PlanRefusal(messages=tuple(messages), unresolved_refs=tuple(unresolved))
    return plan


def _expand(
    index: int,
    entry: Any,
    *,
    tests: Mapping[str, Mapping[str, Any]],
    messages: list[str],
    unresolved: list[str],
) -> list[PlannedTest]:
    where = f"profile entry {index}"
    if not isinstance(entry, Mapping):
        messages.append(f"{where} is not an object")
        return []
    ref = entry.get("testRef") or ""
    inline = entry.get("inline")
    if ref and inline is not None:
        messages.append(f"{where} sets both testRef {ref!r} and inline; keep exactly one")
        return []
    if not ref and inline is None:
        messages.append(f"{where} sets neither testRef nor inline; set exactly one")
        return []
    try:
        if ref:
            if not isinstance(ref, str):
                raise specs.SpecError(f"testRef must be a string, got {ref!r}")
            spec = tests.get(ref)
            if spec is None:
                messages.append(
                    f"{where}: BurnInTest {ref!r} was not found in the run's namespace; "
                    "create it or fix testRef"
                )
                unresolved.append(ref)
                return []
            if not isinstance(spec, Mapping):
                raise specs.SpecError(f"BurnInTest {ref!r} has no spec object")
            name = ref
            messages += [
                f"BurnInTest {ref!r} ({where}): {problem}"
                for problem in runner_problems(spec, at="spec")
            ]
        else:
            if not isinstance(inline, Mapping):
                raise specs.SpecError("inline must be a BurnInTestSpec object")
            spec = inline
            name = inline_name(entry_index=index, kind=specs.kind(inline))
            messages += runner_problems(spec, at=f"spec.tests[{index}].inline")
        messages += _variant_runner_problems(entry, index=index)
        return expand_entry(entry=entry, name=name, spec=spec)
    except specs.SpecError as err:
        messages.append(f"{where}: {err}")
        return []


def _variant_runner_problems(entry: Mapping[str, Any], *, index: int) -> list[str]:
    """A variant's ``args``/``env`` replace the parent's, so they are checked the same way."""
    variants = entry.get("variants")
    if not isinstance(variants, list | tuple):
        return []  # refused by the expansion, with its own message
    found: list[str] = []
    for v_index, variant in enumerate(variants):
        if isinstance(variant, Mapping):
            at = f"spec.tests[{index}].variants[{v_index}]"
            found += string_list_problems(variant.get("args"), at=f"{at}.args")
            found += env_problems(variant.get("env"), at=f"{at}.env")
    return found


def _validate_test(
    test: PlannedTest, *, targets: Sequence[str], cap: int, several_pairs: bool = False
) -> list[str]:
    kind, scope, name = test.kind, test.scope, test.name
    found: list[str] = []
    if scope not in specs.SCOPES:
        found.append(f"test {name!r}: scope {scope!r} is not supported; use Node, Pair or Group")
    for axis in sorted(test.axes):
        if not _AXIS_KEY.fullmatch(axis):
            found.append(
                f"test {name!r}: variant axis {axis!r} cannot become an environment variable "
                "name; axis keys must match [A-Za-z_][A-Za-z0-9_]*"
            )
    if specs.repeat_count(test.spec) < 1:
        found.append(f"test {name!r}: repeatCount must be at least 1")
    if specs.duration_seconds(test.spec) < 0:
        found.append(f"test {name!r}: durationSeconds must not be negative")
    if scope == "Pair":
        found += _pair_problems(name, targets=targets, cap=cap, several_pairs=several_pairs)
    elif scope == "Group":
        found += _group_problems(test, targets=targets, cap=cap)
    found += _host_path_problems(test)
    found += _soak_problems(test, kind=kind)
    return found


def _repeated_node_targets(planned: Sequence[PlannedTest], *, targets: Sequence[str]) -> list[str]:
    # A node listed twice would give two Node-scope units the same identity (result,
    # pod names), so one of them could never be told apart; Pair/Group word their own.
    repeated = sorted(node for node, count in Counter(targets).items() if count > 1)
    if not repeated or not any(_scope_or_none(test) == "Node" for test in planned):
        return []
    return [
        f"the run's targets list {', '.join(repeated)} more than once; "
        "list each node once in spec.target.nodeNames"
    ]


def _scope_or_none(test: PlannedTest) -> str | None:
    try:
        return test.scope
    except specs.SpecError:
        return None


def _kind_readable(test: PlannedTest) -> bool:
    try:
        return bool(test.kind)
    except specs.SpecError:
        return False


def _pair_problems(
    name: str, *, targets: Sequence[str], cap: int, several_pairs: bool
) -> list[str]:
    # E4: a Pair has exactly 2 targets. F10: with spec.linkBlame, an even number of
    # targets is paired in order, (t0, t1), (t2, t3), ...: one unit per pair, so a run
    # holds links whose Passed ends can re-pair a failed one.
    found: list[str] = []
    if len(targets) != 2 and not several_pairs:
        found.append(
            f"test {name!r} is Pair-scoped and needs exactly 2 target nodes (server, client), "
            f"but the run targets {len(targets)}; list two nodes in spec.target.nodeNames "
            "(or set spec.linkBlame to pair an even number of targets in order)"
        )
    elif len(targets) < 2 or len(targets) % 2:
        found.append(
            f"test {name!r} is Pair-scoped over several pairs (spec.linkBlame) and needs an "
            f"even number of target nodes paired in order, but the run targets "
            f"{len(targets)}; list pairs of nodes in spec.target.nodeNames"
        )
    else:
        same = [targets[i] for i in range(0, len(targets), 2) if targets[i] == targets[i + 1]]
        if len(targets) == 2 and same:
            found.append(
                f"test {name!r} is Pair-scoped but both targets are node {targets[0]!r}; "
                "a link needs two different nodes"
            )
        elif same:
            found.append(
                f"test {name!r} is Pair-scoped but a pair's two targets are the same node "
                f"({', '.join(same)}); a link needs two different nodes"
            )
        repeated = sorted(node for node, count in Counter(targets).items() if count > 1)
        if len(targets) > 2 and repeated:
            found.append(
                f"test {name!r} is Pair-scoped over several pairs but the targets repeat "
                f"{', '.join(repeated)}; each node may be in one pair"
            )
    if cap < 2:
        found.append(
            f"test {name!r} is Pair-scoped and holds both nodes at once (2 interlock slots), "
            f"but maxConcurrentNodes is {cap}; set spec.maxConcurrentNodes to at least 2"
        )
    return found


def _group_problems(test: PlannedTest, *, targets: Sequence[str], cap: int) -> list[str]:
    name = test.name
    found: list[str] = []
    if len(targets) < 2:
        found.append(
            f"test {name!r} is Group-scoped and needs at least 2 target nodes, "
            f"but the run targets {len(targets)}"
        )
    repeated = sorted(node for node, count in Counter(targets).items() if count > 1)
    if repeated:
        found.append(
            f"test {name!r} is Group-scoped but the targets repeat {', '.join(repeated)}; "
            "each rank needs its own node"
        )
    if not specs.runner_image(test.spec) and not is_group_capable_by_default(test.kind):
        found.append(
            f"test {name!r} is Group-scoped but the default {test.kind!r} image does not speak "
            "the Group rendezvous (only nccl's does, and imagesByVendor does not count); "
            "set spec.runner.image to a group-capable image or use Node/Pair scope"
        )
    if cap < len(targets):
        found.append(
            f"test {name!r} is Group-scoped and holds all {len(targets)} nodes at once, "
            f"but maxConcurrentNodes is {cap}; set spec.maxConcurrentNodes to at least "
            f"{len(targets)}"
        )
    return found


def _host_path_problems(test: PlannedTest) -> list[str]:
    found: list[str] = []
    mount_paths: Counter[str] = Counter()
    for mount in specs.host_paths(test.spec):
        for key in ("path", "mountPath"):
            value = mount.get(key)
            if not isinstance(value, str) or not value.startswith("/"):
                found.append(
                    f"test {test.name!r}: runner.hostPaths {key} {value!r} must be a non-empty "
                    "absolute path"
                )
        mount_path = mount.get("mountPath")
        if isinstance(mount_path, str):
            mount_paths[mount_path] += 1
    for mount_path, count in sorted(mount_paths.items()):
        if count > 1:
            found.append(
                f"test {test.name!r}: runner.hostPaths mounts {mount_path!r} {count} times; "
                "each mountPath may appear once"
            )
    return found


def _soak_problems(test: PlannedTest, *, kind: str) -> list[str]:
    segment = specs.segment_seconds(test.spec)
    if segment is None:
        return []
    name = test.name
    duration = specs.duration_seconds(test.spec)
    found: list[str] = []
    if is_burst_only(kind):
        found.append(
            f"test {name!r}: {kind!r} is burst-only and ignores its duration, so it cannot be "
            "soaked; remove spec.soak"
        )
    if segment < MIN_SEGMENT_SECONDS:
        found.append(
            f"test {name!r}: soak.segmentSeconds is {segment}; segments must be at least "
            f"{MIN_SEGMENT_SECONDS} s"
        )
    if duration <= 0:
        found.append(f"test {name!r}: a soak needs durationSeconds > 0 (the whole soak length)")
    elif segment > duration:
        found.append(
            f"test {name!r}: soak.segmentSeconds ({segment}) exceeds durationSeconds "
            f"({duration}); shorten the segment or lengthen the soak"
        )
    if specs.repeat_count(test.spec) != 1:
        found.append(
            f"test {name!r}: a soak runs once (repeatCount must be 1, "
            f"is {specs.repeat_count(test.spec)}); lengthen the soak instead"
        )
    return found


def _duplicate_names(planned: Sequence[PlannedTest]) -> list[str]:
    counts = Counter(test.name for test in planned)
    return [
        f"planned test name {name!r} occurs {count} times; rename a variant or the test so "
        "every planned test has its own name"
        for name, count in counts.items()
        if count > 1
    ]


def _malformed_thresholds(planned: Sequence[PlannedTest]) -> list[str]:
    findings = [
        finding
        for test in planned
        if _kind_readable(test)  # an unreadable kind is already refused by _validate_test
        for finding in lint_test(test)
        if finding.severity == MALFORMED
    ]
    if not findings:
        return []
    return [
        "malformed thresholds would fail every node as a hardware verdict; fix them: "
        + describe_findings(findings)
    ]


def _baseline_gates(planned: Sequence[PlannedTest]) -> list[str]:
    gated = [test.name for test in planned if _has_thresholds(test)]
    if not gated:
        return []
    return [
        "a baseline run measures without gates, but these tests have thresholds: "
        + name_some(gated, sep=", ")
        + "; remove their thresholds or unset spec.baseline"
    ]


def _has_thresholds(test: PlannedTest) -> bool:
    try:
        return bool(specs.thresholds(test.spec))
    except specs.SpecError:
        # Unreadable thresholds are gates all the same; they are refused as malformed.
        return True

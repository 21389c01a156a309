"""Plan: profile + tests + targets -> the pinned plan, its refusals, units and waves.

Pure (standard library, ``glimmer.verdict`` and ``glimmer.contract`` only) so that the
operator and the bare-host ``glimmer run`` expand, validate and schedule a profile
identically. Inputs are wire-shaped JSON mappings (camelCase keys), exactly as the
apiserver stores them; outputs are frozen dataclasses.
"""

from glimmer.plan.build import PlanRefusal, build_plan
from glimmer.plan.env import (
    GroupRendezvous,
    PairRendezvous,
    group_rendezvous,
    pair_rendezvous,
    runner_env,
)
from glimmer.plan.gates import GateFinding, describe_findings, unsound_findings
from glimmer.plan.images import (
    ImageError,
    candidate_images,
    default_image,
    depends_on_vendor,
    resolve_image,
)
from glimmer.plan.names import host_path_volume_name, label_value, pod_name, service_name
from glimmer.plan.pinned import PinnedPlan, PlanDecodeError, PlannedTest, PlanTooLargeError
from glimmer.plan.spec import SpecError
from glimmer.plan.units import (
    Unit,
    active_deadline_seconds,
    execution_window_seconds,
    group_ranks,
    heat_expiry_seconds,
    overdue_after_seconds,
    pair_roles,
    plan_units,
    segments_required,
    slots,
    units_of_test,
)
from glimmer.plan.waves import admit_launches, can_launch, current_test, wave_schedule

__all__ = [
    "GateFinding",
    "GroupRendezvous",
    "ImageError",
    "PairRendezvous",
    "PinnedPlan",
    "PlanDecodeError",
    "PlanRefusal",
    "PlanTooLargeError",
    "PlannedTest",
    "SpecError",
    "Unit",
    "active_deadline_seconds",
    "admit_launches",
    "build_plan",
    "can_launch",
    "candidate_images",
    "current_test",
    "default_image",
    "depends_on_vendor",
    "describe_findings",
    "execution_window_seconds",
    "group_ranks",
    "group_rendezvous",
    "heat_expiry_seconds",
    "host_path_volume_name",
    "label_value",
    "overdue_after_seconds",
    "pair_rendezvous",
    "pair_roles",
    "plan_units",
    "pod_name",
    "resolve_image",
    "runner_env",
    "segments_required",
    "service_name",
    "slots",
    "units_of_test",
    "unsound_findings",
    "wave_schedule",
]

"""Names the run reconciler writes on other objects (api §9), in one place."""

from __future__ import annotations

from typing import Final

GROUP: Final = "burnin.glimmer.ai"
API_VERSION: Final = f"{GROUP}/v1alpha1"

# On BurnInRuns
FINALIZER: Final = f"{GROUP}/cordon-cleanup"
PLAN_ANNOTATION: Final = f"{GROUP}/plan"
CANCELLING_ANNOTATION: Final = f"{GROUP}/cancelling"
PENDING_TERMINAL_DELIVERY: Final = f"{GROUP}/pending-terminal-delivery"

# On Nodes
CORDON_OWNER: Final = f"{GROUP}/cordon-owner"
PRIOR_UNSCHEDULABLE: Final = f"{GROUP}/prior-unschedulable"
HEAT_EXPECTED: Final = f"{GROUP}/heat-expected"

# On runner Pods
RUN_LABEL: Final = f"{GROUP}/run"
TEST_LABEL: Final = f"{GROUP}/test"
NODE_LABEL: Final = f"{GROUP}/node"
ATTEMPT_LABEL: Final = f"{GROUP}/attempt"
PAIR_ROLE_LABEL: Final = f"{GROUP}/pair-role"
RANK_LABEL: Final = f"{GROUP}/rank"
SAFE_TO_EVICT: Final = "cluster-autoscaler.kubernetes.io/safe-to-evict"
RUNNER_CONTAINER: Final = "runner"
UNSCHEDULABLE_TAINT: Final = "node.kubernetes.io/unschedulable"
HOSTNAME_LABEL: Final = "kubernetes.io/hostname"

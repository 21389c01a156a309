"""The public surfaces are pinned: adding or removing a name is a decision, made here.

As httpx does: ``__all__`` equals an expected list, and every public name in the
package namespace is in ``__all__`` (nothing importable by accident).
"""

from __future__ import annotations

import types

import pytest

import glimmer.engine
import glimmer.testing

ENGINE = [
    "CONFIGMAPS",
    "EVENTS",
    "FIELD_MANAGER",
    "LEASES",
    "NAMESPACES",
    "NODES",
    "PODS",
    "ApiError",
    "ApiServerClient",
    "Backoff",
    "BucketRateLimiter",
    "CacheSyncTimeoutError",
    "CachedReader",
    "ClientOptions",
    "Clock",
    "Controller",
    "ControllerOptions",
    "ControllerRegistration",
    "EngineMetrics",
    "FakeClient",
    "FakeClock",
    "Informer",
    "InformerEvent",
    "InformerFactory",
    "InformerOptions",
    "ItemExponentialFailureRateLimiter",
    "KubeClient",
    "LabelSelector",
    "LeaderElectionConfig",
    "LeaderElector",
    "LeadershipLostError",
    "LiveReader",
    "Manager",
    "ManagerOptions",
    "MaxOfRateLimiter",
    "MonotonicClock",
    "NotCachedError",
    "PatchType",
    "QueueShutDownError",
    "RateLimiter",
    "Reader",
    "Readers",
    "Reconciler",
    "Resource",
    "Result",
    "Store",
    "TokenBucket",
    "Watch",
    "WatchEvent",
    "WorkQueue",
    "annotation_index",
    "autojump",
    "compact",
    "compact_node",
    "compact_pod",
    "configure_logging",
    "copy_json",
    "default_controller_rate_limiter",
    "default_identity",
    "is_already_exists",
    "is_conflict",
    "is_gone",
    "is_not_found",
    "keep_fields",
    "label_index",
    "load_configuration",
    "object_key",
    "settle",
    "share_strings",
    "strip_managed_fields",
]

TESTING = [
    "Assets",
    "AssetsMissingError",
    "ControlPlane",
    "EmbeddedOperator",
    "KubectlError",
    "Kwok",
    "ManagerProcess",
    "OperatorFailedError",
    "SimNodes",
    "find_assets",
    "wait_for_verdict",
]


def public_names(package: types.ModuleType) -> set[str]:
    return {
        name
        for name, value in vars(package).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }


@pytest.mark.parametrize(
    ("package", "expected"), [(glimmer.engine, ENGINE), (glimmer.testing, TESTING)]
)
def test_all_is_pinned(package: types.ModuleType, expected: list[str]) -> None:
    assert package.__all__ == expected


@pytest.mark.parametrize("package", [glimmer.engine, glimmer.testing])
def test_every_public_name_in_the_namespace_is_exported(package: types.ModuleType) -> None:
    assert public_names(package) == set(package.__all__)

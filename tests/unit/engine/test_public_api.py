"""The engine's public surface is pinned: adding or removing a name is a decision."""

from __future__ import annotations

import glimmer.engine

EXPECTED = {
    "CONFIGMAPS",
    "CORDON_OWNER_ANNOTATION",
    "EVENTS",
    "FIELD_MANAGER",
    "LEASES",
    "NAMESPACES",
    "NODES",
    "PODS",
    "RUN_LABEL",
    "ApiError",
    "ApiServerClient",
    "Backoff",
    "BucketRateLimiter",
    "CacheSyncTimeoutError",
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
    "LeaderElectionConfig",
    "LeaderElector",
    "LeadershipLostError",
    "Manager",
    "ManagerOptions",
    "MaxOfRateLimiter",
    "MonotonicClock",
    "PatchType",
    "QueueShutDownError",
    "RateLimiter",
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
    "configure_logging",
    "default_controller_rate_limiter",
    "default_identity",
    "is_already_exists",
    "is_conflict",
    "is_gone",
    "is_not_found",
    "keep_fields",
    "label_index",
    "load_configuration",
    "nodes_by_cordon_owner",
    "object_key",
    "pods_by_run",
    "settle",
    "strip_managed_fields",
}


def test_exported_names_are_pinned() -> None:
    assert set(glimmer.engine.__all__) == EXPECTED
    for name in EXPECTED:
        assert hasattr(glimmer.engine, name), name


def test_engine_never_uses_the_global_prometheus_registry() -> None:
    from prometheus_client import REGISTRY

    glimmer.engine.EngineMetrics()
    glimmer.engine.EngineMetrics()  # a second instance must not collide
    assert "workqueue_depth" not in {m.name for m in REGISTRY.collect()}

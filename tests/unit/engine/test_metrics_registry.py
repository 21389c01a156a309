"""Metrics live on the manager's own registry, never prometheus-client's global one."""

from __future__ import annotations

import glimmer.engine


def test_engine_never_uses_the_global_prometheus_registry() -> None:
    from prometheus_client import REGISTRY

    glimmer.engine.EngineMetrics()
    glimmer.engine.EngineMetrics()  # a second instance must not collide
    assert "workqueue_depth" not in {m.name for m in REGISTRY.collect()}

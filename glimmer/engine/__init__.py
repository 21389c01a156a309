"""The controller engine: client-go semantics for asyncio.

Client seam, informers with transform-on-ingest and indexes, a workqueue with
client-go's dirty/processing sets and rate limiting, controller workers, Lease
leader election, the manager that serves health and metrics, and the two
readers reconcilers choose between (`Readers.cached` over the informers,
`Readers.live` to the apiserver). It knows nothing of burn-in: reconcilers
above it see only `KubeClient`, `Readers` and `reconcile(key) -> Result`.

The public names are re-exported here; everything else is internal.
"""

# First: kubernetes-asyncio's generated client is loaded only if asked for (RSS).
import glimmer.engine._lazy_k8s  # noqa: F401 - imported for its side effect
from glimmer.engine.apiserver import ApiServerClient, ClientOptions, load_configuration
from glimmer.engine.cache import (
    LabelSelector,
    Store,
    annotation_index,
    label_index,
)
from glimmer.engine.client import (
    CONFIGMAPS,
    EVENTS,
    FIELD_MANAGER,
    LEASES,
    NAMESPACES,
    NODES,
    PODS,
    ApiError,
    KubeClient,
    PatchType,
    Resource,
    WatchEvent,
    is_already_exists,
    is_conflict,
    is_gone,
    is_not_found,
    object_key,
)
from glimmer.engine.clock import Clock, FakeClock, MonotonicClock, autojump, settle
from glimmer.engine.controller import Controller, ControllerOptions, Reconciler, Result
from glimmer.engine.fake import FakeClient
from glimmer.engine.informer import (
    Informer,
    InformerEvent,
    InformerFactory,
    InformerOptions,
    keep_fields,
    strip_managed_fields,
)
from glimmer.engine.leaderelection import (
    LeaderElectionConfig,
    LeaderElector,
    LeadershipLostError,
    default_identity,
)
from glimmer.engine.logconfig import configure_logging
from glimmer.engine.manager import (
    CacheSyncTimeoutError,
    ControllerRegistration,
    Manager,
    ManagerOptions,
    Watch,
)
from glimmer.engine.metrics import EngineMetrics
from glimmer.engine.ratelimit import (
    Backoff,
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    MaxOfRateLimiter,
    RateLimiter,
    TokenBucket,
    default_controller_rate_limiter,
)
from glimmer.engine.reader import (
    CachedReader,
    LiveReader,
    NotCachedError,
    Reader,
    Readers,
    copy_json,
)
from glimmer.engine.transforms import compact, compact_node, compact_pod, share_strings
from glimmer.engine.workqueue import QueueShutDownError, WorkQueue

__all__ = [
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

"""Runner image resolution and the default image table (rule E14, api §12, semantics §O).

A node must never be silently left untested, nor tested with an image built for
another vendor's hardware. So resolution either names an image it can justify or
returns an :class:`ImageError` whose message names the fix; the dispatcher records
that execution's attempt as Error (retryable, no cordon placed), never as a run
refusal and never as a pass.

Defaults are the upstream pins (``pkg/runnerimages``): vendor ``*`` means the image
runs on any node. Kinds without a default (``custom``, ``tcp-baseline``, ``disk-io``,
``fingerprint-probe``, ``fabric-soak``, unknown kinds) need ``runner.image`` or an
``imagesByVendor`` entry.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final

IMAGE_REPOSITORY: Final = "ghcr.io/baldwinspc/glimmer-burnin"
ANY_VENDOR: Final = "*"
#: A fingerprint vendor word that means "we do not know" (api §7).
UNKNOWN_VENDOR: Final = "unknown"


@dataclass(frozen=True)
class DefaultImage:
    tag: str
    vendor: str

    def reference(self, kind: str) -> str:
        return f"{IMAGE_REPOSITORY}-{kind}:{self.tag}"


DEFAULT_IMAGES: Final[Mapping[str, DefaultImage]] = MappingProxyType(
    {
        "compute-smoke": DefaultImage("v0.7.0", "nvidia"),
        "clockprobe": DefaultImage("v0.7.0", "nvidia"),
        "thermal-soak": DefaultImage("v0.7.0", "nvidia"),
        "gpu-burn": DefaultImage("v0.7.0", "nvidia"),
        "gemm-sweep": DefaultImage("v0.7.0", "nvidia"),
        "host-health": DefaultImage("v0.6.4", "nvidia"),
        "ib-write-bw": DefaultImage("v0.6.4", ANY_VENDOR),
        "nccl": DefaultImage("v0.6.4", "nvidia"),
        "gpudirect-rdma": DefaultImage("v0.6.4", "nvidia"),
        "dcgm-diag": DefaultImage("v0.6.3", "nvidia"),
        "memory-stress": DefaultImage("v0.6.2", ANY_VENDOR),
        "memory-bw": DefaultImage("v0.6.0", "nvidia"),
    }
)


@dataclass(frozen=True)
class ImageError:
    """No image can be justified for this execution; ``message`` says how to fix it."""

    message: str


def default_image(kind: str) -> str | None:
    """The kind's default image reference, or ``None`` when the kind has none."""
    entry = DEFAULT_IMAGES.get(kind)
    return None if entry is None else entry.reference(kind)


def depends_on_vendor(*, kind: str, runner: Mapping[str, Any] | None) -> bool:
    """Whether the image for ``kind`` turns on the node's GPU vendor (E14): no
    ``runner.image``, and either ``imagesByVendor`` entries or a default built for one
    vendor. Such an execution must know the vendor; guessing it would run another
    vendor's image on the node."""
    runner = runner or {}
    explicit = runner.get("image")
    if isinstance(explicit, str) and explicit:
        return False
    if runner.get("imagesByVendor"):
        return True
    default = DEFAULT_IMAGES.get(kind)
    return default is not None and default.vendor != ANY_VENDOR


def resolve_image(
    *, kind: str, runner: Mapping[str, Any] | None, node_vendor: str | None
) -> str | ImageError:
    """The image for one execution of ``kind`` on a node of ``node_vendor``.

    ``runner.image`` wins; else the first ``imagesByVendor`` entry for the node's vendor
    (an ``unknown``/absent vendor matches none); else the kind's default if it runs on
    any vendor, on this vendor, or the node's vendor is unknown.
    """
    runner = runner or {}
    explicit = runner.get("image")
    if isinstance(explicit, str) and explicit:
        return explicit
    vendor = None if node_vendor in (None, "", UNKNOWN_VENDOR) else node_vendor
    if vendor is not None:
        for entry in runner.get("imagesByVendor") or ():
            if isinstance(entry, Mapping) and entry.get("vendor") == vendor:
                image = entry.get("image")
                if isinstance(image, str) and image:
                    return image
    default = DEFAULT_IMAGES.get(kind)
    if default is None:
        return ImageError(
            f"kind {kind!r} has no default runner image; set spec.runner.image"
            + (f" or add a spec.runner.imagesByVendor entry for {vendor!r}" if vendor else "")
        )
    if default.vendor in (ANY_VENDOR, vendor) or vendor is None:
        return default.reference(kind)
    return ImageError(
        f"the default {kind!r} image is built for {default.vendor} nodes but this node's "
        f"vendor is {vendor!r}; add a spec.runner.imagesByVendor entry for {vendor!r} "
        "or set spec.runner.image"
    )

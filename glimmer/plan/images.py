"""Runner image resolution and the default image table (rule E14, api §12, semantics §O).

A node must never be silently left untested, nor tested with an image built for
another vendor's hardware. So resolution either names an image it can justify or
returns an :class:`ImageError` whose message names the fix; the dispatcher records
that execution's attempt as Error (retryable, no cordon placed), never as a run
refusal and never as a pass.

Whose images (docs/fabric.md "Images"). This project builds its runners under its own
names, :func:`runner_image` (``ghcr.io/glimmer-ai/glimmer-runner-<kind>:v<version>``,
ROCm siblings ``…-<kind>-rocm``), never under the Go implementation's published
``ghcr.io/baldwinspc/glimmer-burnin-<kind>``: an image we build must not be mistaken
for, or shadow, one the other project publishes (a supply-chain trap). Defaults:

- a kind with a runner in this repository (:data:`OWN_RUNNER_KINDS`) defaults to this
  project's image, with the vendor it needs (``*`` = any node); we never point a kind
  at a name of ours that nothing builds (every kind here has a runner, so no upstream
  pin is left in the table);
- on a node whose fingerprint says ``amd``, a kind with a ROCm sibling here
  (:data:`ROCM_SIBLING_KINDS`, ``runners/<kind>/Containerfile.rocm``) defaults to that
  ``-rocm`` image: additive to the reference, which knows ROCm images only through
  ``imagesByVendor`` (an entry there still wins);
- ``custom`` and unknown kinds have no default and need ``runner.image`` or an
  ``imagesByVendor`` entry.

Either family works when named in ``runner.image``; the vendor of each default is the
upstream one, so whether an execution depends on the node's vendor
(:func:`depends_on_vendor`) is unchanged by whose image it is.

Which runner an image *is* (:func:`runner_image_of`, rule N7): a bare host without a
container runtime stands in for a runner image with this repository's runner of the same
kind. Only names someone builds count: ours (:data:`OWN_RUNNER_KINDS`, ROCm siblings
:data:`ROCM_SIBLING_KINDS`) and the Go implementation's published ones
(:data:`UPSTREAM_RUNNER_KINDS`, :data:`UPSTREAM_ROCM_KINDS`, semantics §O), matched by
the exact repository with any tag or digest. Anything else is an image nobody here can
vouch for, never guessed from a name that merely looks like a runner's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final

#: This project's manager image (``glimmer manager``), tagged with the bare version
#: (``:0.1.0``) by the chart's appVersion and manifests/manager.
MANAGER_REPOSITORY: Final = "ghcr.io/glimmer-ai/glimmer"
#: This project's runner images: ``<RUNNER_REPOSITORY>-<kind>[-rocm]:<RUNNER_TAG>``.
RUNNER_REPOSITORY: Final = "ghcr.io/glimmer-ai/glimmer-runner"
#: The tag of this project's runner images: ``v`` + the package version
#: (``glimmer.__version__``; the pure core cannot import the package root, so a unit test
#: pins the two equal: ``test_runner_tag_is_the_package_version``).
RUNNER_TAG: Final = "v0.1.0"
#: The Go implementation's published runner images (semantics §O), for kinds we have no
#: runner for; never a name this project builds.
UPSTREAM_REPOSITORY: Final = "ghcr.io/baldwinspc/glimmer-burnin"
ROCM_SUFFIX: Final = "-rocm"
ANY_VENDOR: Final = "*"
AMD_VENDOR: Final = "amd"
#: A fingerprint vendor word that means "we do not know" (api §7).
UNKNOWN_VENDOR: Final = "unknown"

#: API kinds with a runner (and a Containerfile) in this repository: ``runners/catalog.py``
#: lists the same kinds (``test_own_runner_kinds_are_the_catalogs_api_kinds``).
OWN_RUNNER_KINDS: Final[frozenset[str]] = frozenset(
    {
        "clockprobe",
        "compute-smoke",
        "dcgm-diag",
        "fabric-soak",
        "fingerprint-probe",
        "gpudirect-rdma",
        "host-health",
        "ib-write-bw",
        "memory-bw",
        "memory-stress",
        "nccl",
        "tcp-baseline",
        "gpu-burn",
        "thermal-soak",
        "gemm-sweep",
        "disk-io",
    }
)
#: Kinds whose runner has a ROCm build here (``Containerfile.rocm``), the default on an
#: AMD node (``test_rocm_sibling_kinds_are_the_rocm_containerfiles``).
ROCM_SIBLING_KINDS: Final[frozenset[str]] = frozenset(
    {
        "clockprobe",
        "memory-bw",
        "host-health",
        "compute-smoke",
        "gpu-burn",
        "thermal-soak",
        "gemm-sweep",
        "nccl",
    }
)


#: Kinds the Go implementation publishes a runner image for (semantics §O: every kind
#: with a default there), ``ghcr.io/baldwinspc/glimmer-burnin-<kind>``.
UPSTREAM_RUNNER_KINDS: Final[frozenset[str]] = frozenset(
    {
        "compute-smoke",
        "gemm-sweep",
        "clockprobe",
        "thermal-soak",
        "gpu-burn",
        "memory-bw",
        "memory-stress",
        "host-health",
        "dcgm-diag",
        "nccl",
        "ib-write-bw",
        "gpudirect-rdma",
    }
)
#: Kinds whose ROCm build the Go implementation publishes (``…-<kind>-rocm``, §O).
UPSTREAM_ROCM_KINDS: Final[frozenset[str]] = frozenset(
    {"clockprobe", "compute-smoke", "memory-bw", "nccl", "thermal-soak", "gpu-burn"}
)
#: What a ROCm build declares to its runner: the ``BURNIN_*`` ENV of each
#: ``runners/<kind>/Containerfile.rocm`` (``test_N7_rocm_declarations_are_the_containerfiles``).
#: A local runner standing in for a ROCm image is given the same, so on an NVIDIA host it
#: refuses as the image would (rule K), never measuring the other vendor's parts.
ROCM_DECLARATIONS: Final[Mapping[str, str]] = MappingProxyType({"BURNIN_GPU_VENDOR": AMD_VENDOR})
ROCM_KIND_DECLARATIONS: Final[Mapping[str, Mapping[str, str]]] = MappingProxyType(
    {"nccl": MappingProxyType({"BURNIN_NCCL_BUILD": "rocm"})}
)


def runner_repository(kind: str, *, rocm: bool = False) -> str:
    """This project's image name for ``kind``'s runner, without a tag (what a
    Containerfile builds and ``runners/catalog.py`` records)."""
    return f"{RUNNER_REPOSITORY}-{kind}{ROCM_SUFFIX if rocm else ''}"


def runner_image(kind: str, *, rocm: bool = False) -> str:
    """This project's image reference for ``kind``'s runner at this release's tag."""
    return f"{runner_repository(kind, rocm=rocm)}:{RUNNER_TAG}"


@dataclass(frozen=True)
class DefaultImage:
    tag: str
    vendor: str
    #: Image name without the ``-<kind>`` suffix and tag.
    repository: str = RUNNER_REPOSITORY

    def reference(self, kind: str) -> str:
        return f"{self.repository}-{kind}:{self.tag}"


def _own(vendor: str) -> DefaultImage:
    return DefaultImage(RUNNER_TAG, vendor)


DEFAULT_IMAGES: Final[Mapping[str, DefaultImage]] = MappingProxyType(
    {
        # This project's runners; vendors as upstream pins them, ``*`` for host-only
        # runners upstream has no default for (tcp-baseline, fabric-soak) and for the
        # probe that inventories any vendor's devices (fingerprint-probe).
        "compute-smoke": _own("nvidia"),
        "clockprobe": _own("nvidia"),
        "host-health": _own("nvidia"),
        "ib-write-bw": _own(ANY_VENDOR),
        "nccl": _own("nvidia"),
        "gpudirect-rdma": _own("nvidia"),
        "dcgm-diag": _own("nvidia"),
        "memory-stress": _own(ANY_VENDOR),
        "memory-bw": _own("nvidia"),
        "tcp-baseline": _own(ANY_VENDOR),
        "fabric-soak": _own(ANY_VENDOR),
        "fingerprint-probe": _own(ANY_VENDOR),
        "thermal-soak": _own("nvidia"),
        "gpu-burn": _own("nvidia"),
        "gemm-sweep": _own("nvidia"),
        # Upstream has no default for disk-io; ours measures any node's disk.
        "disk-io": _own(ANY_VENDOR),
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
    if vendor == AMD_VENDOR and kind in ROCM_SIBLING_KINDS:
        return runner_image(kind, rocm=True)
    return ImageError(
        f"the default {kind!r} image is built for {default.vendor} nodes but this node's "
        f"vendor is {vendor!r}; add a spec.runner.imagesByVendor entry for {vendor!r} "
        "or set spec.runner.image"
    )


def candidate_images(*, kind: str, runner: Mapping[str, Any] | None) -> frozenset[str]:
    """Every image :func:`resolve_image` can choose for ``kind`` on some node, whatever
    its vendor: what a pod found under the test's name may run and still be ours."""
    runner = runner or {}
    explicit = runner.get("image")
    if isinstance(explicit, str) and explicit:
        return frozenset({explicit})
    images = {
        entry["image"]
        for entry in runner.get("imagesByVendor") or ()
        if isinstance(entry, Mapping) and isinstance(entry.get("image"), str) and entry["image"]
    }
    default = default_image(kind)
    if default is not None:
        images.add(default)
        if kind in ROCM_SIBLING_KINDS:
            images.add(runner_image(kind, rocm=True))
    return frozenset(images)


@dataclass(frozen=True)
class RunnerImage:
    """An image reference of a known runner family: which kind's runner it is, whether
    it is the ROCm build, and whose name it is (:data:`RUNNER_REPOSITORY` or
    :data:`UPSTREAM_REPOSITORY`)."""

    reference: str
    kind: str
    rocm: bool
    family: str

    def declarations(self) -> dict[str, str]:
        """The environment the image itself sets for its runner (a ROCm build's)."""
        if not self.rocm:
            return {}
        return {**ROCM_DECLARATIONS, **ROCM_KIND_DECLARATIONS.get(self.kind, {})}


def image_repository(reference: str) -> str:
    """``reference`` without its digest (``@sha256:…``) and tag (``:v1``); a registry
    port (``host:5000/x``) is part of the repository."""
    name = reference.split("@", 1)[0]
    slash, colon = name.rfind("/"), name.rfind(":")
    return name[:colon] if colon > slash else name


#: (family repository, kinds with a build there, kinds with a ROCm build there).
_FAMILIES: Final = (
    (RUNNER_REPOSITORY, OWN_RUNNER_KINDS, ROCM_SIBLING_KINDS),
    (UPSTREAM_REPOSITORY, UPSTREAM_RUNNER_KINDS, UPSTREAM_ROCM_KINDS),
)


def runner_image_of(reference: str) -> RunnerImage | None:
    """Which runner ``reference`` names, or None for an image of no known family (N7).

    The repository must be exactly ``<family>-<kind>`` or ``<family>-<kind>-rocm`` for a
    kind that family builds; the tag and digest may be anything. A look-alike (another
    registry or owner, an unknown kind, a ROCm name nobody builds) is None.
    """
    repository = image_repository(reference.strip())
    for family, kinds, rocm_kinds in _FAMILIES:
        prefix = f"{family}-"
        if not repository.startswith(prefix):
            continue
        name = repository[len(prefix) :]
        if name in kinds:
            return RunnerImage(reference=reference, kind=name, rocm=False, family=family)
        kind = name.removesuffix(ROCM_SUFFIX)
        if kind != name and kind in rocm_kinds:
            return RunnerImage(reference=reference, kind=kind, rocm=True, family=family)
    return None

"""Which local command stands in for a container image.

A simulated node has no container runtime, so an image is run as a local process: this
repo's runner images map to their Python entrypoints (``runners.<kind>``), its manager
image to ``glimmer`` through ``glimmer.sim.incluster`` (the pod's ServiceAccount mount
and network address stood in for), any other
container runs its own ``command`` + ``args`` directly, and an image with neither fails
as an image pull would (``ErrImagePull``), never as a silent pass.
"""

from __future__ import annotations

import re
import shlex
import sys
from collections.abc import Mapping, Sequence

import attrs

from glimmer.plan.images import MANAGER_REPOSITORY, RUNNER_REPOSITORY, UPSTREAM_REPOSITORY

#: Runner images, both name families, to this repository's runner modules: this
#: project's ``ghcr.io/glimmer-ai/glimmer-runner-<kind>[-rocm]:<tag>`` (the defaults,
#: glimmer.plan.images.runner_image) and the Go implementation's
#: ``ghcr.io/baldwinspc/glimmer-burnin-<kind>[-rocm]:<tag>``, which a user may still name
#: in ``runner.image`` (its runners speak the same contract).
DEFAULT_IMAGE_MAP: tuple[tuple[str, str], ...] = (
    *(
        (
            re.escape(repository) + r"-(?P<kind>[a-z0-9-]+?)(?:-rocm)?(?::[^@]*)?(?:@.*)?",
            "{python} -m runners.{kind_module}",
        )
        for repository in (RUNNER_REPOSITORY, UPSTREAM_REPOSITORY)
    ),
    # The manager image's entrypoint is ``glimmer``; its args (``manager ...``) follow.
    (re.escape(MANAGER_REPOSITORY) + r"(?::[^@]*)?(?:@.*)?", "{python} -m glimmer.sim.incluster"),
)


class ImagePullError(Exception):
    """No command is known for this image: the container fails like a failed pull."""


@attrs.frozen
class ImageRule:
    """``pattern`` (a full-match regex on the image reference) -> ``entrypoint`` template.

    The template is split like a shell line after formatting with the pattern's named
    groups, ``{python}`` (this interpreter) and ``{kind_module}`` (``kind`` with dashes
    turned into underscores).
    """

    pattern: re.Pattern[str]
    entrypoint: str

    @classmethod
    def parse(cls, spec: str) -> ImageRule:
        """``REGEX=TEMPLATE``, as given on the command line."""
        pattern, sep, entrypoint = spec.rpartition("=")
        if not sep or not pattern or not entrypoint:
            raise ValueError(f"image rule {spec!r} is not REGEX=COMMAND")
        return cls(re.compile(pattern), entrypoint)


@attrs.frozen
class ImageMap:
    rules: tuple[ImageRule, ...]

    @classmethod
    def default(cls, extra: Sequence[ImageRule] = ()) -> ImageMap:
        """User rules first, so they can override the runner mapping."""
        builtin = tuple(ImageRule(re.compile(p), e) for p, e in DEFAULT_IMAGE_MAP)
        return cls(tuple(extra) + builtin)

    def entrypoint(self, image: str) -> list[str] | None:
        for rule in self.rules:
            match = rule.pattern.fullmatch(image)
            if match is None:
                continue
            groups: Mapping[str, str] = {k: v or "" for k, v in match.groupdict().items()}
            values = {
                **groups,
                "python": shlex.quote(sys.executable),
                "kind_module": groups.get("kind", "").replace("-", "_"),
            }
            return shlex.split(rule.entrypoint.format(**values))
        return None

    def argv(self, container: Mapping[str, object]) -> list[str]:
        """The process to run for a pod container, Kubernetes' command/args rules applied.

        ``command`` replaces the image entrypoint and ``args`` its arguments, as in a
        real runtime; only when ``command`` is absent is the image map consulted.
        """
        command = [str(c) for c in _strings(container.get("command"))]
        args = [str(a) for a in _strings(container.get("args"))]
        if command:
            return command + args
        image = str(container.get("image", ""))
        entrypoint = self.entrypoint(image)
        if entrypoint is None:
            raise ImagePullError(
                f'image "{image}" has no simulated entrypoint and the container gives no '
                "command (the simulated kubelet cannot pull images)"
            )
        return entrypoint + args


def _strings(value: object) -> list[object]:
    return list(value) if isinstance(value, list) else []

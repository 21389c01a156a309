"""The six kinds and their CRD-level facts (api §0): names, short names, columns.

One table, read by the CRD generator, the docs generator and the converter's
kind lookup, so a kind is registered in exactly one place.
"""

from __future__ import annotations

from typing import Any, Final

import attrs

from glimmer.api.burninprofile import BurnInProfile
from glimmer.api.burninrun import BurnInRun
from glimmer.api.burninschedule import BurnInSchedule
from glimmer.api.burninsink import BurnInSink
from glimmer.api.burnintest import API_VERSION, BurnInTest
from glimmer.api.nodefingerprint import NodeFingerprint
from glimmer.verdict import MEASURED_CONDITION

GROUP: Final = "burnin.glimmer.ai"
VERSION: Final = "v1alpha1"
CATEGORY: Final = "burnin"
assert f"{GROUP}/{VERSION}" == API_VERSION


@attrs.frozen(kw_only=True)
class PrinterColumn:
    """One ``additionalPrinterColumns`` entry."""

    name: str
    json_path: str
    type: str
    priority: int = 0
    description: str | None = None


@attrs.frozen(kw_only=True)
class KindInfo:
    """CRD-level facts about one kind."""

    kind: str
    plural: str
    singular: str
    short_names: tuple[str, ...]
    model: type[Any]
    columns: tuple[PrinterColumn, ...]

    @property
    def crd_name(self) -> str:
        return f"{self.plural}.{GROUP}"


def _age() -> PrinterColumn:
    return PrinterColumn(name="Age", json_path=".metadata.creationTimestamp", type="date")


KINDS: Final[tuple[KindInfo, ...]] = (
    KindInfo(
        kind="BurnInTest",
        plural="burnintests",
        singular="burnintest",
        short_names=("bit",),
        model=BurnInTest,
        columns=(
            PrinterColumn(name="Kind", json_path=".spec.kind", type="string"),
            PrinterColumn(name="Scope", json_path=".spec.scope", type="string"),
        ),
    ),
    KindInfo(
        kind="BurnInProfile",
        plural="burninprofiles",
        singular="burninprofile",
        short_names=("bip",),
        model=BurnInProfile,
        # Upstream quirk kept on the wire: the path yields the list, not a count, and
        # the column is typed integer (semantics P10).
        columns=(
            PrinterColumn(name="Tests", json_path=".spec.tests[*]", type="integer"),
            # Additive (N16): the last `glimmer coverage --write-status`; its summary ends
            # with the generation it was computed for, and -o wide shows the profile's
            # generation beside it, so a stale coverage reads as stale.
            PrinterColumn(
                name="Coverage",
                json_path=".status.coverage.summary",
                type="string",
                description="The last coverage on the simulated GPU, with the profile "
                "generation it was computed for.",
            ),
            PrinterColumn(
                name="Generation",
                json_path=".metadata.generation",
                type="integer",
                priority=1,
                description="The profile's generation now: a coverage computed for an "
                "older one is stale.",
            ),
        ),
    ),
    KindInfo(
        kind="BurnInRun",
        plural="burninruns",
        singular="burninrun",
        short_names=("bir",),
        model=BurnInRun,
        columns=(
            PrinterColumn(name="Profile", json_path=".spec.profileRef", type="string"),
            PrinterColumn(name="Phase", json_path=".status.phase", type="string"),
            PrinterColumn(name="Baseline", json_path=".spec.baseline", type="boolean", priority=1),
            PrinterColumn(name="Passed", json_path=".status.passed", type="integer"),
            PrinterColumn(name="Failed", json_path=".status.failed", type="integer"),
            # Additive (I16): whether anything was measured and whether it certifies.
            PrinterColumn(
                name="Measured",
                json_path=f'.status.conditions[?(@.type=="{MEASURED_CONDITION}")].status',
                type="string",
                description="False when no required result was measured (e.g. all Skipped).",
            ),
            PrinterColumn(
                name="Certified",
                json_path=".status.certifiesSilicon",
                type="boolean",
                description="Whether the run certifies its nodes' silicon.",
            ),
            PrinterColumn(
                name="Provenance",
                json_path=".status.provenance",
                type="string",
                priority=1,
                description="sim, unknown or silicon, the weakest over the results; unknown "
                "when nothing declared the hardware, never silicon.",
            ),
            _age(),
        ),
    ),
    KindInfo(
        kind="BurnInSchedule",
        plural="burninschedules",
        singular="burninschedule",
        short_names=("bisc",),
        model=BurnInSchedule,
        columns=(
            PrinterColumn(name="Schedule", json_path=".spec.schedule", type="string"),
            PrinterColumn(name="Profile", json_path=".spec.profileRef", type="string"),
            PrinterColumn(name="Suspend", json_path=".spec.suspend", type="boolean"),
            PrinterColumn(name="Last Schedule", json_path=".status.lastScheduleTime", type="date"),
            PrinterColumn(name="Last Phase", json_path=".status.lastRunPhase", type="string"),
            # Additive (not in the reference): a string, since kubectl prints a future
            # `date` as <invalid>. `glimmer schedule NAME` shows the ticks after it.
            PrinterColumn(
                name="Next Schedule", json_path=".status.nextScheduleTime", type="string"
            ),
            _age(),
        ),
    ),
    KindInfo(
        kind="BurnInSink",
        plural="burninsinks",
        singular="burninsink",
        short_names=("bis",),
        model=BurnInSink,
        columns=(PrinterColumn(name="Type", json_path=".spec.type", type="string"),),
    ),
    KindInfo(
        kind="NodeFingerprint",
        plural="nodefingerprints",
        singular="nodefingerprint",
        short_names=("nfp",),
        model=NodeFingerprint,
        columns=(
            PrinterColumn(name="Node", json_path=".spec.nodeName", type="string"),
            PrinterColumn(name="Digest", json_path=".status.digest", type="string"),
        ),
    ),
)

KINDS_BY_NAME: Final[dict[str, KindInfo]] = {info.kind: info for info in KINDS}

"""The allowlist (allowlist.toml) and the judgement of one package against it.

Three kinds of entry, each a deliberate decision with its reason in the file:
``allowed`` licences (SPDX ids) for every ecosystem, extra ones for one ecosystem, and
per-package ``override`` entries. An override names the licence the gate *reads*
(``declared``) and either the licence that truly applies (``licence``, for metadata
that is missing or misleading) or ``accept = true`` (an exception to the list). It
applies only while the gate still reads exactly ``declared``: a package that changes its
licence falls out of its override and is judged afresh. An override that matches no
installed package is itself a failure, so the file cannot collect stale exceptions.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from licence_gate.spdx import allowed as expression_allowed
from licence_gate.spdx import normalise_name

ECOSYSTEMS = ("python", "go")


@dataclass(frozen=True)
class Declared:
    """A licence as read: an SPDX expression (None when unknown) and where it came from."""

    expression: str | None
    source: str


@dataclass(frozen=True)
class Override:
    ecosystem: str
    name: str
    declared: str
    reason: str
    licence: str | None = None
    accept: bool = False


@dataclass(frozen=True)
class Policy:
    everywhere: frozenset[str]
    per_ecosystem: dict[str, frozenset[str]]
    overrides: tuple[Override, ...] = ()
    #: Overrides that matched a package (filled in while judging; see unused()).
    used: set[tuple[str, str]] = field(default_factory=set, compare=False)

    def permits(self, ecosystem: str, spdx: str) -> bool:
        return spdx in self.everywhere or spdx in self.per_ecosystem.get(ecosystem, frozenset())

    def unused(self, ecosystem: str) -> list[Override]:
        """This ecosystem's overrides that no judged package matched."""
        return [
            o
            for o in self.overrides
            if o.ecosystem == ecosystem and (o.ecosystem, o.name) not in self.used
        ]


@dataclass(frozen=True)
class Judgement:
    ecosystem: str
    name: str
    version: str
    declared: str | None
    source: str
    ok: bool
    why: str


def load(path: Path) -> Policy:
    data = tomllib.loads(path.read_text())
    allowed = data.get("allowed", {})
    for key in allowed:
        if key not in ("everywhere", *ECOSYSTEMS):
            raise ValueError(f"{path}: unknown [allowed] key {key!r}")
    for spdx in [s for key in allowed for s in allowed[key]]:
        if normalise_name(spdx) != spdx:
            raise ValueError(f"{path}: {spdx!r} is not an SPDX id this gate knows")
    overrides = []
    for entry in data.get("override", []):
        unknown = set(entry) - {"ecosystem", "name", "declared", "licence", "accept", "reason"}
        if unknown:
            raise ValueError(f"{path}: override {entry.get('name')!r}: unknown keys {unknown}")
        if entry.get("ecosystem") not in ECOSYSTEMS:
            raise ValueError(
                f"{path}: override {entry.get('name')!r}: ecosystem must be one of {ECOSYSTEMS}"
            )
        if not str(entry.get("reason", "")).strip():
            raise ValueError(f"{path}: override {entry.get('name')!r} has no reason")
        if bool(entry.get("accept")) == ("licence" in entry):
            raise ValueError(
                f"{path}: override {entry.get('name')!r}: give exactly one of licence, accept"
            )
        overrides.append(
            Override(
                ecosystem=entry["ecosystem"],
                name=entry["name"],
                declared=entry["declared"],
                reason=entry["reason"],
                licence=entry.get("licence"),
                accept=bool(entry.get("accept")),
            )
        )
    return Policy(
        everywhere=frozenset(allowed.get("everywhere", [])),
        per_ecosystem={e: frozenset(allowed.get(e, [])) for e in ECOSYSTEMS},
        overrides=tuple(overrides),
    )


def judge(policy: Policy, *, ecosystem: str, name: str, version: str, read: Declared) -> Judgement:
    """Allowed or not, and why, for one package whose licence reads as ``read``."""
    declared, source = read.expression, read.source
    shown = declared if declared is not None else "unknown"
    for override in policy.overrides:
        if (override.ecosystem, override.name.lower()) != (ecosystem, name.lower()):
            continue
        if override.declared != shown:
            return Judgement(
                ecosystem, name, version, declared, source, False,
                f"reads {shown!r} ({source}) but its override was recorded for "
                f"{override.declared!r}: review the licence and update allowlist.toml",
            )  # fmt: skip
        policy.used.add((override.ecosystem, override.name))
        if override.accept:
            return Judgement(
                ecosystem, name, version, declared, source, True, f"exception: {override.reason}"
            )
        declared, source = override.licence, f"override ({override.reason})"
        shown = str(declared)
        break
    if declared is None:
        return Judgement(
            ecosystem, name, version, None, source, False,
            f"licence unknown ({source}): add an override with the licence and a reason",
        )  # fmt: skip
    try:
        ok = expression_allowed(declared, permits=lambda spdx: policy.permits(ecosystem, spdx))
    except ValueError as error:
        return Judgement(ecosystem, name, version, declared, source, False, str(error))
    why = "allowed" if ok else f"{shown} ({source}) is not on the allowlist"
    return Judgement(ecosystem, name, version, declared, source, ok, why)

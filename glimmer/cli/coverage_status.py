"""``glimmer coverage --profile-ref NS/NAME --write-status``: a cluster's profile, covered,
and the summary written to its ``status.coverage`` (N16), so ``kubectl get
burninprofiles`` shows it.

The profile is read from the cluster with the BurnInTests it references and written
out as the YAML documents ``glimmer coverage`` takes for a file, so its coverage is
computed exactly as for a file (the same dry run, the same cases). After the cases, the
:class:`~glimmer.local.coverage.Coverage` becomes a :class:`~glimmer.api.ProfileCoverage`
and is merge-patched onto the profile's ``status`` subresource (the Go operator never
writes a profile's status, so no controller competes for it).

Why the status fails closed: only a coverage whose every healthy control Passed and
whose every case was judged is ``Measured`` and carries ``caught`` and ``missed``; a
control that did not Pass makes it ``Void``, a case that wrote no result ``NotJudged``,
and neither claims a catch (the CRD's CEL rule refuses one that does). Every field the
new coverage lacks is written as null, so a Void written over an earlier Measured cannot
keep the old ``caught``. A CRD that predates ``status.coverage`` would prune the field
and answer 200; the write is read back, and a pruned coverage is an error.

Why ``profileGeneration``: the coverage was measured for one spec; the summary ends with
that generation and ``kubectl get bip -o wide`` shows the profile's generation now
beside it, so a coverage of an older spec reads as stale. It is not the status's
``observedGeneration``, the upstream controller's (never written) field.

Why this lives in the CLI layer: it reads the cluster (``glimmer.engine``) and the local
coverage (``glimmer.local``), two layers that never import each other. The cluster
client is imported on first use, so ``glimmer coverage FILE`` never loads it.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import attrs
import click
import yaml

from glimmer import __version__
from glimmer.api import API_VERSION, CoverageState, ProfileCoverage, to_json
from glimmer.api.fields import spec_of
from glimmer.cli import exits
from glimmer.cli._common import fail
from glimmer.cli.kubecontext import KubeContextError, context_namespace
from glimmer.local.coverage import CaseOutcome, Coverage
from glimmer.verdict import Phase

if TYPE_CHECKING:  # the cluster client is imported only when a cluster profile is read
    from glimmer.engine import ApiError, KubeClient, Resource

JSON = dict[str, Any]
STATUS_SUBRESOURCE: Final = "status"
#: Every wire name of ProfileCoverage: a write sets each, null where the coverage has none.
COVERAGE_FIELDS: Final = tuple(spec_of(a).json for a in attrs.fields(ProfileCoverage))
#: How to install the CRDs that carry ``status.coverage``.
CRD_FIX: Final = "apply this glimmer's CRDs (kubectl apply -k manifests/crd, or helm upgrade)"


class CoverageStatusError(Exception):
    """The profile could not be read or its status not written; the message names the
    profile and the fix. ``code`` is the exit status (N10: 2 refused input, 3 the
    cluster could not be read or written)."""

    def __init__(self, message: str, *, code: int = exits.ERROR) -> None:
        super().__init__(message)
        self.code = code


# --- the status, from a Coverage -------------------------------------------------------


def coverage_state(coverage: Coverage) -> CoverageState:
    """Void when a healthy control was judged and did not Pass; NotJudged when a case
    (a control included) wrote no result; Measured only when neither."""
    if any(o.phase is not None and o.phase != str(Phase.PASSED) for o in coverage.control):
        return CoverageState.VOID
    if coverage.unjudged or not coverage.control:
        return CoverageState.NOT_JUDGED
    return CoverageState.MEASURED


def _not_judged_labels(coverage: Coverage) -> list[str]:
    bad: list[CaseOutcome] = [o for o in coverage.control if o.phase != str(Phase.PASSED)]
    bad += [o for o in coverage.faults if o.phase is None]
    return [coverage.label(o) for o in bad]


def coverage_status(
    coverage: Coverage,
    *,
    generation: int,
    computed_at: datetime | None = None,
    version: str = __version__,
) -> ProfileCoverage:
    """What ``status.coverage`` says of ``coverage``, measured for ``generation``.

    Only a Measured coverage counts catches; a Void or NotJudged one says why in its
    summary and lists the cases that were not judged.
    """
    state = coverage_state(coverage)
    modelled = len(coverage.faults)
    at = f"(generation {generation})"
    caught: int | None = None
    missed: list[str] | None = None
    unjudged = _not_judged_labels(coverage)
    if state is CoverageState.MEASURED:
        missed = [coverage.label(o) for o in coverage.missed]
        caught = modelled - len(missed)
        summary = f"catches {caught} of {modelled} modelled faults {at}"
    elif state is CoverageState.VOID:
        summary = f"void: the healthy control did not Pass {at}"
    else:
        runs = len(coverage.control) + modelled
        summary = f"not judged: {len(unjudged)} of {runs} runs wrote no result {at}"
    return ProfileCoverage(
        state=str(state),
        summary=summary,
        profile_generation=generation,
        modelled=modelled,
        caught=caught,
        missed=missed,
        unjudged=unjudged or None,
        sims=list(coverage.sims),
        computed_at=computed_at or datetime.now(UTC),
        glimmer_version=version,
    )


def status_patch(status: ProfileCoverage) -> JSON:
    """The merge patch of ``status.coverage``: every field, null where ``status`` has
    none, so nothing of an earlier coverage survives beside the new one."""
    body = to_json(status)
    return {"status": {"coverage": {name: body.get(name) for name in COVERAGE_FIELDS}}}


# --- the cluster -----------------------------------------------------------------------


def parse_profile_ref(text: str, *, kubeconfig: str | None) -> tuple[str, str]:
    """``NS/NAME``, or a bare ``NAME`` in the kube context's namespace (N11)."""
    namespace, sep, name = text.partition("/")
    if not sep:
        namespace, name = "", text
    if (sep and not namespace) or not name or "/" in name:
        raise CoverageStatusError(
            f"--profile-ref {text!r}: expected NAMESPACE/NAME (or NAME in the context's namespace)",
            code=exits.USAGE,
        )
    if not namespace:
        try:
            namespace = context_namespace(kubeconfig)
        except KubeContextError as err:
            raise CoverageStatusError(str(err)) from None
    return namespace, name


@dataclass(frozen=True)
class ClusterProfile:
    """A BurnInProfile as the cluster holds it, with the BurnInTests it references."""

    namespace: str
    name: str
    generation: int
    #: The documents ``glimmer coverage`` takes: the profile first, then its tests.
    documents: tuple[JSON, ...]

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.name}"

    def yaml(self) -> str:
        return yaml.safe_dump_all(list(self.documents), sort_keys=False)


def _document(obj: Mapping[str, Any], kind: str) -> JSON:
    """The object as a manifest: its name, namespace and spec (no server fields)."""
    metadata = obj.get("metadata") or {}
    return {
        "apiVersion": API_VERSION,
        "kind": kind,
        "metadata": {"name": metadata.get("name"), "namespace": metadata.get("namespace")},
        "spec": obj.get("spec"),
    }


def _refused(err: ApiError, *, what: str, verb: str, resource: str, ref: str) -> Exception:
    namespace = ref.partition("/")[0]
    if err.status == 403:
        grant = (
            "the glimmer-burnin-viewer role grants it"
            if verb == "get"
            else "no built-in role grants a status write: bind a Role with patch on "
            "burninprofiles/status to whoever writes coverage (docs/coverage.md)"
        )
        return CoverageStatusError(
            f"{what} {ref}: forbidden: needs {verb} on {resource} in namespace "
            f"{namespace} (kubectl auth can-i {verb} {resource} -n {namespace}); {grant}"
        )
    return CoverageStatusError(f"{what} {ref}: {err}")


def _test_refs(spec: Any) -> list[str]:
    entries = spec.get("tests") if isinstance(spec, Mapping) else None
    refs = [
        str(e["testRef"])
        for e in entries or ()
        if isinstance(e, Mapping) and isinstance(e.get("testRef"), str) and e["testRef"]
    ]
    return list(dict.fromkeys(refs))


async def read_profile(
    client: KubeClient, *, namespace: str, name: str, resource: Resource | None = None
) -> ClusterProfile:
    """The profile and the BurnInTests its entries reference (a reference to a test that
    does not exist is left for ``glimmer run`` to refuse, as for a file)."""
    from glimmer.controllers.kit.names import PROFILES, TESTS
    from glimmer.engine import ApiError, is_not_found

    ref = f"{namespace}/{name}"
    try:
        profile = await client.get(resource or PROFILES, name, namespace=namespace)
    except ApiError as err:
        if is_not_found(err):
            raise CoverageStatusError(
                f"BurnInProfile {ref} not found: check the name and namespace "
                f"(kubectl get burninprofiles -n {namespace})",
                code=exits.USAGE,
            ) from None
        raise _refused(
            err, what="BurnInProfile", verb="get", resource="burninprofiles", ref=ref
        ) from None
    generation = (profile.get("metadata") or {}).get("generation")
    if not isinstance(generation, int) or isinstance(generation, bool):
        raise CoverageStatusError(
            f"BurnInProfile {ref} has no metadata.generation: a coverage could not say "
            "which spec it measured"
        )
    documents = [_document(profile, "BurnInProfile")]
    for test in _test_refs(profile.get("spec")):
        try:
            found = await client.get(TESTS, test, namespace=namespace)
        except ApiError as err:
            if is_not_found(err):
                continue
            raise _refused(
                err,
                what="BurnInTest",
                verb="get",
                resource="burnintests",
                ref=f"{namespace}/{test}",
            ) from None
        documents.append(_document(found, "BurnInTest"))
    return ClusterProfile(
        namespace=namespace, name=name, generation=generation, documents=tuple(documents)
    )


async def write_coverage_status(
    client: KubeClient,
    *,
    namespace: str,
    name: str,
    status: ProfileCoverage,
    resource: Resource | None = None,
) -> JSON:
    """Merge-patch ``status.coverage`` on the status subresource and read it back: a
    coverage the apiserver pruned (a CRD older than the field) is an error, never a
    silent success."""
    from glimmer.controllers.kit.names import PROFILES
    from glimmer.engine import ApiError, is_not_found

    ref = f"{namespace}/{name}"
    patch = status_patch(status)
    try:
        written = await client.patch(
            resource or PROFILES, name, patch, namespace=namespace, subresource=STATUS_SUBRESOURCE
        )
    except ApiError as err:
        if is_not_found(err):
            raise CoverageStatusError(
                f"BurnInProfile {ref}: not found when writing its coverage (deleted "
                "meanwhile?); nothing was written"
            ) from None
        if err.status == 422:
            raise CoverageStatusError(
                f"BurnInProfile {ref}: the apiserver refused the coverage status: {err}; {CRD_FIX}"
            ) from None
        raise _refused(
            err, what="BurnInProfile", verb="patch", resource="burninprofiles/status", ref=ref
        ) from None
    stored = ((written.get("status") or {}).get("coverage")) or {}
    wanted = {k: v for k, v in patch["status"]["coverage"].items() if v is not None}
    if stored != wanted:
        raise CoverageStatusError(
            f"BurnInProfile {ref}: the cluster did not keep status.coverage (its CRD "
            f"predates the field and pruned it); {CRD_FIX}"
        )
    return written


# --- the CLI glue ----------------------------------------------------------------------


async def _connected(kubeconfig: str | None) -> KubeClient:
    from glimmer.engine import ApiServerClient  # only a cluster profile needs a client

    try:
        return await ApiServerClient.connect(kubeconfig)
    except Exception as err:  # any failure to build a client: the cluster is not read
        raise CoverageStatusError(
            f"cannot connect to the cluster ({type(err).__name__}: {err}); check "
            "--kubeconfig / $KUBECONFIG"
        ) from None


async def _read(kubeconfig: str | None, namespace: str, name: str) -> ClusterProfile:
    client = await _connected(kubeconfig)
    try:
        return await read_profile(client, namespace=namespace, name=name)
    finally:
        await client.close()


async def _write(kubeconfig: str | None, profile: ClusterProfile, status: ProfileCoverage) -> None:
    client = await _connected(kubeconfig)
    try:
        await write_coverage_status(
            client, namespace=profile.namespace, name=profile.name, status=status
        )
    finally:
        await client.close()


@dataclass
class ProfileRef:
    """``--profile-ref``: the cluster's profile as a file for ``glimmer coverage``, and
    (with ``--write-status``) the coverage written back to it."""

    profile: ClusterProfile
    path: Path
    write_status: bool
    kubeconfig: str | None
    _scratch: tempfile.TemporaryDirectory[str]

    @property
    def profile_name(self) -> str:
        return self.profile.name

    def record(self, coverage: Coverage) -> ProfileCoverage | None:
        """With ``--write-status``, write ``coverage`` (Measured, Void or NotJudged) to
        the profile's status and return what was written; else None. A write that fails
        exits 3 with the reason and the fix."""
        if not self.write_status:
            return None
        status = coverage_status(coverage, generation=self.profile.generation)
        try:
            asyncio.run(_write(self.kubeconfig, self.profile, status))
        except CoverageStatusError as err:
            fail(str(err), code=err.code)
        click.echo(
            f"glimmer: wrote status.coverage of BurnInProfile {self.profile.ref}: {status.summary}",
            err=True,
        )
        return status


def open_profile_ref(
    profile_ref: str | None,
    *,
    write_status: bool,
    kubeconfig: str | None,
    profile_file: Path | None = None,
    profile_name: str | None = None,
    test_files: Sequence[Path] = (),
) -> ProfileRef | None:
    """The profile ``--profile-ref`` names, read from the cluster into a temporary file
    (kept until the process ends), or None without ``--profile-ref``.

    Refused (usage, exit 2): ``--write-status`` without ``--profile-ref`` (there is no
    profile to write to); ``--profile-ref`` beside a PROFILE_FILE, ``--tests`` or a
    ``--profile`` naming another profile (the cluster's objects are the input); a
    profile that does not exist. The cluster unreadable or the read forbidden: exit 3.
    """
    try:
        return _open(
            profile_ref,
            write_status=write_status,
            kubeconfig=kubeconfig,
            profile_file=profile_file,
            profile_name=profile_name,
            test_files=test_files,
        )
    except CoverageStatusError as err:
        fail(str(err), code=err.code)


def _open(
    profile_ref: str | None,
    *,
    write_status: bool,
    kubeconfig: str | None,
    profile_file: Path | None,
    profile_name: str | None,
    test_files: Sequence[Path],
) -> ProfileRef | None:
    if profile_ref is None:
        if write_status:
            raise CoverageStatusError(
                "--write-status writes a cluster profile's status: give --profile-ref "
                "NAMESPACE/NAME",
                code=exits.USAGE,
            )
        return None
    if profile_file is not None or test_files:
        raise CoverageStatusError(
            "--profile-ref reads the profile and its BurnInTests from the cluster: give "
            "no PROFILE_FILE or --tests beside it",
            code=exits.USAGE,
        )
    namespace, name = parse_profile_ref(profile_ref, kubeconfig=kubeconfig)
    if profile_name is not None and profile_name != name:
        raise CoverageStatusError(
            f"--profile {profile_name!r} names another profile than --profile-ref "
            f"{profile_ref!r}; give one",
            code=exits.USAGE,
        )
    profile = asyncio.run(_read(kubeconfig, namespace, name))
    scratch = tempfile.TemporaryDirectory(prefix="glimmer-coverage-ref-")
    path = Path(scratch.name) / f"{namespace}.{name}.yaml"
    path.write_text(profile.yaml(), encoding="utf-8")
    return ProfileRef(
        profile=profile,
        path=path,
        write_status=write_status,
        kubeconfig=kubeconfig,
        _scratch=scratch,
    )

"""N8: ``glimmer run`` learns the host's accelerators the way the operator learns a node's.

The probe reads a fake sysfs tree and fake vendor tools here (no GPU on a CI machine):
the PCI functions of accelerator vendors, then each vendor's tool for the count and the
product; without a tool the count is PCI's and the product unknown. The probe's first
GPU vendor feeds image resolution (E14) as a captured fingerprint's does in a cluster,
and the run records the host's fingerprint digested by the NodeFingerprint controller's
own function (K4).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from glimmer.api.fingerprint import GPU, Observation
from glimmer.cli.run import run
from glimmer.contract.envelope import decode
from glimmer.controllers.fingerprint import digests
from glimmer.controllers.kit.fingerprints import vendor_of
from glimmer.local import host
from glimmer.local.dispatcher import Launch, LocalOptions, SilentReporter, run_plan
from glimmer.local.host import (
    SIMULATED_GPU_LABEL,
    DirectorySysfs,
    HostProbe,
    HostSources,
    probe_host,
)
from glimmer.local.launch import execution_image, launch, unlaunchable
from glimmer.plan import ImageError, PinnedPlan, PlannedTest, build_plan, resolve_image
from glimmer.plan.images import runner_image
from glimmer.verdict import Phase

NVIDIA_GPU = ("0x10de", "0x2335", "0x030200")
AMD_GPU = ("0x1002", "0x74a1", "0x120000")
#: Functions that are no accelerator: AMD's CPU/chipset id, a BMC's VGA, an Intel iGPU,
#: a Mellanox NIC, a GPU board's HDMI audio function.
NOT_ACCELERATORS = {
    "0000:00:00.0": ("0x1022", "0x14a4", "0x060000"),
    "0000:18:00.1": ("0x10de", "0x22a3", "0x040300"),
    "0000:02:00.0": ("0x1a03", "0x2000", "0x030000"),
    "0000:00:02.0": ("0x8086", "0x4680", "0x030000"),
    "0000:c1:00.0": ("0x15b3", "0x1021", "0x020000"),
}


def sysfs_tree(root: Path, functions: Mapping[str, tuple[str, str, str]]) -> DirectorySysfs:
    for address, (vendor, device, pci_class) in functions.items():
        base = root / "bus" / "pci" / "devices" / address
        base.mkdir(parents=True)
        (base / "vendor").write_text(vendor + "\n")
        (base / "device").write_text(device + "\n")
        (base / "class").write_text(pci_class + "\n")
    (root / "bus" / "pci" / "devices").mkdir(parents=True, exist_ok=True)
    return DirectorySysfs(root)


def tools(answers: Mapping[str, str | None]) -> dict[str, Any]:
    """``which`` and ``run`` for fake vendor tools: name -> stdout (None: it fails)."""

    def which(name: str) -> str | None:
        return f"/usr/bin/{name}" if name in answers else None

    def run_tool(argv: Sequence[str]) -> str | None:
        return answers[argv[0]]

    return {"which": which, "run": run_tool}


def sources(
    tmp_path: Path,
    functions: Mapping[str, tuple[str, str, str]],
    answers: Mapping[str, str | None] | None = None,
) -> HostSources:
    tmp_path.mkdir(parents=True, exist_ok=True)
    release = tmp_path / "os-release"
    release.write_text('NAME="Ubuntu"\nPRETTY_NAME="Ubuntu 24.04.1 LTS"\n')
    return HostSources(
        sysfs=sysfs_tree(tmp_path / "sys", functions),
        os_release=release,
        kernel=lambda: "6.8.0-45-generic",
        machine=lambda: "x86_64",
        **tools(answers or {}),
    )


EIGHT_H200 = {f"0000:{0x18 + 0x10 * i:02x}:00.0": NVIDIA_GPU for i in range(8)}
NVIDIA_SMI = "".join(
    f"{i}, 00000000:{0x18 + 0x10 * i:02X}:00.0, NVIDIA H200, 143771, 550.54.15\n" for i in range(8)
)


def pinned(test: dict[str, Any]) -> PlannedTest:
    outcome = build_plan(profile={"tests": [{"inline": test}]}, tests={}, targets=["host-1"])
    assert isinstance(outcome, PinnedPlan), outcome
    (only,) = outcome.tests
    return only


def a_host(vendor: str | None) -> HostProbe:
    gpus = () if vendor is None else (GPU(index=0, vendor=vendor),)
    return HostProbe(observation=Observation(gpus=gpus))


# --- what the probe sees ------------------------------------------------------------------


def test_N8_accelerators_are_gpu_class_functions_of_nvidia_amd_and_intel_only(
    tmp_path: Path,
) -> None:
    functions = {
        **NOT_ACCELERATORS,
        "0000:18:00.0": NVIDIA_GPU,
        "0000:28:00.0": AMD_GPU,
        "0000:38:00.0": ("0x8086", "0x0bd5", "0x038000"),  # a data-centre GPU Max
    }
    found = host.pci_accelerators(sysfs_tree(tmp_path, functions))
    assert found is not None
    assert [(f.address, f.vendor) for f in found] == [
        ("0000:18:00.0", "nvidia"),
        ("0000:28:00.0", "amd"),
        ("0000:38:00.0", "intel"),
    ]


def test_N8_without_a_vendor_tool_the_count_is_pcis_and_the_product_unknown(
    tmp_path: Path,
) -> None:
    probe = probe_host(sources=sources(tmp_path, {**NOT_ACCELERATORS, **EIGHT_H200}))
    gpus = probe.observation.gpus
    assert [(g.index, g.vendor, g.model) for g in gpus] == [(i, "nvidia", "") for i in range(8)]
    assert probe.vendor == "nvidia" and probe.sources == ("sysfs",)
    assert probe.addresses[0] == "0000:18:00.0"
    assert any("product unknown" in note for note in probe.notes)
    assert "8 nvidia GPUs (product unknown) from sysfs" in probe.summary()


def test_N8_nvidia_smi_gives_the_count_product_memory_and_driver(tmp_path: Path) -> None:
    probe = probe_host(sources=sources(tmp_path, EIGHT_H200, {"nvidia-smi": NVIDIA_SMI}))
    first = probe.observation.gpus[0]
    assert len(probe.observation.gpus) == 8
    assert (first.vendor, first.model, first.driver_version) == (
        "nvidia",
        "NVIDIA H200",
        "550.54.15",
    )
    assert first.memory_bytes == 143771 * 1024 * 1024
    assert probe.sources == ("sysfs", "nvidia-smi") and probe.notes == ()
    assert probe.observation.os_image == "Ubuntu 24.04.1 LTS"
    assert probe.observation.kernel == "6.8.0-45-generic"
    assert probe.observation.labels == {"kubernetes.io/arch": "amd64"}


@pytest.mark.parametrize(
    "answer",
    [
        None,
        "",
        "0, 00000000:18:00.0\n",
        "NVIDIA-SMI has failed because it couldn't communicate",
        NVIDIA_SMI.replace("3, 00000000:48:00.0, NVIDIA H200, 143771, 550.54.15", "3, garbled"),
    ],
)
def test_N8_a_tool_that_fails_or_answers_what_cannot_be_read_is_no_answer(
    tmp_path: Path, answer: str | None
) -> None:
    probe = probe_host(sources=sources(tmp_path, EIGHT_H200, {"nvidia-smi": answer}))
    assert [g.model for g in probe.observation.gpus] == [""] * 8  # counted from PCI
    assert probe.vendor == "nvidia"


def test_N8_a_tool_count_that_disagrees_with_pci_is_noted(tmp_path: Path) -> None:
    seven = "".join(NVIDIA_SMI.splitlines(keepends=True)[:7])
    probe = probe_host(sources=sources(tmp_path, EIGHT_H200, {"nvidia-smi": seven}))
    assert len(probe.observation.gpus) == 7
    assert "7 nvidia GPUs listed by its tool, 8 nvidia functions on PCI" in probe.notes


def test_N8_amd_smi_then_rocm_smi_name_the_amd_product(tmp_path: Path) -> None:
    two = {"0000:18:00.0": AMD_GPU, "0000:28:00.0": AMD_GPU}
    amd_smi = json.dumps(
        [
            {"gpu": i, "asic": {"market_name": "AMD Instinct MI300X", "vendor_id": "0x1002"}}
            for i in range(2)
        ]
    )
    rocm_smi = json.dumps({f"card{i}": {"Card Series": "AMD Instinct MI300X"} for i in range(2)})
    for answers in ({"amd-smi": amd_smi}, {"amd-smi": None, "rocm-smi": rocm_smi}):
        probe = probe_host(sources=sources(tmp_path / str(len(answers)), two, answers))
        assert [g.model for g in probe.observation.gpus] == ["AMD Instinct MI300X"] * 2
        assert probe.vendor == "amd"


def test_N8_an_unreadable_sysfs_and_no_tool_is_a_host_of_no_known_vendor(tmp_path: Path) -> None:
    unreadable = HostSources(sysfs=DirectorySysfs(tmp_path / "absent"), which=lambda _n: None)
    probe = probe_host(sources=unreadable)
    assert probe.observation.gpus == () and probe.vendor is None
    assert any("cannot be read" in note for note in probe.notes)


def test_N8_a_host_with_several_vendors_reads_as_a_node_labelled_for_both(tmp_path: Path) -> None:
    # The operator takes status.gpus[0].vendor, the GPUs sorted by vendor: amd first.
    probe = probe_host(
        sources=sources(tmp_path, {"0000:18:00.0": NVIDIA_GPU, "0000:99:00.0": AMD_GPU})
    )
    assert [g.vendor for g in probe.observation.gpus] == ["amd", "nvidia"]
    assert probe.vendor == "amd"


# --- the fingerprint is the controller's ----------------------------------------------------


def test_N8_K4_the_host_fingerprint_is_the_controllers_digest_of_the_observation(
    tmp_path: Path,
) -> None:
    probe = probe_host(sources=sources(tmp_path, EIGHT_H200, {"nvidia-smi": NVIDIA_SMI}))
    assert probe.digest == digests.digest(probe.observation)
    recorded = probe.to_json()
    assert recorded["fingerprint"]["digest"] == probe.digest
    assert recorded["fingerprint"]["gpus"][0] == probe.observation.gpus[0].to_json()
    assert recorded["simulated"] is False and recorded["vendor"] == "nvidia"


def test_N8_a_simulated_probe_is_the_simulated_gpus_marked_so_its_digest_is_no_hosts() -> None:
    probe = probe_host(sim="mi300xx2")
    gpus = probe.observation.gpus
    assert [(g.vendor, g.model) for g in gpus] == [("amd", "AMD Instinct MI300X")] * 2
    assert probe.vendor == "amd" and probe.simulated == "mi300xx2"
    assert probe.observation.labels[SIMULATED_GPU_LABEL] == "mi300xx2"
    unmarked = Observation(
        os_image=probe.observation.os_image, kernel=probe.observation.kernel, gpus=gpus,
        labels={k: v for k, v in probe.observation.labels.items() if k != SIMULATED_GPU_LABEL},
    )  # fmt: skip
    assert digests.digest(unmarked) != probe.digest
    assert probe.to_json()["simulated"] is True
    assert "SIMULATED GPU mi300xx2" in probe.summary()
    assert probe_host(sim="h200x8").vendor == "nvidia"


# --- E14 on a bare host ----------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["compute-smoke", "clockprobe", "host-health", "memory-bw"])
def test_E14_an_amd_host_resolves_the_rocm_sibling_and_its_images_by_vendor_entry(
    kind: str,
) -> None:
    amd = a_host("amd")
    assert execution_image(pinned({"kind": kind}), host=amd) == runner_image(kind, rocm=True)
    entry = {"imagesByVendor": [{"vendor": "amd", "image": "example.com/mine:1"}]}
    test = pinned({"kind": kind, "runner": entry})
    assert execution_image(test, host=amd) == "example.com/mine:1"
    assert execution_image(test, host=a_host("nvidia")) == runner_image(kind)


def test_E14_an_unknown_vendor_resolves_as_the_operator_does_for_an_unlabelled_node() -> None:
    # A captured fingerprint with no GPUs: the operator feeds no vendor.
    unlabelled = {"status": {"digest": "glimmer-v1:0"}}
    fed = vendor_of(unlabelled)
    entry = {"imagesByVendor": [{"vendor": "amd", "image": "example.com/mine:1"}]}
    for runner in (None, entry):
        test = pinned({"kind": "compute-smoke", **({"runner": runner} if runner else {})})
        operator = resolve_image(kind=test.kind, runner=runner, node_vendor=fed)
        assert execution_image(test, host=a_host(None)) == operator == runner_image("compute-smoke")


def test_E14_nothing_for_this_hosts_vendor_is_that_attempts_error_not_a_refusal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = build_plan(
        profile={"tests": [{"inline": {"kind": "dcgm-diag"}}]}, tests={}, targets=["host-1"]
    )
    assert isinstance(plan, PinnedPlan)
    amd = a_host("amd")
    image = execution_image(plan.tests[0], host=amd)
    assert isinstance(image, ImageError) and "imagesByVendor" in image.message
    options = LocalOptions(node="host-1", report_dir=tmp_path)
    monkeypatch.setitem(host._PROBES, None, amd)
    assert unlaunchable(plan, options=options) == []
    how = launch(plan.tests[0], attempt=1, options=options)
    assert how == f"no runner image for node host-1: {image.message}"
    (result,) = run_plan(plan, options=options, reporter=SilentReporter()).results
    assert result.state.phase is Phase.ERROR
    assert result.state.message.startswith("no runner image for node host-1:")


def test_E14_image_command_and_runner_command_decide_nothing_by_vendor() -> None:
    amd = a_host("amd")
    mapped = LocalOptions(node="h", image_commands={"dcgm-diag": ["my-dcgm"]})
    own = pinned({"kind": "dcgm-diag", "runner": {"command": ["my-dcgm"]}})
    for test, options in ((pinned({"kind": "dcgm-diag"}), mapped), (own, LocalOptions(node="h"))):
        how = launch(test, attempt=1, options=options, host=amd)
        assert isinstance(how, Launch) and how.command == ["my-dcgm"]


# --- what the run records ------------------------------------------------------------------


def test_N8_run_json_and_the_envelope_carry_the_hosts_fingerprint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    probe = probe_host(sources=sources(tmp_path, EIGHT_H200, {"nvidia-smi": NVIDIA_SMI}))
    monkeypatch.setitem(host._PROBES, None, probe)
    profile = tmp_path / "p.yaml"
    profile.write_text(
        "kind: BurnInProfile\nmetadata: {name: p}\nspec:\n  tests:\n  - inline:\n"
        "      kind: custom\n      runner: {command: [sh, -c, 'echo tcpRttUs=5']}\n"
    )
    out = tmp_path / "out"
    result = CliRunner().invoke(
        run, [str(profile), "--node", "n0", "--results-dir", str(out)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    document = json.loads((out / "run.json").read_text())
    assert document["host"]["fingerprint"]["digest"] == probe.digest
    assert document["host"]["fingerprint"]["gpus"][0]["model"] == "NVIDIA H200"
    envelope = decode((out / "envelopes" / "001-RunPhaseChanged.json").read_bytes())
    assert envelope.fingerprint == {"n0": probe.digest}


def test_N8_the_plan_names_the_host_it_resolved_for() -> None:
    from glimmer.cli.plan import plan as plan_command

    result = CliRunner().invoke(plan_command, ["--sim", "mi300x"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    first = result.output.splitlines()[0]
    assert first.startswith("host: 1 amd GPU (AMD Instinct MI300X)")
    assert "SIMULATED GPU mi300x" in first and "GPU vendor amd" in first
    as_json = CliRunner().invoke(plan_command, ["--sim", "mi300x", "-o", "json"])
    assert json.loads(as_json.output)["host"]["simulated"] is True

"""Nominal figures for the simulated parts.

Why static tables: a simulated value is only as good as its source; these are published
nominal figures (datasheet class), used so that runner arithmetic (percent of rated
clock, percent of theoretical bandwidth) has realistic inputs. They say nothing about
any real part's health.
"""

from __future__ import annotations

from dataclasses import dataclass

from runners.sdk.protocols import AMD_VENDOR, NVIDIA_VENDOR


@dataclass(frozen=True)
class GpuProfile:
    key: str
    name: str
    memory_mib: int
    compute_capability: tuple[int, int]
    rated_boost_sm_mhz: int
    idle_sm_mhz: int
    memory_bus_width_bits: int
    hbm_bandwidth_gbs: float
    pcie_generation: int
    pcie_width: int
    host_link_gbs: float
    pci_device_id: int
    power_limit_w: float
    board_part_number: str
    vbios: str
    ecc_supported: bool = True
    dense_bf16_tflops: float = 0.0
    #: Whose part it is (``GPU_VENDORS``): picks the simulated library (NVML or amdsmi).
    vendor: str = NVIDIA_VENDOR
    #: The LLVM gfx target of an AMD part (``gfx942``); empty on NVIDIA parts.
    gfx_target: str = ""
    #: Data transfers per pin per memory clock *as the vendor's library reports the
    #: clock*: NVML's memory clock is half the HBM data rate (2); amdsmi's MCLK on CDNA3
    #: HBM3/HBM3E is a quarter of it (4: MI300X's 1300 MHz x 4 x 8192 bit = 5.3 TB/s).
    mem_transfers_per_clock: int = 2
    #: NVLinks per GPU to the node's NVSwitch fabric (0: the part has no GPU-to-GPU
    #: NVLink, as a PCIe card, a GB10 or an AMD part).
    nvlinks: int = 0

    @property
    def max_mem_clock_mhz(self) -> int:
        """Memory clock that makes transfers x clock x bus width equal the nominal HBM
        bandwidth."""
        per_clock_bytes = self.mem_transfers_per_clock * self.memory_bus_width_bits / 8
        return round(self.hbm_bandwidth_gbs * 1e9 / per_clock_bytes / 1e6)


PROFILES: dict[str, GpuProfile] = {
    # Pre-Ampere part (sm_75, GDDR6): exercises the paths where a runner must skip.
    "t4": GpuProfile(
        key="t4",
        name="Tesla T4",
        memory_mib=15360,
        compute_capability=(7, 5),
        rated_boost_sm_mhz=1590,
        idle_sm_mhz=300,
        memory_bus_width_bits=256,
        hbm_bandwidth_gbs=320.0,
        pcie_generation=3,
        pcie_width=16,
        host_link_gbs=12.5,
        pci_device_id=0x1EB8,
        power_limit_w=70.0,
        board_part_number="900-2G183-0000-000",
        vbios="90.04.38.00.03",
        dense_bf16_tflops=65.0,
    ),
    "h100": GpuProfile(
        key="h100",
        name="NVIDIA H100 80GB HBM3",
        memory_mib=81559,
        compute_capability=(9, 0),
        rated_boost_sm_mhz=1980,
        idle_sm_mhz=345,
        memory_bus_width_bits=5120,
        hbm_bandwidth_gbs=3350.0,
        pcie_generation=5,
        pcie_width=16,
        host_link_gbs=55.0,
        pci_device_id=0x2330,
        power_limit_w=700.0,
        board_part_number="692-2G520-0200-000",
        vbios="96.00.5E.00.01",
        dense_bf16_tflops=989.0,
        nvlinks=18,
    ),
    "h200": GpuProfile(
        key="h200",
        name="NVIDIA H200",
        memory_mib=143771,
        compute_capability=(9, 0),
        rated_boost_sm_mhz=1980,
        idle_sm_mhz=345,
        memory_bus_width_bits=6144,
        hbm_bandwidth_gbs=4800.0,
        pcie_generation=5,
        pcie_width=16,
        host_link_gbs=55.0,
        pci_device_id=0x2335,
        power_limit_w=700.0,
        board_part_number="692-2G520-0280-000",
        vbios="96.00.A5.00.01",
        dense_bf16_tflops=989.0,
        nvlinks=18,
    ),
    "b200": GpuProfile(
        key="b200",
        name="NVIDIA B200",
        memory_mib=183359,
        compute_capability=(10, 0),
        rated_boost_sm_mhz=1965,
        idle_sm_mhz=345,
        memory_bus_width_bits=8192,
        hbm_bandwidth_gbs=8000.0,
        pcie_generation=6,
        pcie_width=16,
        host_link_gbs=110.0,
        pci_device_id=0x2901,
        power_limit_w=1000.0,
        board_part_number="699-2G525-0200-000",
        vbios="97.00.1A.00.01",
        dense_bf16_tflops=2250.0,
        nvlinks=18,
    ),
    "gb200": GpuProfile(
        key="gb200",
        name="NVIDIA GB200",
        memory_mib=189471,
        compute_capability=(10, 0),
        rated_boost_sm_mhz=2062,
        idle_sm_mhz=345,
        memory_bus_width_bits=8192,
        hbm_bandwidth_gbs=8000.0,
        pcie_generation=5,
        pcie_width=16,
        host_link_gbs=400.0,
        pci_device_id=0x2941,
        power_limit_w=1200.0,
        board_part_number="699-2G548-1200-000",
        vbios="97.00.3B.00.01",
        dense_bf16_tflops=2500.0,
        nvlinks=18,
    ),
    # GB10-style part (DGX Spark class): unified LPDDR5X memory shared with the CPU, no
    # ECC reporting, and no GPUDirect RDMA path (nvidia-peermem/dma-buf peer memory).
    "gb10": GpuProfile(
        key="gb10",
        name="NVIDIA GB10",
        memory_mib=122502,
        compute_capability=(12, 1),
        rated_boost_sm_mhz=2418,
        idle_sm_mhz=208,
        memory_bus_width_bits=256,
        hbm_bandwidth_gbs=273.0,
        pcie_generation=5,
        pcie_width=16,
        host_link_gbs=273.0,
        pci_device_id=0x2E12,
        power_limit_w=140.0,
        board_part_number="699-2G548-0000-000",
        vbios="98.00.1C.00.01",
        ecc_supported=False,
        dense_bf16_tflops=250.0,
    ),
}


#: AMD Instinct parts (CDNA3, gfx942), read through the simulated amdsmi. Capacity,
#: bandwidth and board power are AMD's published figures as summarised at
#: https://yobitel.com/knowledge-base/amd-mi325x (MI325X vs MI300X table: 256 GB HBM3E
#: ~6 TB/s ~1000 W; 192 GB HBM3 5.3 TB/s 750 W) and
#: https://awesomeagents.ai/hardware/amd-mi325x (dense FP16/BF16 1,307.4 TFLOPS, same
#: 304 CUs on both); 2100 MHz peak engine clock, PCIe Gen5 x16 and the 8192-bit HBM
#: interface are AMD's MI300-series datasheet figures. The PCI device ids (0x74a1,
#: 0x74a5) are those the amdgpu driver binds; board numbers and VBIOS strings are
#: illustrative. ``compute_capability`` (9, 4) only mirrors gfx9.4.2 for the shared
#: simulated compute: the amdsmi path answers ``compute_capability()`` as not supported.
AMD_PROFILES: dict[str, GpuProfile] = {
    "mi300x": GpuProfile(
        key="mi300x",
        name="AMD Instinct MI300X",
        memory_mib=192 * 1024,
        compute_capability=(9, 4),
        rated_boost_sm_mhz=2100,
        idle_sm_mhz=500,
        memory_bus_width_bits=8192,
        hbm_bandwidth_gbs=5300.0,
        pcie_generation=5,
        pcie_width=16,
        host_link_gbs=55.0,
        pci_device_id=0x74A1,
        power_limit_w=750.0,
        board_part_number="102-G30211-0C",
        vbios="113-M3000100-103",
        dense_bf16_tflops=1307.4,
        vendor=AMD_VENDOR,
        gfx_target="gfx942",
        mem_transfers_per_clock=4,
    ),
    "mi325x": GpuProfile(
        key="mi325x",
        name="AMD Instinct MI325X",
        memory_mib=256 * 1024,
        compute_capability=(9, 4),
        rated_boost_sm_mhz=2100,
        idle_sm_mhz=500,
        memory_bus_width_bits=8192,
        hbm_bandwidth_gbs=6000.0,
        pcie_generation=5,
        pcie_width=16,
        host_link_gbs=55.0,
        pci_device_id=0x74A5,
        power_limit_w=1000.0,
        board_part_number="102-G30218-0C",
        vbios="113-M3250100-100",
        dense_bf16_tflops=1307.4,
        vendor=AMD_VENDOR,
        gfx_target="gfx942",
        mem_transfers_per_clock=4,
    ),
}

#: Every simulated part, whichever vendor (``GLIMMER_SIM_GPU`` accepts each key).
#: ``PROFILES`` stays the NVIDIA table the fault matrix's per-profile rows are built from.
ALL_PROFILES: dict[str, GpuProfile] = {**PROFILES, **AMD_PROFILES}


@dataclass(frozen=True)
class NicProfile:
    """A simulated RDMA NIC: what sysfs, perftest and NCCL report about it."""

    key: str
    name: str
    device: str
    #: ``InfiniBand`` or ``Ethernet`` (RoCE), as ``ports/1/link_layer`` says.
    link_layer: str
    rate_gbps: float
    #: ``ports/1/rate`` as the kernel prints it.
    rate_text: str
    #: Fraction of line rate a healthy ``ib_write_bw`` reaches at large messages.
    write_efficiency: float
    #: Healthy one-sided write latency (small messages), microseconds.
    write_latency_us: float

    @property
    def transport(self) -> str:
        """The word NCCL prints after the device (``mlx5_0:1/IB`` or ``/RoCE``)."""
        return "IB" if self.link_layer == "InfiniBand" else "RoCE"


NICS: dict[str, NicProfile] = {
    "cx7-ib400": NicProfile(
        key="cx7-ib400",
        name="ConnectX-7 400G InfiniBand (NDR)",
        device="mlx5_0",
        link_layer="InfiniBand",
        rate_gbps=400.0,
        rate_text="400 Gb/sec (4X NDR)",
        write_efficiency=0.97,
        write_latency_us=1.02,
    ),
    "roce200": NicProfile(
        key="roce200",
        name="ConnectX-6 Dx 200G RoCE v2",
        device="mlx5_0",
        link_layer="Ethernet",
        rate_gbps=200.0,
        rate_text="200 Gb/sec (4X HDR)",
        write_efficiency=0.96,
        write_latency_us=1.71,
    ),
}
DEFAULT_NIC = "cx7-ib400"

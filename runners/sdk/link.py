"""What a Pair/Group runner may claim about the link it measured, and its fault hooks.

Why: real bytes over loopback are real TCP but not the link between two nodes. A
measurement whose traffic never left the host (a loopback peer, or the host's own
address: every pair on the simulated kubelet, a bare-host run against itself), or
that ran on a simulated node (``GLIMMER_SIM_GPU`` set), declares ``provenance=sim``:
it proves the runner and the rendezvous, never a link. Only traffic between two
distinct non-loopback addresses is ``silicon``, and then it qualifies the host's TCP
path over the interface the runner names (``tcpTestInterface``), never a fabric.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Final

from runners.sdk.netinfo import stays_on_host
from runners.sdk.platform import is_simulated, simulated_link_faults
from runners.sdk.protocols import CORRUPT_DATA_FAULT, NO_RENDEZVOUS_FAULT, SLOW_LINK_FAULT

SLOW_LINK: Final = SLOW_LINK_FAULT
NO_RENDEZVOUS: Final = NO_RENDEZVOUS_FAULT
CORRUPT_DATA: Final = CORRUPT_DATA_FAULT

SIM: Final = "sim"
SILICON: Final = "silicon"
#: The rate a ``slow-link`` fault paces this side's traffic to (bytes per second).
SLOW_LINK_BYTES_PER_S: Final = 12_500_000  # 0.1 Gbit/s


def link_provenance(environ: Mapping[str, str], *, local: str, peer: str) -> str:
    """``sim`` unless the traffic crossed between two hosts' real addresses."""
    if is_simulated(environ) or stays_on_host(local, peer):
        return SIM
    return SILICON


def link_faults(environ: Mapping[str, str]) -> frozenset[str]:
    return simulated_link_faults(environ)


class Pacer:
    """Holds this side's traffic to ``rate`` bytes per second (None: unpaced).

    No burst credit: each piece costs ``len / rate`` seconds after the later of now and
    the previous piece's slot, so idle time (waiting on a peer) never lets a later piece
    through faster, and any window's rate stays at or below ``rate``.
    """

    def __init__(self, rate: float | None) -> None:
        self.rate = rate
        self._next = 0.0

    def moved(self, count: int) -> None:
        """``count`` more bytes went through: sleep until the rate allows them."""
        if self.rate is None:
            return
        now = time.monotonic()
        self._next = max(now, self._next) + count / self.rate
        time.sleep(self._next - now)

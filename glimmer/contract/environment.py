"""Environment names shared by the dispatchers and the runners.

Defined here because ``glimmer.contract`` is the one package both sides may import
(runners import nothing else of glimmer): a name spelled twice can drift, and a
dispatcher that set one spelling while the runner read another would measure the
simulator's absence as silicon.
"""

from __future__ import annotations

from typing import Final

#: Points a runner at the simulated GPU: ``<profile>[x<count>][:<fault>[,<fault>]]``.
#: Set (non-empty) means simulated; the dispatcher then records provenance ``sim``.
SIM_GPU_ENV: Final = "GLIMMER_SIM_GPU"

"""Entry point: ``python -m runners.fabric_soak`` (environment only, no arguments)."""

import sys

try:
    from runners.sdk.entry import launch
    from runners.sdk.report import Markers
except BaseException as error:  # a broken image must still exit 3, never 1
    print(f"FABRIC_SOAK_ERROR: runner SDK failed to import: {error!r}")
    sys.exit(3)

launch(module="runners.fabric_soak.runner", markers=Markers.for_prefix("FABRIC_SOAK"))

"""Entry point: ``python -m runners.gpu_burn`` (environment only, no arguments)."""

import sys

try:
    from runners.sdk.entry import launch
    from runners.sdk.report import Markers
except BaseException as error:  # a broken image must still exit 3, never 1
    print(f"GPU_BURN_ERROR: runner SDK failed to import: {error!r}")
    sys.exit(3)

launch(module="runners.gpu_burn.runner", markers=Markers.for_prefix("GPU_BURN"))

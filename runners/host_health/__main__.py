"""Entry point: ``python -m runners.host_health`` (environment only, no arguments)."""

import sys

try:
    from runners.sdk.entry import launch
    from runners.sdk.report import Markers
except BaseException as error:  # a broken image must still exit 3, never 1
    print(f"HOST_HEALTH_ERROR: runner SDK failed to import: {error!r}")
    sys.exit(3)

launch(
    module="runners.host_health.runner",
    markers=Markers(
        passed="HOST_HEALTH_OK", failed="HOST_HEALTH_FAULT", error="HOST_HEALTH_ERROR", skip=None
    ),
)

"""Entry point: ``python -m runners.fingerprint_probe`` (environment only, no arguments)."""

import sys

try:
    from runners.sdk.entry import launch
    from runners.sdk.report import Markers
except BaseException as error:  # a broken image must still exit 3, never 1
    print(f"FINGERPRINT_PROBE_ERROR: runner SDK failed to import: {error!r}")
    sys.exit(3)

launch(
    module="runners.fingerprint_probe.runner",
    markers=Markers(
        passed=None,
        failed="FINGERPRINT_PROBE_ERROR",
        error="FINGERPRINT_PROBE_ERROR",
        skip="FINGERPRINT_PROBE_SKIP",
    ),
)

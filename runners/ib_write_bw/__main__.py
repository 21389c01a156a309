"""Entry point: ``python -m runners.ib_write_bw`` (environment only, no arguments)."""

import sys

try:
    from runners.sdk.entry import launch
    from runners.sdk.report import Markers
except BaseException as error:  # a broken image must still exit 3, never 1
    print(f"IB_WRITE_BW_ERROR: runner SDK failed to import: {error!r}")
    sys.exit(3)

launch(module="runners.ib_write_bw.runner", markers=Markers.for_prefix("IB_WRITE_BW"))

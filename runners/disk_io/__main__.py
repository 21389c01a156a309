"""Entry point: ``python -m runners.disk_io`` (environment only, no arguments)."""

import sys

try:
    from runners.sdk.entry import launch
    from runners.sdk.report import Markers
except BaseException as error:  # a broken image must still exit 3, never 1
    print(f"DISK_IO_ERROR: runner SDK failed to import: {error!r}")
    sys.exit(3)

launch(module="runners.disk_io.runner", markers=Markers.for_prefix("DISK_IO"))

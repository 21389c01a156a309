"""thermal-soak: long sustained load with re-printed readings (docs/runners.md)."""

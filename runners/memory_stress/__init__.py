"""memory-stress: host DRAM stressed by the real ``stressapptest``."""

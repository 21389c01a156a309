"""clockprobe: clocks sampled under sustained load, to catch parts that never boost."""

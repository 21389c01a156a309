"""Per-kind reconcilers: ``run`` (BurnInRun), ``fingerprint`` (NodeFingerprint, with the
orphan-stamp reaper inside), ``schedule`` (BurnInSchedule); ``operator`` wires them."""

"""The BurnInRun reconciler and the pure pieces it is built from."""

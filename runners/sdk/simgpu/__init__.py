"""The simulated GPU: profile-driven stand-ins for every source the runners read.

Why: runners must be testable without a GPU, and every fault they claim to catch must be
shown caught (or shown missed) on demand. The simulator plugs in behind the one hardware
seam (``runners.sdk.hardware``) and nowhere else, and everything it produces is labelled
``provenance=sim`` so it can never be mistaken for silicon.
"""

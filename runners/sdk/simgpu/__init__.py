"""The simulated GPU: profile-driven stand-ins for every source the runners read.

Why: runners must be testable without a GPU, and every fault they claim to catch must be
shown caught (or shown missed) on demand. The simulator plugs in behind the one runner
seam: of the SDK and the runners, only the platform choice (``runners.sdk.platform``)
imports it, and it imports only the protocols (``runners.sdk.protocols``, with the errors
in ``runners.sdk.outcome``), never silicon. Everything it produces is labelled
``provenance=sim`` so it can never be mistaken for silicon.
"""

"""Glimmer: Kubernetes-native hardware acceptance testing for GPU/accelerator fleets."""

__version__ = "0.1.0"

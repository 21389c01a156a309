"""Simulated GPU nodes whose pods run as local processes (a development/test kubelet).

``python -m glimmer.sim --kubeconfig K --nodes N`` registers N nodes and runs every pod
bound to them as a local process - runner images through an image -> command map - with
real exit codes, readiness probes, deadlines, graceful deletion and logs served through
the apiserver's ``pods/log``. It also binds pending pods that fit its nodes, since the
test control plane has no kube-scheduler. What differs from a real node is listed in
``docs/development.md``; Service names for Pair/Group pods (through nss_wrapper) in
``docs/simulated-kubelet.md``. Dev/test tooling: the operator never imports it.
"""

"""The BurnInRun reconciler and the pure pieces it is built from.

How a controller sees objects (I7), for this controller and the ones built
after it: **raw JSON behind accessor functions**. The run stays the apiserver's JSON
dict from read to write, so a status write sends back every field it was given
(unknown and newer fields included) with no converter in between; every read of its
metadata, spec or status goes through :class:`~glimmer.controllers.kit.view.RunView`,
where each field's coercion and default live once, the defaults taken from the
``glimmer.api`` models the CRDs are generated from. Results are decoded once per pass
by the one result codec (``glimmer.verdict.codec``) into typed state, and encoded
back by it. Pods and nodes are read through the pure helpers beside them
(``podstate``, ``cordon``).

How it reads the cluster (I6): cached where the rules allow, live where they
require it, every read through :class:`~glimmer.controllers.run.reads.RunReads`
(see ``glimmer.controllers.operator`` for the rules).
"""

"""Kubernetes core types embedded in the burn-in kinds, modelled as far as the schema needs.

These mirror ``k8s.io/api/core/v1`` / ``metav1`` as of the Kubernetes 1.34 API the
reference's CRDs were generated from (controller-gen v0.17.2; ``EnvVarSource.fileKeyRef``,
the EnvFiles field, is its newest), so the generated CRDs carry the same structural schemas
controller-gen would emit instead of ``x-kubernetes-preserve-unknown-fields``: the
apiserver then validates and prunes an ``env`` or ``readinessProbe`` exactly as it
would on a Pod, and a typo is rejected at apply time rather than at pod creation.
"""

# field() returns attrs.field() with schema metadata; ruff cannot see that.
# ruff: noqa: RUF009

from __future__ import annotations

from datetime import datetime
from typing import ClassVar

import attrs

from glimmer.api.fields import QUANTITY_PATTERN, Quantity, field
from glimmer.api.vocabulary import ConditionStatus

__all__ = [
    "QUANTITY_PATTERN",
    "ConfigMapKeySelector",
    "EnvVar",
    "EnvVarSource",
    "ExecAction",
    "FileKeySelector",
    "GRPCAction",
    "HTTPGetAction",
    "HTTPHeader",
    "KubeCondition",
    "ObjectFieldSelector",
    "ObjectMeta",
    "ObjectReference",
    "OwnerReference",
    "Probe",
    "ResourceClaim",
    "ResourceFieldSelector",
    "ResourceRequirements",
    "SecretKeySelector",
    "TCPSocketAction",
    "Toleration",
]

_NAME_DEFAULT = (
    "Name of the referent. This field is effectively required, but due to backwards "
    "compatibility is allowed to be empty."
)


@attrs.define(kw_only=True)
class ResourceClaim:
    """ResourceClaim references one entry in PodSpec.ResourceClaims."""

    name: str = field(
        json="name",
        required=True,
        description="Name must match the name of one entry in pod.spec.resourceClaims.",
    )
    request: str | None = field(
        json="request",
        description="Request is the name chosen for a request in the referenced claim.",
    )


@attrs.define(kw_only=True)
class ResourceRequirements:
    """Compute resource requirements, copied verbatim to the runner container."""

    claims: list[ResourceClaim] | None = field(
        json="claims",
        description="Claims lists the names of resources, defined in spec.resourceClaims, "
        "that are used by this container.",
        list_type="map",
        list_map_keys=("name",),
    )
    limits: dict[str, Quantity] | None = field(
        json="limits",
        description="Limits describes the maximum amount of compute resources allowed.",
    )
    requests: dict[str, Quantity] | None = field(
        json="requests",
        description="Requests describes the minimum amount of compute resources required.",
    )


@attrs.define(kw_only=True)
class ConfigMapKeySelector:
    """Selects a key from a ConfigMap."""

    map_type: ClassVar[str] = "atomic"

    key: str = field(json="key", required=True, description="The key to select.")
    name: str = field(json="name", default="", description=_NAME_DEFAULT)
    optional: bool | None = field(
        json="optional", description="Specify whether the ConfigMap or its key must be defined"
    )


@attrs.define(kw_only=True)
class SecretKeySelector:
    """SecretKeySelector selects a key of a Secret."""

    map_type: ClassVar[str] = "atomic"

    key: str = field(
        json="key",
        required=True,
        description="The key of the secret to select from.  Must be a valid secret key.",
    )
    name: str = field(json="name", default="", description=_NAME_DEFAULT)
    optional: bool | None = field(
        json="optional", description="Specify whether the Secret or its key must be defined"
    )


@attrs.define(kw_only=True)
class ObjectFieldSelector:
    """ObjectFieldSelector selects an APIVersioned field of an object."""

    map_type: ClassVar[str] = "atomic"

    api_version: str | None = field(
        json="apiVersion",
        description='Version of the schema the FieldPath is written in terms of, defaults to "v1".',
    )
    field_path: str = field(
        json="fieldPath",
        required=True,
        description="Path of the field to select in the specified API version.",
    )


@attrs.define(kw_only=True)
class ResourceFieldSelector:
    """ResourceFieldSelector represents container resources (cpu, memory) and their output
    format."""

    map_type: ClassVar[str] = "atomic"

    container_name: str | None = field(
        json="containerName",
        description="Container name: required for volumes, optional for env vars",
    )
    divisor: Quantity | None = field(
        json="divisor",
        description='Specifies the output format of the exposed resources, defaults to "1"',
    )
    resource: str = field(
        json="resource", required=True, description="Required: resource to select"
    )


@attrs.define(kw_only=True)
class FileKeySelector:
    """FileKeySelector selects a key of the env file."""

    map_type: ClassVar[str] = "atomic"

    key: str = field(
        json="key",
        required=True,
        description="The key within the env file. An invalid key will prevent the pod from "
        "starting. The keys defined within a source may consist of any printable ASCII "
        "characters except '='. During Alpha stage of the EnvFiles feature gate, the key size "
        "is limited to 128 characters.",
    )
    optional: bool = field(
        json="optional",
        default=False,
        description="Specify whether the file or its key must be defined. If the file or key "
        "does not exist, then the env var is not published. If optional is set to true and "
        "the specified key does not exist, the environment variable will not be set in the "
        "Pod's containers. If optional is set to false and the specified key does not exist, "
        "an error will be returned during Pod creation.",
    )
    path: str = field(
        json="path",
        required=True,
        description="The path within the volume from which to select the file. Must be "
        "relative and may not contain the '..' path or start with '..'.",
    )
    volume_name: str = field(
        json="volumeName",
        required=True,
        description="The name of the volume mount containing the env file.",
    )


@attrs.define(kw_only=True)
class EnvVarSource:
    """EnvVarSource represents a source for the value of an EnvVar."""

    config_map_key_ref: ConfigMapKeySelector | None = field(
        json="configMapKeyRef", description="Selects a key of a ConfigMap."
    )
    field_ref: ObjectFieldSelector | None = field(
        json="fieldRef",
        description="Selects a field of the pod: supports metadata.name, metadata.namespace, "
        "metadata.labels['<KEY>'], metadata.annotations['<KEY>'], spec.nodeName, "
        "spec.serviceAccountName, status.hostIP, status.podIP, status.podIPs.",
    )
    file_key_ref: FileKeySelector | None = field(
        json="fileKeyRef",
        description="FileKeyRef selects a key of the env file. Requires the EnvFiles feature "
        "gate to be enabled.",
    )
    resource_field_ref: ResourceFieldSelector | None = field(
        json="resourceFieldRef",
        description="Selects a resource of the container: only resources limits and requests "
        "(limits.cpu, limits.memory, limits.ephemeral-storage, requests.cpu, requests.memory "
        "and requests.ephemeral-storage) are currently supported.",
    )
    secret_key_ref: SecretKeySelector | None = field(
        json="secretKeyRef", description="Selects a key of a secret in the pod's namespace"
    )


@attrs.define(kw_only=True)
class EnvVar:
    """EnvVar represents an environment variable present in a Container."""

    name: str = field(json="name", required=True, description="Name of the environment variable.")
    value: str | None = field(
        json="value",
        description="Variable references $(VAR_NAME) are expanded using the previously "
        'defined environment variables in the container. Defaults to "".',
    )
    value_from: EnvVarSource | None = field(
        json="valueFrom",
        description="Source for the environment variable's value. Cannot be used if value "
        "is not empty.",
    )


@attrs.define(kw_only=True)
class ExecAction:
    """ExecAction describes a "run in container" action."""

    command: list[str] | None = field(
        json="command",
        description="Command is the command line to execute inside the container.",
        list_type="atomic",
    )


@attrs.define(kw_only=True)
class GRPCAction:
    """GRPCAction specifies an action involving a GRPC service."""

    port: int = field(
        json="port",
        required=True,
        fmt="int32",
        description="Port number of the gRPC service. Number must be in the range 1 to 65535.",
    )
    service: str = field(
        json="service",
        default="",
        description="Service is the name of the service to place in the gRPC HealthCheckRequest.",
    )


@attrs.define(kw_only=True)
class HTTPHeader:
    """HTTPHeader describes a custom header to be used in HTTP probes"""

    name: str = field(
        json="name",
        required=True,
        description="The header field name. This will be canonicalized upon output, so "
        "case-variant names will be understood as the same header.",
    )
    value: str = field(json="value", required=True, description="The header field value")


@attrs.define(kw_only=True)
class HTTPGetAction:
    """HTTPGetAction describes an action based on HTTP Get requests."""

    host: str | None = field(
        json="host",
        description="Host name to connect to, defaults to the pod IP.",
    )
    http_headers: list[HTTPHeader] | None = field(
        json="httpHeaders",
        description="Custom headers to set in the request. HTTP allows repeated headers.",
        list_type="atomic",
    )
    path: str | None = field(json="path", description="Path to access on the HTTP server.")
    port: int | str = field(
        json="port",
        required=True,
        description="Name or number of the port to access on the container. Number must be in "
        "the range 1 to 65535. Name must be an IANA_SVC_NAME.",
    )
    scheme: str | None = field(
        json="scheme",
        description="Scheme to use for connecting to the host. Defaults to HTTP.",
    )


@attrs.define(kw_only=True)
class TCPSocketAction:
    """TCPSocketAction describes an action based on opening a socket"""

    host: str | None = field(
        json="host", description="Optional: Host name to connect to, defaults to the pod IP."
    )
    port: int | str = field(
        json="port",
        required=True,
        description="Number or name of the port to access on the container. Number must be in "
        "the range 1 to 65535. Name must be an IANA_SVC_NAME.",
    )


@attrs.define(kw_only=True)
class Probe:
    """Probe describes a health check to be performed against a container."""

    exec_: ExecAction | None = field(
        json="exec", description="Exec specifies a command to execute in the container."
    )
    failure_threshold: int | None = field(
        json="failureThreshold",
        fmt="int32",
        description="Minimum consecutive failures for the probe to be considered failed after "
        "having succeeded. Defaults to 3. Minimum value is 1.",
    )
    grpc: GRPCAction | None = field(
        json="grpc", description="GRPC specifies a GRPC HealthCheckRequest."
    )
    http_get: HTTPGetAction | None = field(
        json="httpGet", description="HTTPGet specifies an HTTP GET request to perform."
    )
    initial_delay_seconds: int | None = field(
        json="initialDelaySeconds",
        fmt="int32",
        description="Number of seconds after the container has started before liveness probes "
        "are initiated.",
    )
    period_seconds: int | None = field(
        json="periodSeconds",
        fmt="int32",
        description="How often (in seconds) to perform the probe. Default to 10 seconds. "
        "Minimum value is 1.",
    )
    success_threshold: int | None = field(
        json="successThreshold",
        fmt="int32",
        description="Minimum consecutive successes for the probe to be considered successful "
        "after having failed. Defaults to 1.",
    )
    tcp_socket: TCPSocketAction | None = field(
        json="tcpSocket", description="TCPSocket specifies a connection to a TCP port."
    )
    termination_grace_period_seconds: int | None = field(
        json="terminationGracePeriodSeconds",
        fmt="int64",
        description="Optional duration in seconds the pod needs to terminate gracefully upon "
        "probe failure.",
    )
    timeout_seconds: int | None = field(
        json="timeoutSeconds",
        fmt="int32",
        description="Number of seconds after which the probe times out. Defaults to 1 second. "
        "Minimum value is 1.",
    )


@attrs.define(kw_only=True)
class Toleration:
    """The pod this Toleration is attached to tolerates any taint that matches the triple
    <key,value,effect> using the matching operator <operator>."""

    effect: str | None = field(
        json="effect",
        description="Effect indicates the taint effect to match. Empty means match all taint "
        "effects. When specified, allowed values are NoSchedule, PreferNoSchedule and NoExecute.",
    )
    key: str | None = field(
        json="key",
        description="Key is the taint key that the toleration applies to. Empty means match "
        "all taint keys.",
    )
    operator: str | None = field(
        json="operator",
        description="Operator represents a key's relationship to the value. Valid operators "
        "are Exists and Equal. Defaults to Equal.",
    )
    toleration_seconds: int | None = field(
        json="tolerationSeconds",
        fmt="int64",
        description="TolerationSeconds represents the period of time the toleration (which "
        "must be of effect NoExecute, otherwise this field is ignored) tolerates the taint.",
    )
    value: str | None = field(
        json="value",
        description="Value is the taint value the toleration matches to. If the operator is "
        "Exists, the value should be empty, otherwise just a regular string.",
    )


@attrs.define(kw_only=True)
class ObjectReference:
    """ObjectReference contains enough information to let you inspect or modify the referred
    object."""

    map_type: ClassVar[str] = "atomic"

    api_version: str | None = field(json="apiVersion", description="API version of the referent.")
    field_path: str | None = field(
        json="fieldPath",
        description="If referring to a piece of an object instead of an entire object, this "
        "string should contain a valid JSON/Go field access statement.",
    )
    kind: str | None = field(json="kind", description="Kind of the referent.")
    name: str | None = field(json="name", description="Name of the referent.")
    namespace: str | None = field(json="namespace", description="Namespace of the referent.")
    resource_version: str | None = field(
        json="resourceVersion",
        description="Specific resourceVersion to which this reference is made, if any.",
    )
    uid: str | None = field(json="uid", description="UID of the referent.")


@attrs.define(kw_only=True)
class KubeCondition:
    """Condition contains details for one aspect of the current state of this API Resource
    (metav1.Condition)."""

    last_transition_time: datetime = field(
        json="lastTransitionTime",
        required=True,
        fmt="date-time",
        description="lastTransitionTime is the last time the condition transitioned from one "
        "status to another.",
    )
    message: str = field(
        json="message",
        required=True,
        max_length=32768,
        description="message is a human readable message indicating details about the "
        "transition. This may be an empty string.",
    )
    observed_generation: int | None = field(
        json="observedGeneration",
        fmt="int64",
        minimum=0,
        description="observedGeneration represents the .metadata.generation that the "
        "condition was set based upon.",
    )
    reason: str = field(
        json="reason",
        required=True,
        min_length=1,
        max_length=1024,
        pattern=r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$",
        description="reason contains a programmatic identifier indicating the reason for the "
        "condition's last transition.",
    )
    status: str = field(
        json="status",
        required=True,
        enum=ConditionStatus,
        description="status of the condition, one of True, False, Unknown.",
    )
    type: str = field(
        json="type",
        required=True,
        max_length=316,
        pattern=r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
        r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$",
        description="type of condition in CamelCase or in foo.example.com/CamelCase.",
    )


@attrs.define(kw_only=True)
class OwnerReference:
    """OwnerReference identifies an owning object (metav1.OwnerReference)."""

    api_version: str = field(
        json="apiVersion", required=True, description="API version of the referent."
    )
    kind: str = field(json="kind", required=True, description="Kind of the referent.")
    name: str = field(json="name", required=True, description="Name of the referent.")
    uid: str = field(json="uid", required=True, description="UID of the referent.")
    controller: bool | None = field(
        json="controller", description="If true, this reference points to the managing controller."
    )
    block_owner_deletion: bool | None = field(
        json="blockOwnerDeletion",
        description="If true, the owner cannot be deleted from storage before this object.",
    )


@attrs.define(kw_only=True)
class ObjectMeta:
    """The subset of metav1.ObjectMeta the controllers read and write.

    Fields outside this subset (``managedFields`` above all) are dropped on read; an
    update that omits them leaves the server's copy untouched.
    """

    name: str | None = field(json="name", description="Object name.")
    generate_name: str | None = field(json="generateName", description="Name prefix.")
    namespace: str | None = field(json="namespace", description="Namespace.")
    uid: str | None = field(json="uid", description="Server-assigned unique id.")
    resource_version: str | None = field(
        json="resourceVersion", description="Optimistic-concurrency token."
    )
    generation: int | None = field(json="generation", fmt="int64", description="Spec generation.")
    creation_timestamp: datetime | None = field(
        json="creationTimestamp", fmt="date-time", description="Creation time."
    )
    deletion_timestamp: datetime | None = field(
        json="deletionTimestamp", fmt="date-time", description="Deletion request time."
    )
    labels: dict[str, str] | None = field(json="labels", description="Labels.")
    annotations: dict[str, str] | None = field(json="annotations", description="Annotations.")
    finalizers: list[str] | None = field(json="finalizers", description="Finalizers.")
    owner_references: list[OwnerReference] | None = field(
        json="ownerReferences", description="Owners."
    )

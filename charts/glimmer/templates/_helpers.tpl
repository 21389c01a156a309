{{/* The chart's name, and the prefix of every object it creates. */}}
{{- define "glimmer.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* "glimmer" for a release named glimmer, so object names match manifests/default. */}}
{{- define "glimmer.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "glimmer.selectorLabels" -}}
app.kubernetes.io/name: {{ include "glimmer.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: manager
{{- end -}}

{{- define "glimmer.labels" -}}
{{ include "glimmer.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "glimmer.serviceAccountName" -}}
{{- default (printf "%s-manager" (include "glimmer.fullname" .)) .Values.serviceAccount.name -}}
{{- end -}}

{{/* The manager's ServiceAccount as an RBAC subject. */}}
{{- define "glimmer.subject" -}}
- kind: ServiceAccount
  name: {{ include "glimmer.serviceAccountName" . }}
  namespace: {{ .Release.Namespace }}
{{- end -}}

{{/* "true" when every namespace is served (servedNamespaces.names is ["*"]). */}}
{{- define "glimmer.servesAll" -}}
{{- $names := .Values.servedNamespaces.names -}}
{{- if has "*" $names -}}
{{- if ne (len $names) 1 -}}
{{- fail "servedNamespaces.names: \"*\" serves every namespace and cannot be mixed with names" -}}
{{- end -}}
true
{{- end -}}
{{- end -}}

{{/* "true" when the served namespaces are chosen by label (servedNamespaces.selector). */}}
{{- define "glimmer.servesBySelector" -}}
{{- with .Values.servedNamespaces.selector -}}
{{- if .matchLabels -}}
true
{{- end -}}
{{- end -}}
{{- end -}}

{{/* servedNamespaces.selector.matchLabels as a label selector: "k1=v1,k2=v2" (keys sorted). */}}
{{- define "glimmer.selectorString" -}}
{{- $labels := .Values.servedNamespaces.selector.matchLabels -}}
{{- $terms := list -}}
{{- range $key := keys $labels | sortAlpha -}}
{{- $terms = append $terms (printf "%s=%s" $key (get $labels $key | toString)) -}}
{{- end -}}
{{- join "," $terms -}}
{{- end -}}

{{/* The namespaces that get the per-namespace grants (workloads and sink-secrets
RoleBindings, the runner ServiceAccount), as a JSON list: servedNamespaces.names; with a
selector, the namespaces carrying its labels when the chart is installed or upgraded
(Helm's lookup: `helm template` without --dry-run=server sees none); none for "*". */}}
{{- define "glimmer.grantedNamespaces" -}}
{{- if include "glimmer.servesBySelector" . -}}
{{- $want := .Values.servedNamespaces.selector.matchLabels -}}
{{- $found := list -}}
{{- range (lookup "v1" "Namespace" "" "").items -}}
{{- $labels := .metadata.labels | default dict -}}
{{- $match := true -}}
{{- range $key, $value := $want -}}
{{- if or (not (hasKey $labels $key)) (ne (get $labels $key | toString) ($value | toString)) -}}
{{- $match = false -}}
{{- end -}}
{{- end -}}
{{- if $match -}}
{{- $found = append $found .metadata.name -}}
{{- end -}}
{{- end -}}
{{- if has .Release.Namespace $found -}}
{{- fail (printf "servedNamespaces.selector matches the manager's own namespace %q: it holds the manager's ServiceAccount and enforces restricted; remove the label from it" .Release.Namespace) -}}
{{- end -}}
{{- toJson (sortAlpha $found) -}}
{{- else if include "glimmer.servesAll" . -}}
{{- toJson list -}}
{{- else -}}
{{- toJson .Values.servedNamespaces.names -}}
{{- end -}}
{{- end -}}

{{/* The ServiceAccount runner pods run as (--runner-service-account). */}}
{{- define "glimmer.runnerServiceAccountName" -}}
{{- .Values.runnerServiceAccount.name -}}
{{- end -}}

{{/* Refuse values that cannot make a working install, before anything is applied. */}}
{{- define "glimmer.validate" -}}
{{- if and (hasKey .Values "replicaCount") (ne (int .Values.replicaCount) (int .Values.replicas)) (ne (int .Values.replicas) 1) -}}
{{- fail "replicaCount and replicas are both set and differ: replicaCount is the reference chart's name for replicas; set one" -}}
{{- end -}}
{{- if and (gt (int (include "glimmer.replicas" .)) 1) (not (include "glimmer.leaderElectionEnabled" .)) -}}
{{- fail "replicas > 1 needs leaderElection.enabled: two managers without a Lease would both cordon and load nodes" -}}
{{- end -}}
{{- if le (int .Values.terminationGracePeriodSeconds) (int .Values.gracefulShutdownTimeoutSeconds) -}}
{{- fail "terminationGracePeriodSeconds must be above gracefulShutdownTimeoutSeconds, or the kubelet kills the manager before it releases its Lease" -}}
{{- end -}}
{{- with .Values.servedNamespaces.selector -}}
{{- if omit . "matchLabels" -}}
{{- fail "servedNamespaces.selector: only matchLabels is supported (the manager's --serve-namespace-selector is equality-based)" -}}
{{- end -}}
{{- end -}}
{{- if include "glimmer.servesBySelector" . -}}
{{- if .Values.servedNamespaces.names -}}
{{- fail "servedNamespaces.selector and servedNamespaces.names are both set: choose one (set names to [] to serve by label)" -}}
{{- end -}}
{{- else if not .Values.servedNamespaces.names -}}
{{- fail "servedNamespaces.names is empty: name at least one namespace, or \"*\", or set servedNamespaces.selector.matchLabels" -}}
{{- end -}}
{{- if has .Release.Namespace (.Values.servedNamespaces.names | default list) -}}
{{- fail (printf "servedNamespaces.names must not include the manager's own namespace %q: it holds the manager's ServiceAccount and enforces restricted" .Release.Namespace) -}}
{{- end -}}
{{- if not (include "glimmer.runnerServiceAccountName" .) -}}
{{- if .Values.runnerServiceAccount.create -}}
{{- fail "runnerServiceAccount.name is empty but runnerServiceAccount.create is true: name the ServiceAccount to create, or set create to false to run runner pods as each namespace's default ServiceAccount (still with no token)" -}}
{{- end -}}
{{- end -}}
{{- range $field, $entries := dict "sinks.allowDestinations" .Values.sinks.allowDestinations "clusterCIDRs" .Values.clusterCIDRs -}}
{{- range $entries -}}
{{- if or (not (kindIs "string" .)) (eq (trim .) "") (contains "," .) -}}
{{- fail (printf "%s: each entry is one CIDR, address or host name (a non-empty string without commas), got %v" $field .) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Reference-chart aliases (values.schema.json admits them; README.md "Aliases"). */}}

{{/* replicas, or its alias replicaCount when given. */}}
{{- define "glimmer.replicas" -}}
{{- if hasKey .Values "replicaCount" -}}
{{- int .Values.replicaCount -}}
{{- else -}}
{{- int .Values.replicas -}}
{{- end -}}
{{- end -}}

{{/* "true" when leader election is on: leaderElection.enabled, or leaderElection given
as a plain boolean (the reference chart's form). Empty when off. */}}
{{- define "glimmer.leaderElectionEnabled" -}}
{{- if kindIs "bool" .Values.leaderElection -}}
{{- if .Values.leaderElection }}true{{ end -}}
{{- else if .Values.leaderElection.enabled -}}
true
{{- end -}}
{{- end -}}

{{/* The Lease name: leaderElection.id, or the default when leaderElection is a boolean. */}}
{{- define "glimmer.leaderElectionId" -}}
{{- if kindIs "map" .Values.leaderElection -}}
{{- .Values.leaderElection.id | default "glimmer-manager.burnin.glimmer.ai" -}}
{{- else -}}
glimmer-manager.burnin.glimmer.ai
{{- end -}}
{{- end -}}

{{/* "true" when the metrics Service is rendered: metrics.service.enabled, or its alias
metrics.enabled when given. */}}
{{- define "glimmer.metricsServiceEnabled" -}}
{{- if hasKey .Values.metrics "enabled" -}}
{{- if .Values.metrics.enabled }}true{{ end -}}
{{- else if .Values.metrics.service.enabled -}}
true
{{- end -}}
{{- end -}}

{{/* Whether the chart renders served namespace NAME: a namespace that already exists
and is not this release's (created by hand, as the README's local flow does) is left
alone, never adopted, so `helm install` does not fail on it. */}}
{{- define "glimmer.ownsNamespace" -}}
{{- $existing := lookup "v1" "Namespace" "" .name -}}
{{- if not $existing -}}
true
{{- else -}}
{{- $annotations := $existing.metadata.annotations | default dict -}}
{{- if and (eq (get $annotations "meta.helm.sh/release-name") .root.Release.Name) (eq (get $annotations "meta.helm.sh/release-namespace") .root.Release.Namespace) -}}
true
{{- end -}}
{{- end -}}
{{- end -}}

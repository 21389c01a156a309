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

{{/* Refuse values that cannot make a working install, before anything is applied. */}}
{{- define "glimmer.validate" -}}
{{- if and (gt (int .Values.replicas) 1) (not .Values.leaderElection.enabled) -}}
{{- fail "replicas > 1 needs leaderElection.enabled: two managers without a Lease would both cordon and load nodes" -}}
{{- end -}}
{{- if le (int .Values.terminationGracePeriodSeconds) (int .Values.gracefulShutdownTimeoutSeconds) -}}
{{- fail "terminationGracePeriodSeconds must be above gracefulShutdownTimeoutSeconds, or the kubelet kills the manager before it releases its Lease" -}}
{{- end -}}
{{- if not .Values.servedNamespaces.names -}}
{{- fail "servedNamespaces.names is empty: name at least one namespace, or \"*\"" -}}
{{- end -}}
{{- if has .Release.Namespace .Values.servedNamespaces.names -}}
{{- fail (printf "servedNamespaces.names must not include the manager's own namespace %q: it holds the manager's ServiceAccount and enforces restricted" .Release.Namespace) -}}
{{- end -}}
{{- end -}}

{{/* flotilla.fullname is the release's name prefix; it also names the apiserver's Service, the one the APIServices point at. */}}
{{- define "flotilla.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "flotilla.apiserver.name" -}}
{{- printf "%s-apiserver" (include "flotilla.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "flotilla.etcd.name" -}}
{{- printf "%s-etcd" (include "flotilla.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* flotilla.servingCertSecret holds flotilla-apiserver's serving certificate: ca.crt, tls.crt, tls.key. */}}
{{- define "flotilla.servingCertSecret" -}}
{{- printf "%s-cert" (include "flotilla.apiserver.name" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* flotilla.etcdCertSecret holds the bundled etcd's CA and server certificate (ca.crt, tls.crt, tls.key). */}}
{{- define "flotilla.etcdCertSecret" -}}
{{- printf "%s-cert" (include "flotilla.etcd.name" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* flotilla.etcdClientCertSecret holds flotilla-apiserver's client certificate for the bundled etcd (ca.crt, tls.crt, tls.key). */}}
{{- define "flotilla.etcdClientCertSecret" -}}
{{- printf "%s-client-cert" (include "flotilla.etcd.name" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* flotilla.caIssuer is the cert-manager Issuer the chart makes when certs.certManager.issuerRef is empty. */}}
{{- define "flotilla.caIssuer" -}}
{{- printf "%s-ca" (include "flotilla.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
flotilla.groupVersions are the API group versions flotilla-apiserver serves,
one APIService each (an e2e test compares them with the running server's).
*/}}
{{- define "flotilla.groupVersions" -}}
- {group: cluster.karmada.io, version: v1alpha1}
- {group: policy.karmada.io, version: v1alpha1}
- {group: work.karmada.io, version: v1alpha2}
- {group: work.karmada.io, version: v1alpha1}
- {group: config.karmada.io, version: v1alpha1}
- {group: autoscaling.karmada.io, version: v1alpha1}
- {group: search.karmada.io, version: v1alpha1}
- {group: networking.karmada.io, version: v1alpha1}
- {group: apps.karmada.io, version: v1alpha1}
- {group: remedy.karmada.io, version: v1alpha1}
- {group: flotilla.io, version: v1alpha1}
- {group: metrics.k8s.io, version: v1beta1}
- {group: custom.metrics.k8s.io, version: v1beta2}
- {group: custom.metrics.k8s.io, version: v1beta1}
{{- end -}}

{{- define "flotilla.serviceAccountName" -}}
{{- default (include "flotilla.apiserver.name" .) .Values.serviceAccount.name -}}
{{- end -}}

{{- define "flotilla.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/part-of: flotilla
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* flotilla.selectorLabels takes a dict with the root context "ctx" and the "component". */}}
{{- define "flotilla.selectorLabels" -}}
app.kubernetes.io/name: flotilla
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* flotilla.validate fails rendering on value combinations that cannot work. */}}
{{- define "flotilla.validate" -}}
{{- $mode := .Values.etcd.mode -}}
{{- if not (has $mode (list "bundled" "external" "embedded")) -}}
{{- fail (printf "etcd.mode must be one of bundled, external, embedded; got %q" $mode) -}}
{{- end -}}
{{- if and (eq $mode "embedded") (ne (int .Values.apiserver.replicas) 1) -}}
{{- fail (printf "etcd.mode embedded keeps the data inside one process: apiserver.replicas must be 1, got %d; use etcd.mode bundled or external for more replicas" (int .Values.apiserver.replicas)) -}}
{{- end -}}
{{- if and (eq $mode "external") (empty .Values.etcd.external.endpoints) -}}
{{- fail "etcd.mode external needs etcd.external.endpoints" -}}
{{- end -}}
{{- if not (has .Values.certs.mode (list "generate" "certManager")) -}}
{{- fail (printf "certs.mode must be generate or certManager; got %q" .Values.certs.mode) -}}
{{- end -}}
{{- if and (eq $mode "bundled") (lt (int .Values.etcd.bundled.replicas) 1) -}}
{{- fail "etcd.bundled.replicas must be at least 1" -}}
{{- end -}}
{{- end -}}

{{/* flotilla.etcdServers is the comma-separated --etcd-servers of bundled or external mode. */}}
{{- define "flotilla.etcdServers" -}}
{{- if eq .Values.etcd.mode "external" -}}
{{- join "," .Values.etcd.external.endpoints -}}
{{- else -}}
{{- $name := include "flotilla.etcd.name" . -}}
{{- $urls := list -}}
{{- range $i := until (int .Values.etcd.bundled.replicas) -}}
{{- $urls = append $urls (printf "https://%s-%d.%s.%s.svc:2379" $name $i $name $.Release.Namespace) -}}
{{- end -}}
{{- join "," $urls -}}
{{- end -}}
{{- end -}}

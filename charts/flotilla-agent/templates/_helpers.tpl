{{/* flotilla-agent.fullname is the release's name prefix: the Deployment's name. */}}
{{- define "flotilla-agent.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* flotilla-agent.image is repository:tag, or repository@digest when the tag is a digest (sha256:...). */}}
{{- define "flotilla-agent.image" -}}
{{- $tag := .Values.image.tag | default .Chart.AppVersion -}}
{{- if hasPrefix "sha256:" $tag -}}
{{- printf "%s@%s" .Values.image.repository $tag -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository $tag -}}
{{- end -}}
{{- end -}}

{{- define "flotilla-agent.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/part-of: flotilla
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "flotilla-agent.selectorLabels" -}}
app.kubernetes.io/name: flotilla-agent
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: agent
{{- end -}}

{{/* flotilla-agent.validate fails rendering on values that cannot work. */}}
{{- define "flotilla-agent.validate" -}}
{{- if not .Values.clusterName -}}
{{- fail "clusterName is required: the member's Cluster name on the control plane, as registered (flotillactl register --cluster-name)" -}}
{{- end -}}
{{- if lt (int .Values.replicas) 0 -}}
{{- fail (printf "replicas must not be negative, got %d" (int .Values.replicas)) -}}
{{- end -}}
{{- if not .Values.controlPlaneKubeconfigSecret -}}
{{- fail "controlPlaneKubeconfigSecret is required: the Secret flotillactl register writes (karmada-agent-config)" -}}
{{- end -}}
{{- if not .Values.serviceAccount.name -}}
{{- fail "serviceAccount.name is required" -}}
{{- end -}}
{{- end -}}

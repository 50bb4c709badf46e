{{/*
Names and labels shared by every template. "@CHART@" was replaced by the chart's name when the chart
was generated, so these definitions stay distinct when several operator charts are subcharts of one.
*/}}

{{- define "@CHART@.name" -}}
{{- .Values.nameOverride | default .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The release name alone when it already says what this is (release "@CHART@"), else release-name. */}}
{{- define "@CHART@.fullname" -}}
{{- $name := include "@CHART@.name" . }}
{{- $full := ternary .Release.Name (printf "%s-%s" .Release.Name $name) (contains $name .Release.Name) }}
{{- .Values.fullnameOverride | default $full | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "@CHART@.selectorLabels" -}}
app.kubernetes.io/name: {{ include "@CHART@.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "@CHART@.labels" -}}
{{ include "@CHART@.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "@CHART@.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- .Values.serviceAccount.name | default (include "@CHART@.fullname" .) }}
{{- else }}
{{- .Values.serviceAccount.name | default "default" }}
{{- end }}
{{- end }}

{{/* A digest pins the image exactly; otherwise the tag, defaulting to the chart's appVersion. */}}
{{- define "@CHART@.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion | toString) }}
{{- end }}
{{- end }}

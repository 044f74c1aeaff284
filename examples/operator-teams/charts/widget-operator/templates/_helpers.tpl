{{- define "widget-operator.labels" -}}
app.kubernetes.io/name: widget-operator
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end }}

{{- define "widget-operator.selectorLabels" -}}
app.kubernetes.io/name: widget-operator
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

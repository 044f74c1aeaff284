{{/*
Base name of every object in the release: .Values.service.name, or the
release name when unset. Truncated to 63 characters (DNS label limit).
*/}}
{{- define "shoong-app.fullname" -}}
{{- default .Release.Name .Values.service.name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Chart name and version, for the helm.sh/chart label.
*/}}
{{- define "shoong-app.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Selector labels. These end up in immutable selectors, so keep them stable.
*/}}
{{- define "shoong-app.selectorLabels" -}}
app.kubernetes.io/name: {{ include "shoong-app.fullname" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
Common labels.
*/}}
{{- define "shoong-app.labels" -}}
helm.sh/chart: {{ include "shoong-app.chart" . }}
{{ include "shoong-app.selectorLabels" . }}
app.kubernetes.io/version: {{ include "shoong-app.imageTag" . | quote }}
app.kubernetes.io/component: {{ .Values.kind }}
app.kubernetes.io/part-of: {{ .Values.partOf }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/*
Image tag, defaulting to the chart appVersion.
*/}}
{{- define "shoong-app.imageTag" -}}
{{- .Values.image.tag | default .Chart.AppVersion | toString }}
{{- end }}

{{/*
Name of the ServiceAccount the pods run as.
*/}}
{{- define "shoong-app.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "shoong-app.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
Fail early on an unknown workload kind.
*/}}
{{- define "shoong-app.validate" -}}
{{- if not (has .Values.kind (list "deployment" "cronjob")) }}
{{- fail (printf "kind must be \"deployment\" or \"cronjob\", got %q" (toString .Values.kind)) }}
{{- end }}
{{- end }}

{{/*
Pod template (metadata + spec) shared by the Deployment and the CronJob.
Probes are only set for deployments.
*/}}
{{- define "shoong-app.podTemplate" -}}
metadata:
  annotations:
    checksum/config: {{ include (print .Template.BasePath "/configmap.yaml") . | sha256sum }}
    {{- with .Values.podAnnotations }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  labels:
    {{- include "shoong-app.selectorLabels" . | nindent 4 }}
    app.kubernetes.io/part-of: {{ .Values.partOf }}
    {{- with .Values.podLabels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  serviceAccountName: {{ include "shoong-app.serviceAccountName" . }}
  {{- with .Values.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- if eq .Values.kind "cronjob" }}
  restartPolicy: {{ .Values.cronjob.restartPolicy }}
  {{- end }}
  {{- with .Values.podSecurityContext }}
  securityContext:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  containers:
    - name: {{ include "shoong-app.fullname" . }}
      image: "{{ .Values.image.repository }}:{{ include "shoong-app.imageTag" . }}"
      imagePullPolicy: {{ .Values.image.pullPolicy }}
      {{- with .Values.command }}
      command:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .Values.args }}
      args:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- if and (eq .Values.kind "deployment") .Values.ports }}
      ports:
        {{- range .Values.ports }}
        - name: {{ .name }}
          containerPort: {{ .containerPort }}
          protocol: {{ .protocol | default "TCP" }}
        {{- end }}
      {{- end }}
      envFrom:
        - configMapRef:
            name: {{ include "shoong-app.fullname" . }}
      {{- with .Values.env }}
      env:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- if eq .Values.kind "deployment" }}
      {{- with .Values.probes.liveness }}
      livenessProbe:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .Values.probes.readiness }}
      readinessProbe:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- end }}
      {{- with .Values.resources }}
      resources:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .Values.securityContext }}
      securityContext:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      volumeMounts:
        - name: tmp
          mountPath: /tmp
  volumes:
    # Writable scratch space; the root filesystem is read-only.
    - name: tmp
      emptyDir: {}
  {{- with .Values.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.affinity }}
  affinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}

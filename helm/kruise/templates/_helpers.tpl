{{- define "kruise.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{- define "kruise.labels" -}}
app.kubernetes.io/name: kruise
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* The webhook's port: upstream's key `manager.webhook.port` (upstream serves webhooks from the manager
pod; kruise-py runs a separate kruise-webhook Deployment), falling back to the older `webhook.port`. */}}
{{- define "kruise.webhookPort" -}}
{{- $manager := .Values.manager | default dict -}}
{{- $hook := $manager.webhook | default dict -}}
{{- $hook.port | default .Values.webhook.port -}}
{{- end -}}

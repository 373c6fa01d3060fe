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

{{/* "true" when kruise-webhook runs with gate EnableExternalCerts, else "". The `featureGates` value is
read the way the process reads --feature-gates: the gate's own entry wins, else AllAlpha (it is an
alpha gate), else its default (off); values are ParseBool's true/t/1 in any case. Upstream's chart
looks for the substrings "EnableExternalCerts=true" / "AllAlpha=true"; parsing agrees with that on
every ordinary value and does not misread e.g. "AllAlpha=true,EnableExternalCerts=false". */}}
{{- define "kruise.externalCerts" -}}
{{- $gates := dict -}}
{{- range $entry := splitList "," (.Values.featureGates | default "" | toString) -}}
{{- $pair := splitList "=" $entry -}}
{{- if eq (len $pair) 2 -}}
{{- $_ := set $gates (trim (first $pair)) (has (lower (trim (last $pair))) (list "true" "t" "1")) -}}
{{- end -}}
{{- end -}}
{{- if hasKey $gates "EnableExternalCerts" -}}
{{- if get $gates "EnableExternalCerts" }}true{{ end -}}
{{- else if get $gates "AllAlpha" -}}
true
{{- end -}}
{{- end -}}

{{/* Upstream's `externalCerts.annotations` (e.g. cert-manager.io/inject-ca-from): what the CA injector
needs on both webhook configurations and on every CRD with a conversion webhook. */}}
{{- define "kruise.externalCertsAnnotations" -}}
{{- $external := .Values.externalCerts | default dict -}}
{{- with $external.annotations }}{{ toYaml . }}{{ end -}}
{{- end -}}

{{/* The API set (docs/api.md, "API sets"): "1.9" (OpenKruise 1.9.0's versions, the default) or "2.0"
(upstream master's). An unquoted `apiSet: 2.0` reaches the template as a number: read it as "2.0". */}}
{{- define "kruise.apiSet" -}}
{{- $value := .Values.apiSet | default "1.9" -}}
{{- $set := kindIs "string" $value | ternary $value (printf "%.1f" (float64 $value)) -}}
{{- if not (has $set (list "1.9" "2.0")) -}}
{{- fail (printf "apiSet: Unsupported value: \"%v\": supported values: \"1.9\", \"2.0\"" $value) -}}
{{- end -}}
{{- $set -}}
{{- end -}}

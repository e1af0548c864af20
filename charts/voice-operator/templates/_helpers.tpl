{{- define "voice-operator.name" -}}voice-operator{{- end -}}

{{- define "voice-operator.fullname" -}}
{{- if contains "voice-operator" .Release.Name -}}{{ .Release.Name | trunc 63 | trimSuffix "-" }}{{- else -}}{{ printf "%s-voice-operator" .Release.Name | trunc 63 | trimSuffix "-" }}{{- end -}}
{{- end -}}

{{- define "voice-operator.selectorLabels" -}}
app.kubernetes.io/name: voice-operator
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "voice-operator.labels" -}}
{{ include "voice-operator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- /*
The registry both images were pushed to. Nothing is published: without it the default name would
resolve to Docker Hub and end in ImagePullBackOff, so the chart refuses to render instead.
*/ -}}
{{- define "voice-operator.registry" -}}
{{- required "image.registry is required: no image of voice-operator is published. Build Dockerfile.operator and Dockerfile.worker, push them to your registry and set image.registry to it (docs/install.md in the repository)" .Values.image.registry -}}
{{- end -}}

{{- /* registry/repository:tag[@digest]: a digest pins what runs, the tag stays for readers. */ -}}
{{- define "voice-operator.image" -}}
{{- $i := .Values.image -}}
{{ include "voice-operator.registry" . }}/{{ $i.repository }}:{{ $i.tag }}{{ if $i.digest }}@{{ $i.digest }}{{ end }}
{{- end -}}

{{- /* The worker image's repository with its registry (workerImage.registry, else image.registry). */ -}}
{{- define "voice-operator.workerRepository" -}}
{{ default (include "voice-operator.registry" .) .Values.workerImage.registry }}/{{ .Values.workerImage.repository }}
{{- end -}}

{{- define "voice-operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}{{ default (include "voice-operator.fullname" .) .Values.serviceAccount.name }}{{- else -}}{{ default "default" .Values.serviceAccount.name }}{{- end -}}
{{- end -}}

{{- /* The `helm test` pod: the chart's labels without the operator's selector labels. */ -}}
{{- define "voice-operator.testLabels" -}}
app.kubernetes.io/name: voice-operator-test
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: test
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* The release's object name, also the headless Service's and the worker StatefulSet's name, so worker N is "<fullname>-N.<fullname>". */}}
{{- define "kolo.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* The driver pod's host name: the hostfile names it, and kolorun treats its own host name as local. */}}
{{- define "kolo.driverHost" -}}
{{- printf "%s-driver" (include "kolo.fullname" .) -}}
{{- end -}}

{{- define "kolo.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "kolo.labels" -}}
{{ include "kolo.selectorLabels" . }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* resources of one pod kind: requests and limits, plus the GPUs in both. Called with (list $ "driver"|"worker"). */}}
{{- define "kolo.resources" -}}
{{- $top := index . 0 -}}
{{- $r := index $top.Values.resources (index . 1) -}}
{{- $requests := deepCopy ($r.requests | default dict) -}}
{{- $limits := deepCopy ($r.limits | default dict) -}}
{{- if gt (int $r.gpu) 0 -}}
{{- $_ := set $requests $top.Values.resources.gpuResource (int $r.gpu) -}}
{{- $_ := set $limits $top.Values.resources.gpuResource (int $r.gpu) -}}
{{- end -}}
{{- toYaml (dict "requests" $requests "limits" $limits) -}}
{{- end -}}

{{/* Environment every pod's entrypoint reads (deploy/README.md). */}}
{{- define "kolo.commonEnv" -}}
- name: WORKER_PORT
  value: {{ .Values.ssh.port | quote }}
- name: SSH_KEY_DIR
  value: /etc/kolo/ssh
{{- $dataDir := .Values.data.dir | default (ternary .Values.datasetPvc.mountPath "" .Values.datasetPvc.enabled) }}
{{- if and .Values.data.url (not $dataDir) }}
{{- fail "data.url needs data.dir (or datasetPvc.enabled): where to put the data" }}
{{- end }}
{{- with $dataDir }}
- name: DATA_DIR
  value: {{ . | quote }}
{{- end }}
{{- with .Values.data.url }}
- name: DATA_URL
  value: {{ . | quote }}
{{- end }}
{{- with .Values.data.s3EndpointUrl }}
- name: S3_ENDPOINT_URL
  value: {{ . | quote }}
{{- end }}
{{- end -}}

{{/* The data credentials, as environment variables from their Secret. */}}
{{- define "kolo.envFrom" -}}
{{- with .Values.data.credentialsSecret }}
envFrom:
  - secretRef:
      name: {{ . }}
{{- end }}
{{- end -}}

{{- define "kolo.volumeMounts" -}}
- name: ssh-keys
  mountPath: /etc/kolo/ssh
  readOnly: true
- name: generated
  mountPath: /kolo/generated
  readOnly: true
- name: shm
  mountPath: /dev/shm
{{- if .Values.horovodPaths }}
- name: generated-horovod
  mountPath: /horovod/generated
  readOnly: true
{{- end }}
{{- if .Values.datasetPvc.enabled }}
- name: dataset
  mountPath: {{ .Values.datasetPvc.mountPath }}
{{- end }}
{{- end -}}

{{- define "kolo.volumes" -}}
- name: ssh-keys
  secret:
    secretName: {{ include "kolo.fullname" . }}-ssh
    defaultMode: 0440
- name: generated
  configMap:
    name: {{ include "kolo.fullname" . }}
    defaultMode: 0555
{{- if .Values.horovodPaths }}
- name: generated-horovod
  configMap:
    name: {{ include "kolo.fullname" . }}
    defaultMode: 0555
    items:
      - key: hostfile
        path: hostfile
      - key: discovery.conf
        path: discovery.conf
      - key: discover-hosts.sh
        path: discoverHosts.sh
{{- end }}
- name: shm
  emptyDir:
    medium: Memory
    sizeLimit: {{ .Values.shmSize }}
{{- if .Values.datasetPvc.enabled }}
- name: dataset
  persistentVolumeClaim:
    claimName: {{ include "kolo.fullname" . }}-dataset
{{- end }}
{{- end -}}

{{/* Scheduling and security fields both pod kinds share. */}}
{{- define "kolo.podExtras" -}}
{{- with .Values.podSecurityContext }}
securityContext:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* The ssh key text as given, less the indentation seed 000's `sed 's/^/    /'` adds, ending in one newline (OpenSSH wants it). */}}
{{- define "kolo.keyText" -}}
{{- printf "%s\n" (regexReplaceAll "(?m)^[ \t]+" . "" | trim) -}}
{{- end -}}

#!/usr/bin/env bash
# Run the ImageNet pipeline on Kubernetes with the manifests of this
# directory: the one step that fills their ${...} placeholders (envsubst,
# from gettext-base) and applies them, each Job after the one it needs is
# complete.
#
#   IMAGE=REGISTRY/libtfrec:VERSION BUCKET=b PROJECT=p INSTANCE=i \
#   GSA_EMAIL=tfrec@p.iam.gserviceaccount.com RAW_VOLUME=imagenet-raw-pv \
#       docs/k8s/run.sh [convert] [load] [export]     (default: all three)
#
#   convert  ServiceAccount (+ key Secret), claims, the conversion Job; once
#            it is complete (kubectl wait), the merge Job
#   load     the tfrec2bt Job (rows into Bigtable), progress on tfrec-progress
#   export   the split keys ConfigMap, then the bt2tfrec Job
#
# Settings (environment):
#   IMAGE      the image docker/Dockerfile builds (docs/docker.md)
#   BUCKET PROJECT INSTANCE   the Cloud Storage bucket, Google Cloud project
#              and Bigtable instance (table imagenet, family tfexample)
#   GSA_EMAIL  the Google service account Workload Identity binds the
#              Kubernetes service account tfrec to (serviceaccount.yaml)
#   KEY_FILE   instead of Workload Identity: a service-account key file,
#              put in the Secret tfrec-key and mounted in every pod
#   RAW_VOLUME the PersistentVolume holding the extracted tree (volumes.yaml)
#   PROGRESS_STORAGE_CLASS   a ReadWriteMany class for tfrec-progress
#              [standard-rwx]
#   NUM_RECORDS  records loaded into Bigtable and exported [1281167]
#   TIMESTAMP_MICROS  the cell timestamp of the load [now, whole seconds]:
#              give the first run's value again to redo a load in place
#   PYTHON     a Python with the tfrec package, for the split keys [python3]
#   WAIT_TIMEOUT  how long kubectl wait waits for a Job [24h]
#   RENDERED   also keep each filled manifest in this directory
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
: "${IMAGE:?set IMAGE to the image docker/Dockerfile builds (docs/docker.md)}"
: "${BUCKET:?set BUCKET}" "${PROJECT:?set PROJECT}" "${INSTANCE:?set INSTANCE}"
: "${RAW_VOLUME:?set RAW_VOLUME to the PersistentVolume holding the extracted tree}"
export IMAGE BUCKET PROJECT INSTANCE RAW_VOLUME
export GSA_EMAIL=${GSA_EMAIL:-}
export PROGRESS_STORAGE_CLASS=${PROGRESS_STORAGE_CLASS:-standard-rwx}
export NUM_RECORDS=${NUM_RECORDS:-1281167}
export TIMESTAMP_MICROS=${TIMESTAMP_MICROS:-$(date +%s)000000}
export GOOGLE_APPLICATION_CREDENTIALS= KEY_JSON_BASE64=
if [ -n "${KEY_FILE:-}" ]; then
    KEY_JSON_BASE64=$(base64 -w0 "$KEY_FILE")
    GOOGLE_APPLICATION_CREDENTIALS=/var/secrets/google/key.json
elif [ -z "$GSA_EMAIL" ]; then
    echo "run.sh: set GSA_EMAIL (Workload Identity) or KEY_FILE (a key in a Secret)" >&2
    exit 2
fi
PYTHON=${PYTHON:-python3}
WAIT_TIMEOUT=${WAIT_TIMEOUT:-24h}
# Only these are replaced: anything else written ${...} stays as it is.
VARS='${IMAGE} ${BUCKET} ${PROJECT} ${INSTANCE} ${GSA_EMAIL} ${RAW_VOLUME}
${PROGRESS_STORAGE_CLASS} ${NUM_RECORDS} ${TIMESTAMP_MICROS}
${GOOGLE_APPLICATION_CREDENTIALS} ${KEY_JSON_BASE64}'

apply() { # manifest
    local out
    out=$(envsubst "$VARS" <"$HERE/$1")
    [ -z "${RENDERED:-}" ] || printf '%s\n' "$out" >"$RENDERED/$1"
    printf '%s\n' "$out" | kubectl apply -f -
}
run_job() { # manifest job: a fresh Job (a Job's spec cannot change), then wait
    kubectl delete job "$2" --ignore-not-found
    apply "$1"
    kubectl wait --for=condition=complete --timeout="$WAIT_TIMEOUT" "job/$2"
}

apply serviceaccount.yaml
[ -z "$KEY_JSON_BASE64" ] || apply key-secret.yaml
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(convert load export)
for step in "${steps[@]}"; do
    case $step in
    convert)
        apply volumes.yaml
        run_job imagenet2tfrec-job.yaml imagenet2tfrec
        run_job imagenet2tfrec-merge-job.yaml imagenet2tfrec-merge
        ;;
    load)
        apply volumes.yaml
        echo "run.sh: loading with TIMESTAMP_MICROS=$TIMESTAMP_MICROS (give it again to redo this load)" >&2
        run_job tfrec2bt-job.yaml tfrec2bt
        ;;
    export)
        keys=$(mktemp)
        "$PYTHON" -m tfrec.distributed split-keys --prefix=train_ \
            --num_records="$NUM_RECORDS" --num_tasks=16 >"$keys"
        kubectl create configmap bt2tfrec-split-keys --from-file=split_keys.txt="$keys" \
            --dry-run=client -o yaml | kubectl apply -f -
        rm -f "$keys"
        run_job bt2tfrec-job.yaml bt2tfrec
        ;;
    *) echo "run.sh: unknown step $step (convert, load, export)" >&2; exit 2 ;;
    esac
done

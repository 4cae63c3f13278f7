#!/bin/sh
# One-shot job (runs in temporalio/admin-tools): waits for the Temporal frontend, creates the
# namespace if it is missing, and registers Fairway's custom search attributes if they are
# missing. Idempotent; every step retries, because a fresh namespace takes a few seconds to
# reach the server's namespace cache.
set -eu

NAMESPACE=${NAMESPACE:-default}
NAMESPACE_RETENTION=${NAMESPACE_RETENTION:-72h}
TEMPORAL_ADDRESS=${TEMPORAL_ADDRESS:-temporal:7233}
SEARCH_ATTRIBUTES=${SEARCH_ATTRIBUTES:-TenantId=Keyword Priority=Keyword RunStatus=Keyword BatchId=Keyword}
ATTEMPTS=${ATTEMPTS:-60}

host=${TEMPORAL_ADDRESS%:*}
port=${TEMPORAL_ADDRESS##*:}
# Pin the address to IPv4: the frontend listens on 0.0.0.0 only (as in Temporal's own compose).
ip=$(getent ahosts "$host" 2>/dev/null | awk '$2 == "STREAM" && $1 ~ /^[0-9.]+$/ { print $1; exit }')
ADDRESS="${ip:-$host}:${port}"
export TEMPORAL_ADDRESS="$ADDRESS"
echo "Temporal frontend: ${host}:${port} (${ADDRESS}), namespace ${NAMESPACE}"

# retry <what> <command...>: runs the command until it succeeds, at most ATTEMPTS times.
retry() {
  what=$1
  shift
  n=0
  until "$@"; do
    n=$((n + 1))
    if [ "$n" -ge "$ATTEMPTS" ]; then
      echo "gave up: ${what} (after ${n} attempts)" >&2
      return 1
    fi
    echo "waiting: ${what} (attempt ${n}/${ATTEMPTS})"
    sleep 2
  done
}

ensure_namespace() {
  temporal operator namespace describe --namespace "$NAMESPACE" >/dev/null 2>&1 && return 0
  temporal operator namespace create --namespace "$NAMESPACE" --retention "$NAMESPACE_RETENTION"
}

has_search_attribute() {
  temporal operator search-attribute list --namespace "$NAMESPACE" 2>/dev/null | grep -qw -- "$1"
}

ensure_search_attribute() {
  has_search_attribute "$1" && return 0
  temporal operator search-attribute create --namespace "$NAMESPACE" --name "$1" --type "$2" ||
    true
  # Success is judged by the listing, so an "already exists" race is not an error.
  has_search_attribute "$1"
}

retry 'frontend to answer' temporal operator cluster health
retry "namespace ${NAMESPACE}" ensure_namespace
retry "namespace ${NAMESPACE} visible" sh -c 'temporal operator namespace describe --namespace "$1" >/dev/null' _ "$NAMESPACE"

for pair in $SEARCH_ATTRIBUTES; do
  name=${pair%%=*}
  type=${pair#*=}
  retry "search attribute ${name} (${type})" ensure_search_attribute "$name" "$type"
done

echo "Search attributes of ${NAMESPACE}:"
temporal operator search-attribute list --namespace "$NAMESPACE"
echo "Namespace ${NAMESPACE} ready"

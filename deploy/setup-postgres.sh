#!/bin/sh
# One-shot schema job (runs in temporalio/admin-tools): creates the `temporal`,
# `temporal_visibility` and `fairway` databases on PostgreSQL and brings both schemas to the version the
# server image expects. Idempotent: re-running it against an existing volume only applies
# missing versioned migrations.
set -eu

: "${POSTGRES_SEEDS:=postgresql}"
: "${DB_PORT:=5432}"
: "${POSTGRES_USER:=temporal}"
: "${SQL_PASSWORD:?SQL_PASSWORD must be set}" # read by temporal-sql-tool itself
export SQL_PASSWORD
SCHEMA_ROOT=/etc/temporal/schema/postgresql/v12

echo "Waiting for PostgreSQL at ${POSTGRES_SEEDS}:${DB_PORT} ..."
i=0
until nc -z -w 2 "$POSTGRES_SEEDS" "$DB_PORT"; do
  i=$((i + 1))
  if [ "$i" -ge 60 ]; then
    echo "PostgreSQL did not open its port after 60 attempts" >&2
    exit 1
  fi
  sleep 2
done

sql() {
  temporal-sql-tool --plugin postgres12 --ep "$POSTGRES_SEEDS" -u "$POSTGRES_USER" -p "$DB_PORT" "$@"
}

setup_db() {
  db=$1
  dir=$2
  echo "== database ${db}"
  # `create` fails when the database already exists; a real connection problem makes the next
  # command fail instead, so the error is not swallowed.
  sql --db "$db" create || echo "database ${db} not created (it probably exists already); continuing"
  sql --db "$db" setup-schema -v 0.0
  sql --db "$db" update-schema -d "${SCHEMA_ROOT}/${dir}/versioned"
}

setup_db temporal temporal
setup_db temporal_visibility visibility

# Fairway's shared stores (DATABASE_URL); Fairway creates its own tables on start.
sql --db fairway create || echo 'database fairway not created (it probably exists already); continuing'

echo 'PostgreSQL schema setup complete'

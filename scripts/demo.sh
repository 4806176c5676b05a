#!/usr/bin/env bash
# Builds the integration project end to end, each step a separate dbt process (as a user would),
# so the run also shows that tables persist across processes in the project's own catalog.
set -euo pipefail
cd "$(dirname "$0")/../integration_project"
export DBT_PROFILES_DIR="$PWD"

step() { printf '\n==> %s\n' "$*"; }

step "dbt debug: the embedded Spark session starts (first start fetches the Delta jars)"
dbt debug
step "create the shop's raw Delta tables (a no-op when they already exist)"
dbt run-operation create_shop_sources
step "dbt build: seed, snapshot, models and tests"
dbt build
step "dbt docs generate"
dbt docs generate
step "what the project built, and the streams with their offsets"
dbt run-operation print_shop_summary
step "a batch of inserts, updates and deletes on the sources"
dbt run-operation apply_shop_changes
step "dbt build again: the stream models consume exactly that batch"
dbt build
dbt run-operation print_shop_summary

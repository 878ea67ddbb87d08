# Sourced by scripts/test.sh: starts a throwaway PostgreSQL 15 cluster for the contracts PgStore tests
# (issue 8, CT-154) and exports SHIFTWORK_TEST_POSTGRES_URL. The cluster lives in a temporary directory,
# listens only on its own Unix socket directory (no TCP port), runs as the `postgres` user, and is stopped
# and removed by `on_exit`, also when the tests fail.
#
# In CI (CI=true) the PostgreSQL tests must run: SHIFTWORK_REQUIRE_POSTGRES=1 makes them fail instead of
# skipping when the cluster is missing. Locally, without a server, they report that they were skipped.

pg_bin=/usr/lib/postgresql/15/bin
if [ ! -x "$pg_bin/initdb" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "PostgreSQL 15 is not installed; installing Debian's postgresql-15"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-15) >/dev/null 2>&1 || true
fi
if [ "${CI:-}" = "true" ]; then
  export SHIFTWORK_REQUIRE_POSTGRES=1
fi

pg_start() {
  local run_as=()
  if [ "$(id -u)" = 0 ]; then
    run_as=(runuser -u postgres --)
  fi
  pg_dir=$(mktemp -d /tmp/shiftwork-pg.XXXXXX)
  chmod 0755 "$pg_dir"
  mkdir -p "$pg_dir/data" "$pg_dir/socket"
  if [ "$(id -u)" = 0 ]; then
    chown -R postgres:postgres "$pg_dir"
  fi
  on_exit "rm -rf '$pg_dir'"
  "${run_as[@]}" "$pg_bin/initdb" -D "$pg_dir/data" -U postgres -A trust --no-sync -E UTF8 >"$pg_dir/initdb.log" 2>&1 \
    || { cat "$pg_dir/initdb.log"; return 1; }
  "${run_as[@]}" "$pg_bin/pg_ctl" -D "$pg_dir/data" -l "$pg_dir/server.log" -w -t 60 \
    -o "-c listen_addresses='' -k $pg_dir/socket -c fsync=off -c max_connections=200 -c unix_socket_permissions=0777" start \
    >/dev/null || { cat "$pg_dir/server.log"; return 1; }
  on_exit "${run_as[*]} '$pg_bin/pg_ctl' -D '$pg_dir/data' -m immediate -w stop >/dev/null 2>&1"
  export SHIFTWORK_TEST_POSTGRES_URL="postgresql://postgres@localhost/postgres?host=$pg_dir/socket"
  # The restart test (what happens when the database restarts in the middle of a run) uses this.
  export SHIFTWORK_TEST_POSTGRES_RESTART="${run_as[*]} $pg_bin/pg_ctl -D $pg_dir/data -m fast -w -t 60 restart -l $pg_dir/server.log -o \"-c listen_addresses='' -k $pg_dir/socket -c fsync=off -c max_connections=200 -c unix_socket_permissions=0777\""
  echo "PostgreSQL 15 started in $pg_dir (socket $pg_dir/socket)"
}

if [ -n "${SHIFTWORK_TEST_POSTGRES_URL:-}" ]; then
  echo "Using the PostgreSQL server of SHIFTWORK_TEST_POSTGRES_URL"
elif [ -x "$pg_bin/initdb" ]; then
  pg_start || { echo "could not start PostgreSQL"; [ -z "${SHIFTWORK_REQUIRE_POSTGRES:-}" ] || exit 1; }
else
  echo "PostgreSQL 15 is not available: the PgStore tests will report that they were skipped"
fi

# shellcheck shell=bash
# Sourced by scripts/test.sh: makes sure a PostgreSQL server answers for the database tests and
# the chaos suite, so that the test command never runs them on SQLite only without saying so.
#
#   fleet_pg_ensure   Uses BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING (default
#                     postgresql://postgres@127.0.0.1:5432) when it answers. Otherwise installs
#                     Debian's `postgresql` when its binaries are missing and starts a throw-away
#                     cluster (trust auth, superuser `postgres`) in a `mktemp -d` directory, on a
#                     free port of 127.0.0.1 with its socket in that directory. Either way it
#                     exports BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING and FLEET_BENCH_PG
#                     (read by the chaos suite, packages/fleet-harness/src/pg.ts) naming that one server.
#   fleet_pg_stop     Stops the throw-away cluster and deletes its directory; does nothing when
#                     none was started. The caller runs it from its EXIT trap.
#   fleet_pg_drop_prefixed URL PREFIX
#                     Drops the databases whose names start with PREFIX (the e2e test's portal
#                     databases, scripts/start.sh's FLEET_POSTGRES_PREFIX).
#
# Needs `node` on PATH (scripts/toolchain.sh). Never touches a server it did not start, beyond
# the databases whose prefix the caller gives fleet_pg_drop_prefixed.

FLEET_PG_DIR=""     # the throw-away cluster's directory, when one was started
FLEET_PG_BIN=""     # the PostgreSQL binaries used for it

# True when a PostgreSQL server at the URL given lets us in and answers `select 1` (a port that
# merely accepts connections is not enough: a packaged server may want a password). Prints why
# not on stderr. Uses the `pg` client the workspace installs, so it runs after `yarn install`.
fleet_pg_answers() {
  (cd "$FLEET_ROOT" && node -e "
    const { Client } = require('pg');
    const client = new Client({ connectionString: process.argv[1], connectionTimeoutMillis: 5000 });
    const fail = e => { process.stderr.write('fleet: ' + (e && e.message ? e.message : e) + '\\n'); process.exit(1); };
    setTimeout(() => fail('no answer in 10 s'), 10000).unref();
    client.connect()
      .then(() => client.query('select 1'))
      .then(() => client.end())
      .then(() => process.exit(0), fail);
  " "$1")
}

# The newest installed PostgreSQL's bin directory (Debian layout), or nothing.
_fleet_pg_find_bin() {
  local d best=""
  for d in /usr/lib/postgresql/*/bin; do
    if ! [ -x "$d/initdb" ] || ! [ -x "$d/pg_ctl" ]; then continue; fi
    if [ -z "$best" ] || [ "$(printf '%s\n%s\n' "$best" "$d" | sort -V | tail -n 1)" = "$d" ]; then
      best="$d"
    fi
  done
  printf '%s' "$best"
}

# Runs a command as the user owning the throw-away cluster: initdb and postgres refuse root, so
# root runs them as the `postgres` system user (created by Debian's package); anyone else as
# themselves. Runs from the cluster directory (the postgres user may not reach the caller's).
_fleet_pg_as_owner() {
  if [ "$(id -u)" != 0 ]; then
    (cd "$FLEET_PG_DIR" && "$@")
  elif command -v runuser >/dev/null 2>&1; then
    (cd "$FLEET_PG_DIR" && runuser -u postgres -- "$@")
  else
    # shellcheck disable=SC2016 # expanded by the postgres user's shell, from the arguments
    (cd "$FLEET_PG_DIR" && su postgres -s /bin/sh -c '"$0" "$@"' -- "$@")
  fi
}

_fleet_pg_free_port() {
  node -e "
    const s = require('net').createServer();
    s.listen(0, '127.0.0.1', () => { process.stdout.write(String(s.address().port)); s.close(); });
  "
}

fleet_pg_ensure() {
  local pg="${BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING:-postgresql://postgres@127.0.0.1:5432}"
  if fleet_pg_answers "$pg"; then
    export BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING="$pg"
    export FLEET_BENCH_PG="$pg"
    echo "fleet: PostgreSQL answers at ${pg#*@}: database tests run on SQLite AND PostgreSQL"
    return 0
  fi
  echo "fleet: PostgreSQL at ${pg#*@} does not let us in (above): starting a throw-away PostgreSQL cluster"

  FLEET_PG_BIN="$(_fleet_pg_find_bin)"
  if [ -z "$FLEET_PG_BIN" ]; then
    echo "fleet: installing Debian's postgresql for the database tests and the chaos suite"
    local sudo_cmd=""
    [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq postgresql >/dev/null
    FLEET_PG_BIN="$(_fleet_pg_find_bin)"
    if [ -z "$FLEET_PG_BIN" ]; then
      echo "fleet: ERROR: no initdb/pg_ctl under /usr/lib/postgresql/*/bin after installing postgresql" >&2
      return 1
    fi
  fi
  if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
    echo "fleet: ERROR: running as root and there is no 'postgres' user to run initdb as" >&2
    return 1
  fi

  # Under /tmp when root: the postgres user must be able to reach it (TMPDIR may be private).
  if [ "$(id -u)" = 0 ]; then
    FLEET_PG_DIR="$(mktemp -d /tmp/fleet-pg.XXXXXX)"
    chown postgres: "$FLEET_PG_DIR"
  else
    FLEET_PG_DIR="$(mktemp -d "${TMPDIR:-/tmp}/fleet-pg.XXXXXX")"
  fi
  if ! _fleet_pg_as_owner "$FLEET_PG_BIN/initdb" -D "$FLEET_PG_DIR/data" -U postgres \
    --auth=trust -E UTF8 --locale=C.UTF-8 >"$FLEET_PG_DIR/initdb.log" 2>&1; then
    echo "fleet: ERROR: initdb failed:" >&2
    cat "$FLEET_PG_DIR/initdb.log" >&2
    return 1
  fi

  # A free port can be taken between the check and the start: try a few.
  local attempt port
  for attempt in 1 2 3; do
    port="$(_fleet_pg_free_port)"
    if _fleet_pg_as_owner "$FLEET_PG_BIN/pg_ctl" -D "$FLEET_PG_DIR/data" -l "$FLEET_PG_DIR/postgres.log" \
      -w -t 60 -o "-c listen_addresses=127.0.0.1 -p $port -k $FLEET_PG_DIR" start >/dev/null; then
      export BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING="postgresql://postgres@127.0.0.1:$port"
      export FLEET_BENCH_PG="$BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING"
      echo "fleet: throw-away PostgreSQL $("$FLEET_PG_BIN/postgres" --version | awk '{print $3}') at 127.0.0.1:$port" \
        "(cluster in $FLEET_PG_DIR, stopped at exit): database tests run on SQLite AND PostgreSQL"
      return 0
    fi
    echo "fleet: starting PostgreSQL on port $port failed (attempt $attempt)" >&2
  done
  echo "fleet: ERROR: could not start the throw-away PostgreSQL; its log:" >&2
  tail -n 30 "$FLEET_PG_DIR/postgres.log" >&2 || true
  return 1
}

# Drops every database whose name starts with the prefix given ($2) on the server at the URL
# given ($1), connections and all: what a portal run with FLEET_POSTGRES_PREFIX left behind.
fleet_pg_drop_prefixed() {
  (cd "$FLEET_ROOT" && node -e "
    const { Client } = require('pg');
    const [url, prefix] = process.argv.slice(1);
    if (!/^[a-z_][a-z0-9_]*$/.test(prefix)) throw new Error('not a database name prefix: ' + prefix);
    const client = new Client({ connectionString: url, connectionTimeoutMillis: 5000 });
    (async () => {
      await client.connect();
      const { rows } = await client.query(
        'select datname from pg_database where starts_with(datname, \$1)', [prefix]);
      for (const { datname } of rows) {
        await client.query('drop database if exists \"' + datname + '\" with (force)');
      }
      await client.end();
      if (rows.length) process.stdout.write('fleet: dropped ' + rows.length + ' database(s) ' + prefix + '*\n');
    })().catch(e => { process.stderr.write('fleet: ' + e.message + '\n'); process.exit(1); });
  " "$1" "$2")
}

fleet_pg_stop() {
  [ -n "$FLEET_PG_DIR" ] || return 0
  local dir="$FLEET_PG_DIR" pid
  FLEET_PG_DIR=""
  if [ -f "$dir/data/postmaster.pid" ]; then
    pid="$(head -n 1 "$dir/data/postmaster.pid")"
    if ! (FLEET_PG_DIR="$dir" _fleet_pg_as_owner "$FLEET_PG_BIN/pg_ctl" -D "$dir/data" -m immediate -w -t 30 stop >/dev/null 2>&1); then
      # pg_ctl could not stop it: end that one postmaster (its children follow it).
      if [ -n "$pid" ]; then kill -KILL "$pid" 2>/dev/null || true; fi
    fi
  fi
  rm -rf "$dir"
  echo "fleet: throw-away PostgreSQL stopped, $dir removed"
}

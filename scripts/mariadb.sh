#!/usr/bin/env bash
# Make a local MariaDB ready for the integration tests, idempotently, on a possibly fresh
# Debian machine: install it if missing, start it if not running, create the test database and
# user. Progress goes to stderr; stdout gets exactly one line, the URL the tests read:
#
#   TEST_MYSQL_URL=mysql://mailroom:mailroom@127.0.0.1:3306/mailroom_test
#
# so callers can do:  export "$(scripts/mariadb.sh | tail -n1)"
#
# The user may also create/drop databases named mailroom_test* (one per test worker).
# Settings (env): MARIADB_PORT (3306), MARIADB_DB (mailroom_test), MARIADB_USER (mailroom),
# MARIADB_PASSWORD (mailroom).
set -euo pipefail

PORT="${MARIADB_PORT:-3306}"
DB="${MARIADB_DB:-mailroom_test}"
DB_USER="${MARIADB_USER:-mailroom}"
DB_PASS="${MARIADB_PASSWORD:-mailroom}"
LOG="${MARIADB_LOG:-/var/log/mailroom-mariadb.log}"

log() { echo "mariadb.sh: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# Root is needed to install packages, start the server and use the root unix-socket login.
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || die "run as root (or install sudo)"
  SUDO="sudo -n"
fi

# 1. Install (only when missing).
if ! command -v mysqld_safe >/dev/null 2>&1 || ! command -v mariadb-admin >/dev/null 2>&1 \
   || ! command -v mariadb >/dev/null 2>&1; then
  log "installing mariadb-server (apt-get)..."
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q >&2
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    mariadb-server mariadb-client >&2
fi

ping_root() { $SUDO mariadb-admin --user=root ping >/dev/null 2>&1; }

# 2. Start (only when not already answering).
if ping_root; then
  log "MariaDB already running"
else
  # The package's postinst normally initialises the data directory; do it if it did not
  # (e.g. an image built with policy-rc.d forbidding service actions).
  if [ ! -d /var/lib/mysql/mysql ]; then
    log "initialising data directory /var/lib/mysql"
    $SUDO mariadb-install-db --user=mysql --datadir=/var/lib/mysql >&2
  fi
  $SUDO mkdir -p /run/mysqld
  $SUDO chown mysql:mysql /run/mysqld
  log "starting mysqld_safe on 127.0.0.1:${PORT} (log: ${LOG})"
  # Fully detached (own session, no inherited stdio) so it outlives this script and does not
  # hold the caller's pipes open. Plain mariadbd refuses to run as root; mysqld_safe drops to
  # the mysql user.
  $SUDO setsid nohup mysqld_safe --bind-address=127.0.0.1 --port="${PORT}" \
    </dev/null >>"${LOG}" 2>&1 &
  for _ in $(seq 1 60); do
    if ping_root; then break; fi
    sleep 1
  done
  ping_root || { tail -n 50 "${LOG}" >&2 || true; die "MariaDB did not start within 60 s"; }
  log "MariaDB is up"
fi

# 3. Database and user (idempotent: IF NOT EXISTS, and the password is reset every time).
log "creating database ${DB} and user ${DB_USER}@127.0.0.1 / ${DB_USER}@localhost"
# In GRANT the database name is a pattern: \_ is a literal underscore, % any suffix (incl. none).
DB_PATTERN="${DB//_/\\_}%"
$SUDO mariadb --user=root <<SQL
CREATE DATABASE IF NOT EXISTS \`${DB}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;
CREATE USER IF NOT EXISTS '${DB_USER}'@'127.0.0.1' IDENTIFIED BY '${DB_PASS}';
CREATE USER IF NOT EXISTS '${DB_USER}'@'localhost' IDENTIFIED BY '${DB_PASS}';
ALTER USER '${DB_USER}'@'127.0.0.1' IDENTIFIED BY '${DB_PASS}';
ALTER USER '${DB_USER}'@'localhost' IDENTIFIED BY '${DB_PASS}';
GRANT ALL PRIVILEGES ON \`${DB_PATTERN}\`.* TO '${DB_USER}'@'127.0.0.1';
GRANT ALL PRIVILEGES ON \`${DB_PATTERN}\`.* TO '${DB_USER}'@'localhost';
FLUSH PRIVILEGES;
SQL

# 4. Prove the URL works over TCP exactly as the tests will use it.
mariadb --host=127.0.0.1 --port="${PORT}" --user="${DB_USER}" --password="${DB_PASS}" \
  --database="${DB}" --batch --skip-column-names -e 'SELECT 1' >/dev/null \
  || die "cannot connect as ${DB_USER}@127.0.0.1:${PORT}/${DB}"
log "ready"

echo "TEST_MYSQL_URL=mysql://${DB_USER}:${DB_PASS}@127.0.0.1:${PORT}/${DB}"

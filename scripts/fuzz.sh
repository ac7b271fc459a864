#!/usr/bin/env bash
# Fuzz the running server against its contract with Schemathesis (DESIGN.md §1: every response
# must match the contract; no 5xx). Self-contained: installs Schemathesis into ./.venv, starts a
# throwaway server (own port, own SQLite database and data dir under a temp dir, rate limit out
# of the way), signs up its first user for an owner's access token, runs every check, stops the server.
#
#   scripts/fuzz.sh [extra schemathesis run options...]
#   e.g. scripts/fuzz.sh --include-operation-id createMessage --max-examples 200
#
# Env: FUZZ_MAX_EXAMPLES (50 per operation), FUZZ_WORKERS (1), FUZZ_SEED (random),
#      FUZZ_TIMEOUT (hard cap in seconds on the Schemathesis run, 600), FUZZ_PORT (a free one),
#      LOG_LEVEL (server log level, warn). Reports and the server log go to build/fuzz/.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"

SCHEMATHESIS_VERSION=4.32.5
VENV="$ROOT/.venv"
REPORT_DIR="$ROOT/build/fuzz"
log() { echo "fuzz: $*" >&2; }

# --- 1. Schemathesis in a virtualenv (reinstalled only when missing or another version). -------
if ! "$VENV/bin/schemathesis" --version 2>/dev/null | grep -qF "version $SCHEMATHESIS_VERSION"; then
  log "installing schemathesis==$SCHEMATHESIS_VERSION into $VENV"
  if ! python3 -m venv "$VENV" >/dev/null 2>&1; then
    # Debian's python3 ships venv/ensurepip separately.
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
      DEBIAN_FRONTEND=noninteractive apt-get update -q >&2
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-venv >&2
      rm -rf "$VENV"
      python3 -m venv "$VENV"
    else
      log "ERROR: 'python3 -m venv' failed; install python3-venv"; exit 1
    fi
  fi
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION"
fi
"$VENV/bin/schemathesis" --version >&2

# --- 2. A throwaway server. -------------------------------------------------------------------
TMP="$(mktemp -d -t mailroom-fuzz.XXXXXX)"
mkdir -p "$TMP/data" "$REPORT_DIR"
PORT="${FUZZ_PORT:-$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')}"
BASE="http://127.0.0.1:$PORT"
# Webhook and attachment URLs the fuzzer invents must never be fetched: private targets stay
# refused (the default, pinned here against a developer's environment), every name resolves to
# NXDOMAIN, and a public address that never answers gives up after a second.
export HOST=127.0.0.1 PORT DATABASE_URL="sqlite:$TMP/mailroom.db" DATA_DIR="$TMP/data" \
  RATE_LIMIT_REQUESTS=1000000 LOG_LEVEL="${LOG_LEVEL:-warn}" WEBHOOK_ALLOW_PRIVATE_TARGETS=false \
  ATTACHMENT_FETCH_ALLOW_PRIVATE_TARGETS=false ATTACHMENT_FETCH_TIMEOUT_MS=1000
unset SECRET_KEY
# When the inbound SMTP role lands (DESIGN.md §4: port 2525 by default), give it a free port here
# too, or a developer's `make run` will make the fuzz server fail to start.
TSX="$ROOT/node_modules/.bin/tsx"
SERVER_PID=""
DNS_PID=""

cleanup() {
  status=$?
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    # The server runs in its own process group (setsid): stop tsx and its node child together.
    kill -TERM -- "-$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.2; done
    kill -KILL -- "-$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  [ -n "$DNS_PID" ] && kill "$DNS_PID" 2>/dev/null || true
  [ -f "$TMP/server.log" ] && cp "$TMP/server.log" "$REPORT_DIR/server.log"
  rm -rf "$TMP"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A resolver of our own (scripts/fuzz-dns.ts): domain verification and live mail get real, quick
# NXDOMAIN answers and never reach the machine's resolver.
"$TSX" scripts/fuzz-dns.ts >"$TMP/dns.out" 2>&1 &
DNS_PID=$!
for _ in $(seq 1 100); do [ -s "$TMP/dns.out" ] && break; sleep 0.1; done
DNS_SERVERS="$(head -n 1 "$TMP/dns.out")"
case "$DNS_SERVERS" in
  127.0.0.1:*) export DNS_SERVERS ;;
  *) cat "$TMP/dns.out" >&2; log "ERROR: the loopback DNS server did not start"; exit 1 ;;
esac

log "migrating ($DATABASE_URL)"
"$ROOT/bin/mailroom-server" migrate >"$TMP/migrate.log" 2>&1 || { cat "$TMP/migrate.log" >&2; log "ERROR: migrate failed"; exit 1; }

log "starting the server on $BASE"
# The inbound SMTP server on a free port: 2525 may be a developer's `make run`.
INBOUND_SMTP_PORT=0 SUBMISSION_SMTP_PORT=0 setsid "$ROOT/bin/mailroom-server" serve </dev/null >"$TMP/server.log" 2>&1 &
SERVER_PID=$!
ready=""
for _ in $(seq 1 120); do
  if ! kill -0 "$SERVER_PID" 2>/dev/null; then break; fi
  if node -e 'fetch(process.argv[1]).then(r => process.exit(r.status === 200 ? 0 : 1), () => process.exit(1))' "$BASE/ready"; then
    ready=1; break
  fi
  sleep 0.5
done
if [ -z "$ready" ]; then
  tail -n 80 "$TMP/server.log" >&2
  log "ERROR: the server did not answer 200 on $BASE/ready within 60 s"
  exit 1
fi

# The fuzzer calls as the owner of a workspace, with a user access token: an owner may call every
# operation, the Accounts ones included (an API key would get 403 from those and leave them
# untested). The token lives 15 minutes, far longer than the run.
KEY="$(node "$ROOT/scripts/user-token.mjs" "$BASE" owner@fuzz.example "fuzz owner password")" \
  || { tail -n 40 "$TMP/server.log" >&2; log "ERROR: could not sign up for a user access token"; exit 1; }

# --- 3. Schemathesis. ---------------------------------------------------------------------------
# One hook. Schemathesis draws Idempotency-Key values from the header's schema, so the same value
# (the spec's example, or a shrunk "0") is sent with many different bodies, and the server then
# rightly answers 422 idempotency_key_reused (the contract's documented behaviour), which the
# positive_data_acceptance check reports as "valid request rejected". The hook makes every
# well-formed key of a positive test case unique per request (still well-formed; malformed keys
# and negative cases are left alone so that validation stays under test).
mkdir -p "$TMP/hooks"
cat >"$TMP/hooks/mailroom_fuzz_hooks.py" <<'PY'
import re
import uuid

import schemathesis

# The contract's pattern: a bare token, or an RFC 8941 quoted string.
_BARE = re.compile(r"[\x21\x23-\x7e][\x21-\x7e]{0,254}")
_QUOTED = re.compile(r"\"[\x20-\x7e]{1,255}\"")


@schemathesis.hook
def before_call(ctx, case, kwargs):
    # Positive cases only: editing a negative case makes Schemathesis revalidate it, flip it to
    # positive and re-add the -H Authorization header to e.g. a "missing Authorization" case
    # (a false "ST203 missing required header accepted"). A negative case that reuses a key is
    # still rejected, which is all its checks ask.
    meta = case.meta
    if meta is not None and meta.generation.mode.is_negative:
        return
    headers = case.headers or {}
    for name in list(headers):
        value = headers[name]
        if name.lower() != "idempotency-key" or not isinstance(value, str):
            continue
        if _QUOTED.fullmatch(value):
            headers[name] = '"' + (value[1:-1][:200] + "-" + uuid.uuid4().hex)[:255] + '"'
        elif _BARE.fullmatch(value):
            headers[name] = (value[:200] + "-" + uuid.uuid4().hex)[:255]
PY
export PYTHONPATH="$TMP/hooks${PYTHONPATH:+:$PYTHONPATH}" SCHEMATHESIS_HOOKS=mailroom_fuzz_hooks

# The spec is the one the server serves (so what is fuzzed is what clients are told); requests go
# to this server whatever `servers:` says. All phases (examples, coverage, fuzzing, stateful),
# all checks. --generation-database none: no .hypothesis/ directory in the repo.
# --output-sanitize false: failures show the real headers (Idempotency-Key values matter for
# reproducing them); the only secret is this throwaway server's user token.
# One worker: with several threads, Python 3.11's ast module intermittently fails inside
# Hypothesis ("AST constructor recursion depth mismatch", reported as a Runtime Error), and the
# whole run takes well under a minute anyway.
args=(
  --config-file "$ROOT/scripts/schemathesis.toml"
  run "$BASE/v1/openapi.json"
  --url "$BASE"
  -H "Authorization: Bearer $KEY"
  # Every check (Schemathesis 4 runs them all by default; per-operation exceptions in the toml).
  # use_after_free (ST301) expects a DELETEd resource to be gone. DELETE /v1/api-keys/{id}
  # revokes: the key stops authenticating at once but stays readable with its revoked_at, as
  # the workspace's audit trail of its credentials (docs/api-keys.md). Documented, not a leak.
  --exclude-checks use_after_free
  --max-examples "${FUZZ_MAX_EXAMPLES:-50}"
  --workers "${FUZZ_WORKERS:-1}"
  --request-timeout 30
  --generation-database none
  --suppress-health-check too_slow,filter_too_much
  --report junit --report-junit-path "$REPORT_DIR/junit.xml"
  --output-sanitize false
  --no-color
)
[ -n "${FUZZ_SEED:-}" ] && args+=(--seed "$FUZZ_SEED")
log "schemathesis ${args[*]/Bearer $KEY/Bearer <user token>} $*"
status=0
# Run from build/fuzz: Schemathesis and Hypothesis keep their caches (.schemathesis/, .hypothesis/)
# in the working directory, and they belong with the reports, not in the repository root.
run_schemathesis() {
  (cd "$REPORT_DIR" && timeout --kill-after=10 "${FUZZ_TIMEOUT:-600}" "$VENV/bin/schemathesis" "${args[@]}" "$@")
}
if [ -t 1 ]; then
  run_schemathesis "$@" || status=$?
else
  # Not a terminal (CI, a pipe): Schemathesis still redraws its progress bars, hundreds of lines
  # of them, which would bury everything printed before. Keep the whole output in a file and
  # print its report sections (failures, warnings, summary) — or its tail if it died before them.
  run_schemathesis "$@" >"$REPORT_DIR/schemathesis.log" 2>&1 || status=$?
  # Its closing banner ("==== 2 warnings in 47.74s ====") is left out: it has the shape of a
  # pytest closing line, so log readers took it for a pytest run that executed no test. The
  # counts are repeated below as "fuzz: N generated, N passed, N skipped".
  if grep -qE '^=+ [A-Z ]+ =+$' "$REPORT_DIR/schemathesis.log"; then
    sed -n '/^=\+ [A-Z ]\+ =\+$/,$p' "$REPORT_DIR/schemathesis.log"
  else
    tail -n 100 "$REPORT_DIR/schemathesis.log"
  fi | grep -vE '^=+ .* in [0-9.]+s =+$' || true
  log "full Schemathesis output in build/fuzz/schemathesis.log"
fi

if ! kill -0 "$SERVER_PID" 2>/dev/null; then
  tail -n 80 "$TMP/server.log" >&2
  log "ERROR: the server died during the run (log above, full copy in build/fuzz/server.log)"
  [ "$status" -ne 0 ] || status=1
fi
case "$status" in
  0) log "OK: no failures" ;;
  124|137) log "FAILED: schemathesis exceeded FUZZ_TIMEOUT=${FUZZ_TIMEOUT:-600}s" ;;
  *) log "FAILED (exit $status): see the failures above; junit report in build/fuzz/junit.xml, server log in build/fuzz/server.log" ;;
esac
exit "$status"

#!/usr/bin/env bash
# Lint the contract with Redocly (rules in redocly.yaml) and allow zero warnings. Redocly exits 0
# when there are only warnings, so its report is searched for them too. On Node 20 it prints a
# boxed "Deprecation warning" banner (lines drawn with ║/╔/╚): that banner is dropped and never
# counts as a lint warning.
set -euo pipefail
cd "$(dirname "$0")/.."

SPEC="${1:-openapi/v1.yaml}"
OUT="$(mktemp)"
trap 'rm -f "$OUT"' EXIT

status=0
node_modules/.bin/redocly lint "$SPEC" --max-problems 1000 >"$OUT" 2>&1 || status=$?
# Drop the Node 20 banner box and the blank lines around it.
grep -v -E '[║╔╚═]' "$OUT" | cat -s | sed '/./,$!d' || true

if [ "$status" -ne 0 ]; then
  echo "lint-openapi: FAILED: redocly lint reported errors (exit $status)." >&2
  exit "$status"
fi
if grep -v -E '[║╔╚═]' "$OUT" | grep -q -i 'warning'; then
  echo "lint-openapi: FAILED: redocly lint reported warnings; the contract must lint with zero warnings." >&2
  exit 1
fi
echo "lint-openapi: OK (no errors, no warnings)"

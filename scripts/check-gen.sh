#!/usr/bin/env bash
# Fail when generated/v1.d.ts is not what `make gen` (= `npm run gen`, whose flags live in
# package.json; config and output path in redocly.yaml) would produce from openapi/v1.yaml now.
# The generator runs in a scratch copy of the inputs, so the working tree is never touched, and
# the drift is shown as a diff.
set -euo pipefail
cd "$(dirname "$0")/.."

TARGET=generated/v1.d.ts
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

if [ ! -f "$TARGET" ]; then
  echo "check-gen: FAILED: $TARGET is missing. Run 'make gen' and commit it." >&2
  exit 1
fi

cp -R openapi redocly.yaml package.json "$TMP/"
mkdir -p "$TMP/generated"
ln -s "$PWD/node_modules" "$TMP/node_modules"
if ! (cd "$TMP" && npm run --silent gen) >"$TMP/gen.log" 2>&1; then
  cat "$TMP/gen.log" >&2
  echo "check-gen: FAILED: the generator itself failed (output above)." >&2
  exit 1
fi
if [ ! -f "$TMP/$TARGET" ]; then
  cat "$TMP/gen.log" >&2
  echo "check-gen: FAILED: 'npm run gen' did not write $TARGET (is its output still set in redocly.yaml?)." >&2
  exit 1
fi

if ! diff -u --label "$TARGET (committed)" --label "$TARGET (from openapi/v1.yaml)" "$TARGET" "$TMP/$TARGET" >"$TMP/diff"; then
  head -n 200 "$TMP/diff" >&2
  lines=$(wc -l <"$TMP/diff")
  [ "$lines" -le 200 ] || echo "... ($lines diff lines in all)" >&2
  echo "" >&2
  echo "check-gen: FAILED: $TARGET has drifted from openapi/v1.yaml." >&2
  echo "           Run 'make gen' and commit generated/v1.d.ts (never edit it by hand)." >&2
  exit 1
fi
echo "check-gen: OK ($TARGET matches openapi/v1.yaml)"

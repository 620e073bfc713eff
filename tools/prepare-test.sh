#!/usr/bin/env bash
# The steps before `npm test` runs tap, at the same time: the type check and compile into build/
# (npm run build:test), the linter and formatter check, and `tap build` (tap's plugin set, so no
# test process loads the TypeScript plugin a fresh `npm ci` leaves built in). They share no
# files, and each is mostly one thread: side by side on two cores they take the time of the
# longest. Each one's output is shown in full if it fails; the script fails if any fails.
set -uo pipefail
cd "$(dirname "$0")/.."
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

declare -A pids
npm run --silent build:test > "$logs/build" 2>&1 &
pids[build]=$!
npm run --silent lint > "$logs/lint" 2>&1 &
pids[lint]=$!
npx tap build > "$logs/tap-build" 2>&1 &
pids[tap-build]=$!

failed=0
for step in build lint tap-build; do
  if wait "${pids[$step]}"; then
    echo "$step: ok"
  else
    echo "$step: failed" >&2
    cat "$logs/$step" >&2
    failed=1
  fi
done
exit "$failed"

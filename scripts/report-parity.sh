#!/usr/bin/env bash
# Behaviour unchanged? Runs ablation configs at a base revision and at this checkout under a frozen clock and
# compares the report folders, stdout and stderr byte for byte (timings read 0; the commit and the checkout's
# path in the manifest are masked). Exit 0 when identical, 1 with the diff otherwise.
#   scripts/report-parity.sh <base-rev> [config ...]     (default: example rrf-vs-cc locomo nfcorpus-bm25)
set -euo pipefail
root=$(git rev-parse --show-toplevel)
base=${1:?usage: scripts/report-parity.sh <base-rev> [config ...]}
shift
configs=("$@")
[ ${#configs[@]} -gt 0 ] || configs=(example rrf-vs-cc locomo nfcorpus-bm25)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The configs read ../../shared from configs/: both checkouts sit in $tmp beside a link to it.
[ -d "$root/../shared" ] && ln -s "$(cd "$root/../shared" && pwd)" "$tmp/shared"
mkdir "$tmp/base" "$tmp/head"
git -C "$root" archive "$base" | tar -x -C "$tmp/base"
git -C "$root" ls-files -z --cached --others --exclude-standard | (cd "$root" && xargs -0 tar -c) | tar -x -C "$tmp/head"
for side in base head; do
  ln -s "$root/node_modules" "$tmp/$side/node_modules"
  (cd "$tmp/$side" && npx tsc -p tsconfig.build.json)
  # The compiled statistics and PPR kernels (ADR 0028), where the revision has them.
  if grep -q '"build-kernels"' "$tmp/$side/package.json"; then (cd "$tmp/$side" && npm run --silent build-kernels >/dev/null); fi
done
run() { # side
  local side=$1 out="$tmp/out-$1"
  mkdir -p "$out"
  for c in "${configs[@]}"; do
    rm -rf "$tmp/work"
    set +e
    (cd "$tmp/$side" && node --import "$root/scripts/frozen-clock.mjs" dist/harness/cli/bin.js ablate --config "configs/$c.yaml" \
      --output "$tmp/work/out" --cache "$tmp/work/cache" >"$out/$c.stdout" 2>"$out/$c.stderr")
    echo "exit $?" >>"$out/$c.stdout"
    set -e
    [ -d "$tmp/work/out" ] && mv "$tmp/work/out" "$out/$c"
  done
  find "$out" -name manifest.json -exec sed -i -E \
    's/"(sha|commit)": "[0-9a-f]{40}"/"\1": "<git>"/; s/"dirty": (true|false)/"dirty": "<dirty>"/; s|"configFile": ".*/configs/|"configFile": "<checkout>/configs/|' {} +
}
run base
run head
if diff -r "$tmp/out-base" "$tmp/out-head"; then
  echo "report-parity: ${configs[*]}: identical at $base and this checkout"
else
  echo "report-parity: the folders differ (above)" >&2
  exit 1
fi

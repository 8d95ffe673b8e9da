#!/bin/sh
# bench/pinned.sh [--commit REV] [bench arguments...]: `pnpm bench` run from a copy of one commit (HEAD by default)
# instead of the checkout. Several engineers edit this checkout at once; a benchmark of their half-written files
# measures nothing (or fails), and a figure should name the commit it measured. The copy is `git archive` of the
# commit, with each package's node_modules copied as its (relative) links and the root's linked, as the soak does.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
rev=HEAD
if [ "${1:-}" = "--commit" ]; then rev=$2; shift 2; fi
sha=$(git -C "$root" rev-parse --short=12 "$rev")
dir=${BENCH_PINNED_DIR:-/tmp/holdfast-bench-$sha}
if [ ! -f "$dir/.ready" ]; then
  rm -rf "$dir"
  mkdir -p "$dir"
  git -C "$root" archive "$sha" | tar -x -C "$dir"
  ln -s "$root/node_modules" "$dir/node_modules"
  for nm in "$root"/apps/*/node_modules "$root"/packages/*/node_modules "$root"/bench/node_modules "$root"/e2e/node_modules; do
    [ -d "$nm" ] || continue
    rel=${nm#"$root"/}
    [ -d "$dir/$(dirname "$rel")" ] && cp -a "$nm" "$dir/$rel"
  done
  # The db package's `generate` script, run directly (pnpm refuses a workspace whose node_modules is a link).
  (cd "$dir/packages/db" && PRISMA_SCHEMA_ENGINE_BINARY=/bin/true PRISMA_HIDE_UPDATE_MESSAGE=1 ./node_modules/.bin/prisma generate --schema ../../prisma/schema.prisma >/dev/null)
  touch "$dir/.ready"
fi
echo "bench: running commit $sha from $dir"
cd "$dir"
exec node --import tsx bench/src/main.ts "$@"

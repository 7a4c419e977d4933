#!/usr/bin/env bash
# Fails when a package that must stay plain Go links Beam: the algorithm
# packages (hashing, text, features, similarity, clustering, shuffle), the
# settings, the packages that read a finished output (views) and the table
# and file readers they use. Only transforms, pipelines, io/beamfs and the
# commands may import github.com/apache/beam.
set -euo pipefail
cd "$(dirname "$0")/.."
bad=0
for pkg in $(go list ./hashing/... ./text/... ./features/... ./similarity/... ./clustering/... ./shuffle/... ./views/... ./settings/... \
  ./io/store ./io/tables ./io/crawl ./io/output ./io/objstore ./io/export); do
  if go list -deps "$pkg" | grep -q '^github.com/apache/beam'; then
    echo "$pkg links Beam:"
    go list -deps "$pkg" | grep '^github.com/apache/beam' | head -3 | sed 's/^/  /'
    bad=1
  fi
done
[ $bad -eq 0 ] && echo "no Beam in the algorithm, settings and view packages"
exit $bad

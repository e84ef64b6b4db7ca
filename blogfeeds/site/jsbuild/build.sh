#!/usr/bin/env bash
# Rebuild ../assets/vendor/graph-libs.min.js and its licence file from the pinned npm packages
# of package.json (versions of their dependencies pinned by package-lock.json). Needs node and
# npm; the site itself needs neither. Run after changing a version; commit both outputs.
set -euo pipefail
cd "$(dirname "$0")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp package.json package-lock.json entry.js "$work"/
(cd "$work" && npm ci --no-audit --no-fund --ignore-scripts=false >/dev/null \
  && ./node_modules/.bin/esbuild entry.js --bundle --minify --format=iife --target=es2019 \
       --legal-comments=none --metafile=meta.json --outfile=out.js)
cp "$work/out.js" ../assets/vendor/graph-libs.min.js
{
  echo "graph-libs.min.js bundles these npm packages (esbuild, minified); their licences follow."
  node -e '
    const m = require(process.argv[1] + "/meta.json"); const s = new Set();
    for (const k of Object.keys(m.inputs)) { const p = k.split("node_modules/")[1];
      if (p) { const q = p.split("/"); s.add(q[0].startsWith("@") ? q[0] + "/" + q[1] : q[0]); } }
    console.log([...s].sort().join("\n"));' "$work" | while read -r pkg; do
    dir="$work/node_modules/$pkg"
    version=$(node -p "require('$dir/package.json').version")
    licence=$(ls "$dir" | grep -i -m1 '^licen[cs]e')
    printf '\n==== %s %s (%s) ====\n\n' "$pkg" "$version" "$(node -p "require('$dir/package.json').license")"
    cat "$dir/$licence"
  done
} > ../assets/vendor/LICENSES.txt

#!/bin/sh
# What `chartshare check --base` says about a change before it merges, on a throwaway copy of this example.
#
# The first commit is the example as it is. The second retires dev-shoong-order (its Application and its
# folder are removed) and moves the Namespace's owner from dev-shoong-notification to dev-shoong-kitchen.
# The live dump says dev-shoong-order synced the Namespace last and holds its tracking id, without
# Prune=false or Delete=false on it: deleting dev-shoong-order cascades to the Namespace. The script runs
# check against the live dump as it is, then as it is after the fix the report prints (the live
# Namespace annotated), and without --live (the copy at the base revision decides).
#
# Usage: examples/shoong-delivery/lifecycle-demo.sh   (from the repository root; CHARTSHARE=command to run)
set -eu
chartshare=${CHARTSHARE:-chartshare}
here=$(cd "$(dirname "$0")" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/examples"
cp -R "$here" "$scratch/examples/shoong-delivery"
rm -f "$scratch/examples/shoong-delivery/lifecycle-demo.sh"
cd "$scratch"
git init -q -b main
git add -A
git -c user.name=demo -c user.email=demo@example.com commit -q -m "shoong as it runs"
for rules in examples/shoong-delivery/apps/dev/*/chartshare.yaml; do
  sed 's/owner: dev-shoong-notification/owner: dev-shoong-kitchen/' "$rules" >"$rules.new" && mv "$rules.new" "$rules"
done
git rm -q -r -f examples/shoong-delivery/argocd/dev-shoong-order.yaml examples/shoong-delivery/apps/dev/order
git -c user.name=demo -c user.email=demo@example.com commit -q -a -m "retire order; kitchen owns the Namespace"

live=examples/shoong-delivery/live/dev-cluster.yaml
fixed=examples/shoong-delivery/live/dev-cluster-fixed.yaml  # (not committed) what `kubectl get` prints after the fix's kubectl annotate
sed 's|^\(        \)argocd.argoproj.io/tracking-id: dev-shoong-order:/Namespace:shoong/shoong$|&\
\1argocd.argoproj.io/sync-options: Prune=false,Delete=false|' "$live" >"$fixed"

run() {
  echo "\$ chartshare check examples/shoong-delivery/argocd --base HEAD~1${*:+ $*}"
  status=0
  "$chartshare" check examples/shoong-delivery/argocd --base HEAD~1 "$@" || status=$?
  echo "(exit $status)"
  echo
}
echo "## before the fix: the live Namespace as it is"
run --live "$live"
echo "## after the fix: kubectl annotate namespace/shoong argocd.argoproj.io/sync-options=Prune=false,Delete=false --overwrite"
run --live "$fixed"
echo "## without --live: the Namespace's copy at the base revision decides"
run

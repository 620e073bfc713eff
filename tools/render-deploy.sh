#!/usr/bin/env bash
# `npm run deploy:render`: writes deploy/cert-csi.yaml, the whole install in one file
# (kubectl apply -f deploy/cert-csi.yaml), from deploy/kustomization.yaml.
# test/deploy/rendered-install.test.ts fails while the file differs from kubectl kustomize.
set -euo pipefail
cd "$(dirname "$0")/.."
out=deploy/cert-csi.yaml
{
  echo '# cert-csi: the whole install in one file. Written by `npm run deploy:render`'
  echo '# (kubectl kustomize deploy/) from deploy/manifests/: edit those, not this.'
  kubectl kustomize deploy/
} > "$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out"

#!/usr/bin/env bash
# Writes <out>/store/kubernetes/client-node.bundle.cjs: @kubernetes/client-node (the pinned
# version in node_modules) and its dependencies as one CommonJS file, which
# src/store/kubernetes/client-node.ts loads. Why: the package is about 1,000 modules; Node 20
# resolves, reads and compiles each in every process that starts a Kubernetes client (the
# controller, the node plugin in Kubernetes mode, each cluster test). One file loads in about a
# third of the CPU (250-350 ms against 750-1,100 ms, measured on Node 20.20, 2 cores).
# Usage: tools/bundle-client-node.sh <out dir: dist or build/src>
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:?usage: tools/bundle-client-node.sh <out dir>}/store/kubernetes/client-node.bundle.cjs"
echo "export { ApiException, ApisApi, CoreV1Api, CustomObjectsApi, KubeConfig, Observable, Watch } from '@kubernetes/client-node';" |
  npx --no-install esbuild --bundle --platform=node --format=cjs --target=node20 \
    --log-level=warning --legal-comments=eof --outfile="$out"

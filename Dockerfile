# cert-csi: one image for the node plugin (DaemonSet) and the controller (Deployment).
#
#   docker build -t ghcr.io/cert-csi/cert-csi:0.1.0 .
#
# Node 24 is an even, long-term-support line; the code needs >= 20.19 (package.json
# engines). Pin a digest (node:24-bookworm-slim@sha256:...) for reproducible builds.

# Compile TypeScript with the full (dev) dependency set.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# No install scripts: the compiler needs none, and none of them should run with
# access to the source tree.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

# Production dependencies only, installed from the lockfile in a clean tree so no dev
# dependency (tsc, tap, biome) reaches the runtime image.
FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

FROM node:24-bookworm-slim
# mount and umount make the node plugin's tmpfs and read-only bind mounts (package
# mount); util-linux brings the rest of the tools an operator debugging mounts expects.
RUN apt-get update \
  && apt-get install -y --no-install-recommends mount util-linux \
  && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production
WORKDIR /app
# package.json is read at run time for the version; proto/ holds csi.proto, loaded at
# start. Both are resolved relative to dist/, so the layout must stay /app/{dist,proto}.
COPY package.json ./
COPY proto ./proto
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# No USER: the node plugin must run as root (tmpfs and bind mounts, chown to the pod's
# fsGroup). The controller Deployment sets runAsUser 65532 and runAsNonRoot itself.
ENTRYPOINT ["node", "/app/dist/cli/main.js"]
CMD ["--help"]
LABEL org.opencontainers.image.title="cert-csi" \
  org.opencontainers.image.description="CSI node plugin giving every pod its own X.509 certificate" \
  org.opencontainers.image.licenses="Apache-2.0"

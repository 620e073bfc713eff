# cert-csi: one image for the node plugin (DaemonSet), the controller and the webhook
# (Deployments).
#
#   podman build -t ghcr.io/cert-csi/cert-csi:0.1.0 .     (or docker build)
#
# The base images are build arguments, so the image builds where no registry is reachable
# (test/image/base-image.sh makes Debian bases locally and the smoke test passes them):
#
#   podman build --build-arg BUILD_IMAGE=<image with node and npm> \
#     --build-arg RUNTIME_IMAGE=<image with node and mount> -t cert-csi:dev .
#
# Node 20 by default: the major the test suite runs on in CI (.ci/run), so the image runs
# the code on the runtime it was tested on; package.json engines needs >= 20.19. Moving the
# image to a newer LTS line means moving CI to it first. Pin digests
# (node:20-bookworm-slim@sha256:...) for reproducible builds.
ARG BUILD_IMAGE=node:20-bookworm-slim
ARG RUNTIME_IMAGE=node:20-bookworm-slim

# Compile TypeScript with the full (dev) dependency set. This stage is never shipped.
FROM ${BUILD_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# No install scripts: the compiler needs none, and none of them should run with
# access to the source tree.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY tools/bundle-client-node.sh ./tools/
COPY src ./src
RUN npm run build

# Production dependencies only, installed from the lockfile in a clean tree so no dev
# dependency (tsc, tap, biome) reaches the runtime image.
FROM ${BUILD_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

FROM ${RUNTIME_IMAGE}
# Bind mode (the node plugin as root) runs mount and umount for its tmpfs and read-only
# bind mounts: fail the build here, not at the first publish, on a base without them.
RUN mount --version && umount --version
ENV NODE_ENV=production
WORKDIR /app
# package.json is read at run time for the version; proto/ holds csi.proto, loaded at
# start. Both are resolved relative to dist/, so the layout must stay /app/{dist,proto}.
COPY package.json ./
COPY proto ./proto
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# Non-root by default: the controller and the webhook need no privilege. The node plugin
# must run as root (tmpfs and bind mounts, chown to the pod's fsGroup): its DaemonSet sets
# runAsUser 0 and privileged, as `podman run --user 0 --privileged` does.
USER 65532:65532
ENTRYPOINT ["node", "/app/dist/cli/main.js"]
CMD ["--help"]
# Set by the build (--build-arg VERSION=...); the default is package.json's version.
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="cert-csi" \
  org.opencontainers.image.description="CSI node plugin giving every pod its own X.509 certificate" \
  org.opencontainers.image.source="https://github.com/cert-csi/cert-csi" \
  org.opencontainers.image.version="${VERSION}" \
  org.opencontainers.image.licenses="Apache-2.0"

# syntax=docker/dockerfile:1
# One image for both runnable apps (auth-server, demo-mcp-server); see docker-compose.yml.

FROM node:22-bookworm-slim AS build
WORKDIR /app
# Toolchain in case better-sqlite3 has no prebuilt binary for this platform.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
# Manifests first so the dependency layer is cached until they change.
COPY package.json package-lock.json ./
COPY packages/protocol/package.json packages/protocol/
COPY packages/authorization-server/package.json packages/authorization-server/
COPY packages/resource-server/package.json packages/resource-server/
COPY packages/client/package.json packages/client/
COPY packages/cli/package.json packages/cli/
COPY packages/testing/package.json packages/testing/
COPY test-utils/package.json test-utils/
COPY apps/auth-server/package.json apps/auth-server/
COPY apps/demo-mcp-server/package.json apps/demo-mcp-server/
COPY test/package.json test/
COPY bench/package.json bench/
COPY examples/protected-mcp-server/package.json examples/protected-mcp-server/
RUN npm ci
COPY tsconfig.base.json tsconfig.json ./
COPY packages packages
COPY apps apps
# a workspace of shared test helpers: `tsc -b` builds it with the rest (never in the runtime image)
COPY test-utils test-utils
RUN npm run build \
 && npm prune --omit=dev

FROM node:22-bookworm-slim AS runtime
ENV NODE_ENV=production \
    DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/packages packages
COPY --from=build /app/apps apps
# the round-robin balancer of the scaled-out compose topology (no dependencies)
COPY scripts/round-robin-proxy.mjs scripts/
# SQLite (used when DATABASE_URL is unset) lives in /data: mount a volume there.
RUN mkdir -p /data && chown node:node /data
VOLUME ["/data"]
USER node
EXPOSE 9000 3000
CMD ["node", "apps/auth-server/dist/main.js"]

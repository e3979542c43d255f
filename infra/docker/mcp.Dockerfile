# syntax=docker/dockerfile:1
# apps/mcp: MCP (POST/GET/DELETE /mcp) for pk_ keys and po_ tokens, over the cell's internal invoke.
# Build context: the repository root.
#   docker build -f infra/docker/mcp.Dockerfile -t prim/mcp:0.1.0 .

# Node 26, the patch release the repository pins (root package.json's devDependency `node`).
FROM node:26.10.0-bookworm-slim AS build
WORKDIR /app
ENV CI=true TURBO_TELEMETRY_DISABLED=1 DO_NOT_TRACK=1 NEXT_TELEMETRY_DISABLED=1
# Every workspace's manifest (npm ci needs all of them), then the slow install in its own layer.
COPY package.json package-lock.json ./
COPY apps/api/package.json apps/api/
COPY apps/mcp/package.json apps/mcp/
COPY apps/web/package.json apps/web/
COPY packages/billing/package.json packages/billing/
COPY packages/cells/package.json packages/cells/
COPY packages/cli/package.json packages/cli/
COPY packages/db/package.json packages/db/
COPY packages/engine/package.json packages/engine/
COPY packages/http/package.json packages/http/
COPY packages/mail/package.json packages/mail/
COPY packages/mcp/package.json packages/mcp/
COPY packages/sdk/package.json packages/sdk/
COPY packages/testkit/package.json packages/testkit/
COPY packages/wire/package.json packages/wire/
# --ignore-scripts: the root `prepare` would build every workspace, and no dependency needs its
# install script here: better-sqlite3 13 ships its binaries (Node-API; linux x64 and arm64) in its
# package. The `node` devDependency's own install script, which fetches its Node binary (~150 MB),
# does not run either: it stays a 16 KB stub with no bin, so the image's node is the one on PATH,
# and `npm prune --omit=dev` below drops it.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY . .
# Build this app and the packages it uses; then keep production dependencies only, no caches.
RUN npx turbo run build --filter=@prim/mcp-server... \
  && npm prune --omit=dev --ignore-scripts --no-audit --no-fund \
  && rm -rf .turbo node_modules/.cache

FROM node:26.10.0-bookworm-slim
WORKDIR /app
# Root-owned: the app only reads its files (it keeps no data: it calls the cell).
COPY --from=build /app ./
# The listener on every interface (the app binds loopback unless told).
ENV PRIM_LISTEN_HOST=0.0.0.0
# The image's `node` user, by number so that Kubernetes can check runAsNonRoot.
USER 1000:1000
# PRIM_MCP_PORT.
EXPOSE 8788
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "infra/docker/healthcheck.mjs", "/health", "PRIM_MCP_PORT", "8788"]
CMD ["node", "apps/mcp/bin/prim-mcp.js"]

# syntax=docker/dockerfile:1
# apps/web: the dashboard (Next.js behind its own server.mjs), the sign-in and OAuth consent pages.
# Build context: the repository root.
#   docker build -f infra/docker/web.Dockerfile -t prim/web:0.1.0 .

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
RUN npx turbo run build --filter=@prim/web... \
  && npm prune --omit=dev --ignore-scripts --no-audit --no-fund \
  && rm -rf .turbo node_modules/.cache apps/web/.next/cache

FROM node:26.10.0-bookworm-slim
WORKDIR /app
# Root-owned: the app only reads its files, except Next's cache (image optimisation).
COPY --from=build /app ./
RUN mkdir -p apps/web/.next/cache && chown 1000:1000 apps/web/.next/cache
ENV NEXT_TELEMETRY_DISABLED=1
WORKDIR /app/apps/web
# The image's `node` user, by number so that Kubernetes can check runAsNonRoot.
USER 1000:1000
# PRIM_WEB_PORT. The dashboard has no health route of its own: the auth library's
# GET /api/auth/ok answers 200 once the app and its configuration load (no database query).
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "/app/infra/docker/healthcheck.mjs", "/api/auth/ok", "PRIM_WEB_PORT", "3000"]
# server.mjs (Next's handler behind node:http, so sign-in limits see each socket's address)
# listens on -p, so the port comes from PRIM_WEB_PORT here.
CMD ["sh", "-c", "exec node /app/apps/web/server.mjs -H 0.0.0.0 -p \"${PRIM_WEB_PORT:-3000}\""]

# syntax=docker/dockerfile:1

# One image for both longrun processes (docker-compose.yml wires them to Redis):
#   API (default CMD):  docker run -p 3000:3000 -e REDIS_URL=redis://host:6379 \
#                         -e LONGRUN_API_KEYS=tenant:key-of-16-or-more-chars longrun
#   worker:             docker run -e REDIS_URL=redis://host:6379 longrun node apps/worker/dist/main.js
#
# Every workspace of package-lock.json is listed by name in both stages (its package.json, before
# npm ci): npm ci links only the workspaces it can see, and the build of one whose link is missing
# fails (apps/cli imports @longrun/client). A new workspace needs its lines here;
# tests/compose.test.ts checks that.

# Node 22 LTS (Node 20 reached end of life in April 2026). tests/node-lts.test.ts runs the API
# and the stock worker on a Node 22 binary, and checks that this line names the same major.
ARG NODE_IMAGE=node:22-bookworm-slim

# ---- build: every dependency (dev included), then tsc for every workspace via turbo ----
FROM ${NODE_IMAGE} AS build
WORKDIR /app
ENV TURBO_TELEMETRY_DISABLED=1 \
    NPM_CONFIG_AUDIT=false \
    NPM_CONFIG_FUND=false \
    NPM_CONFIG_UPDATE_NOTIFIER=false \
    LONGRUN_SKIP_RUNTIMES=1
COPY package.json package-lock.json ./
COPY packages/core/package.json packages/core/
COPY packages/engine/package.json packages/engine/
COPY packages/worker/package.json packages/worker/
COPY packages/client/package.json packages/client/
COPY apps/api/package.json apps/api/
COPY apps/worker/package.json apps/worker/
COPY apps/cli/package.json apps/cli/
COPY bench/package.json bench/
RUN --mount=type=cache,target=/root/.npm npm ci
COPY . .
RUN npm run build

# ---- runtime: production dependencies + compiled output only ----
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    NPM_CONFIG_AUDIT=false \
    NPM_CONFIG_FUND=false \
    NPM_CONFIG_UPDATE_NOTIFIER=false \
    LONGRUN_SKIP_RUNTIMES=1
WORKDIR /app
# The workspace manifests make npm ci link node_modules/@longrun/* -> packages/* and apps/*.
COPY package.json package-lock.json ./
COPY packages/core/package.json packages/core/
COPY packages/engine/package.json packages/engine/
COPY packages/worker/package.json packages/worker/
COPY packages/client/package.json packages/client/
COPY apps/api/package.json apps/api/
COPY apps/worker/package.json apps/worker/
COPY apps/cli/package.json apps/cli/
COPY bench/package.json bench/
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev
# ...and the compiled code those links point at (each package's "exports" is ./dist/index.js).
COPY --from=build /app/packages/core/dist packages/core/dist
COPY --from=build /app/packages/engine/dist packages/engine/dist
COPY --from=build /app/packages/engine/lua packages/engine/lua
COPY --from=build /app/packages/worker/dist packages/worker/dist
COPY --from=build /app/apps/worker/dist apps/worker/dist
COPY --from=build /app/apps/api/dist apps/api/dist
COPY --from=build /app/apps/api/console apps/api/console
# docker-compose.yml's api command: the API, with a generated key when LONGRUN_API_KEYS is empty.
COPY scripts/compose-api.mjs scripts/

# Files stay root-owned and read-only to the process; nothing is written under /app at run time.
# /var/lib/longrun is where compose's api-keys volume keeps a generated key: owned by node, so a
# new named volume mounted there is too.
RUN mkdir -p /var/lib/longrun && chown node:node /var/lib/longrun
USER node
# 3000: API (PORT). 9464: worker /metrics and /healthz (LONGRUN_METRICS_PORT).
EXPOSE 3000 9464
# No HEALTHCHECK here: the two processes answer on different ports, so docker-compose.yml
# defines one per service. Both handle SIGTERM (drain, then exit 0).
CMD ["node", "apps/api/dist/main.js"]

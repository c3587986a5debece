# syntax=docker/dockerfile:1

# One image for both longrun processes (docker-compose.yml wires them to Redis):
#   API (default CMD):  docker run -p 3000:3000 -e REDIS_URL=redis://host:6379 \
#                         -e LONGRUN_API_KEYS=tenant:key-of-16-or-more-chars longrun
#   worker:             docker run -e REDIS_URL=redis://host:6379 longrun node apps/worker/dist/main.js
#
# Every workspace is listed by name below (its package.json, then its dist/): npm ci refuses to
# run when a workspace in package-lock.json is missing, so a new workspace needs its lines here.

ARG NODE_IMAGE=node:20-bookworm-slim

# ---- build: every dependency (dev included), then tsc for every workspace via turbo ----
FROM ${NODE_IMAGE} AS build
WORKDIR /app
ENV TURBO_TELEMETRY_DISABLED=1 \
    NPM_CONFIG_AUDIT=false \
    NPM_CONFIG_FUND=false \
    NPM_CONFIG_UPDATE_NOTIFIER=false
COPY package.json package-lock.json ./
COPY packages/core/package.json packages/core/
COPY packages/engine/package.json packages/engine/
COPY packages/worker/package.json packages/worker/
COPY apps/api/package.json apps/api/
COPY apps/worker/package.json apps/worker/
COPY bench/package.json bench/
RUN --mount=type=cache,target=/root/.npm npm ci
COPY . .
RUN npm run build

# ---- runtime: production dependencies + compiled output only ----
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    NPM_CONFIG_AUDIT=false \
    NPM_CONFIG_FUND=false \
    NPM_CONFIG_UPDATE_NOTIFIER=false
WORKDIR /app
# The workspace manifests make npm ci link node_modules/@longrun/* -> packages/* and apps/*.
COPY package.json package-lock.json ./
COPY packages/core/package.json packages/core/
COPY packages/engine/package.json packages/engine/
COPY packages/worker/package.json packages/worker/
COPY apps/api/package.json apps/api/
COPY apps/worker/package.json apps/worker/
COPY bench/package.json bench/
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev
# ...and the compiled code those links point at (each package's "exports" is ./dist/index.js).
COPY --from=build /app/packages/core/dist packages/core/dist
COPY --from=build /app/packages/engine/dist packages/engine/dist
COPY --from=build /app/packages/worker/dist packages/worker/dist
COPY --from=build /app/apps/worker/dist apps/worker/dist
COPY --from=build /app/apps/api/dist apps/api/dist

# Files stay root-owned and read-only to the process; nothing is written under /app at run time.
USER node
# 3000: API (PORT). 9464: worker /metrics and /healthz (LONGRUN_METRICS_PORT).
EXPOSE 3000 9464
# No HEALTHCHECK here: the two processes answer on different ports, so docker-compose.yml
# defines one per service. Both handle SIGTERM (drain, then exit 0).
CMD ["node", "apps/api/dist/main.js"]

# Fairway image: one image, three roles (api, worker, sim), chosen by the command.
#   docker build -t fairway:local .
#   docker run --rm -p 3000:3000 -e TEMPORAL_ADDRESS=... -e ADMIN_TOKEN=... fairway:local
# The sources run through tsx (no build step), exactly as `npm run start:*` does on a laptop.

ARG NODE_IMAGE=node:20-bookworm-slim

# ---- dependencies: native modules (better-sqlite3) need a toolchain when no prebuilt binary
# ---- can be fetched; it stays in this stage.
FROM ${NODE_IMAGE} AS deps
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ ca-certificates \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
# Runtime dependencies only (tsx and the Temporal SDK are runtime dependencies).
RUN npm ci --omit=dev --no-audit --no-fund \
  && npm cache clean --force

# ---- runtime
FROM ${NODE_IMAGE}
# HOST: every interface of the container; `docker run -p` and compose's ports decide what the host exposes.
ENV NODE_ENV=production \
    NPM_CONFIG_UPDATE_NOTIFIER=false \
    NPM_CONFIG_FUND=false \
    DATA_DIR=/data \
    HOST=0.0.0.0
WORKDIR /app
COPY --from=deps --chown=node:node /app/node_modules ./node_modules
COPY --chown=node:node package.json package-lock.json tsconfig.json ./
COPY --chown=node:node src ./src
# /data holds the SQLite effect store; a named volume mounted here inherits this ownership.
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 3000 3001
# npm forwards SIGTERM/SIGINT to the script; run with an init (compose: `init: true`,
# docker run: `--init`) so PID 1 reaps children and relays signals.
CMD ["npm", "run", "start:api"]

# One image for every service; SERVICE (or the container's command) picks the service:
#   docker run IMAGE                                            (gateway, the default SERVICE)
#   docker run -e SERVICE=conversations IMAGE                   (or SERVICE=webhooks)
#   docker run IMAGE node dist/scripts/cli.js accounts:list     (the admin CLI)
# No `# syntax=` line on purpose: it makes BuildKit fetch a Dockerfile frontend image from Docker
# Hub before every build, which fails where no registry is reachable; the built-in one suffices.

# Every dependency, development ones included; re-run only when the lockfile changes.
FROM node:20-slim AS dependencies
WORKDIR /app
COPY package.json package-lock.json ./
# The `cms` command is a local package (file:bin) that npm links into node_modules/.bin.
COPY bin ./bin
RUN npm ci --no-audit --no-fund

FROM dependencies AS build
COPY . .
RUN npm run build

# Production dependencies only, pruned from the full install (no second download).
FROM dependencies AS production-dependencies
RUN npm prune --omit=dev --no-audit --no-fund \
 && find node_modules -mindepth 1 -maxdepth 1 -type d -empty -delete

FROM node:20-slim AS runtime
# tini as PID 1 forwards SIGTERM and SIGINT to Node and reaps zombies (Node as PID 1 does neither
# by default), so `docker compose stop` gets the graceful shutdown.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production \
    SERVICE=gateway
WORKDIR /app
# Owned by root and read-only to the service's user.
COPY package.json ./
COPY --from=production-dependencies /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
USER node
# The gateway's API; the conversations and webhooks services serve health and metrics on OPS_PORT.
EXPOSE 3000 3101 3201
# GET /health/ready on the port of the service SERVICE names (the image has no curl).
HEALTHCHECK --interval=5s --timeout=5s --start-period=30s --retries=3 CMD ["node", "dist/scripts/healthcheck.js"]
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["sh", "-c", "exec node dist/services/${SERVICE}/src/main.js"]

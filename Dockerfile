# syntax=docker/dockerfile:1
# One image for every service; SERVICE (or the container's command) picks the service:
#   docker run IMAGE                                            (gateway, the default SERVICE)
#   docker run -e SERVICE=conversations IMAGE                   (or SERVICE=webhooks)
#   docker run IMAGE node dist/scripts/cli.js accounts:list     (the admin CLI)

FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY . .
RUN npm run build

FROM node:20-slim AS runtime
ENV NODE_ENV=production \
    SERVICE=gateway
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force
COPY --from=build /app/dist ./dist
USER node
# The gateway's API; the conversations and webhooks services serve health and metrics on OPS_PORT.
EXPOSE 3000 3101 3201
# GET /health/ready on the port of the service SERVICE names (the image has no curl).
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 CMD ["node", "dist/scripts/healthcheck.js"]
# exec: node runs as PID 1 and receives SIGTERM itself, so shutdown is graceful.
CMD ["sh", "-c", "exec node dist/services/${SERVICE}/src/main.js"]

# Keel's worker and API. Build: docker build -t keel .   (docker-compose.yml builds it for you)
# Two stages: the first compiles Keel (npm run build, decision 0350) and its workflow bundle; the
# image holds that build, the production dependencies and the web chat's build, and runs
# JavaScript (no TypeScript compiler at start). test/ship/image.test.ts runs this file's steps.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY common ./common
COPY codec ./codec
COPY store ./store
COPY telemetry ./telemetry
COPY platform ./platform
COPY workflows ./workflows
COPY activities ./activities
COPY worker ./worker
COPY api ./api
COPY launch ./launch
COPY cli ./cli
RUN npm run build
# Built once here, so a worker starts without bundling (KEEL_WORKFLOW_BUNDLE below).
RUN node dist/worker/bundle.js --out dist/workflow-bundle.js

FROM node:20-bookworm-slim
WORKDIR /app
# bash runs the agent's shell commands inside bubblewrap (docs/decisions/0080); ca-certificates
# for HTTPS to model providers. The sandbox makes user namespaces, which Docker's default seccomp
# and AppArmor profiles refuse: docker-compose.yml says what the worker container is given instead.
RUN apt-get update && apt-get install -y --no-install-recommends bash bubblewrap ca-certificates && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts
COPY --from=build /app/dist ./dist
# The web chat's committed production build (web/dist); the API serves it at /.
COPY web/dist ./web/dist
ENV KEEL_DATA_DIR=/data KEEL_LOG_FORMAT=json KEEL_WORKFLOW_BUNDLE=/app/dist/workflow-bundle.js
# The worker and the API run as the base image's ordinary `node` user (decision 0465): the sandbox
# gives each command a user namespace of its own, so no root is needed. The volumes' mount points
# are that user's, and so is a fresh volume Docker fills from them.
RUN install -d -o node -g node /data /workspaces
USER node
VOLUME /data
ENTRYPOINT ["node", "dist/cli/keel.js"]
CMD ["worker"]

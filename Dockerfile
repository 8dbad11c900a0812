# Keel's worker and API. Build: docker build -t keel .   (docker-compose.yml builds it for you)
FROM node:20-bookworm-slim
WORKDIR /app
# bash runs the agent's shell commands inside bubblewrap (docs/decisions/0080); ca-certificates
# for HTTPS to model providers. The sandbox needs namespaces: Docker's default seccomp profile
# refuses them, so run the worker with a profile that allows them, or set KEEL_SANDBOX=off.
RUN apt-get update && apt-get install -y --no-install-recommends bash bubblewrap ca-certificates && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts
COPY common ./common
COPY codec ./codec
COPY telemetry ./telemetry
COPY workflows ./workflows
COPY activities ./activities
COPY worker ./worker
COPY api ./api
COPY launch ./launch
COPY cli ./cli
# The web chat's committed production build (web/dist); the API serves it at /.
COPY web/dist ./web/dist
COPY tsconfig.json ./
ENV KEEL_DATA_DIR=/data KEEL_LOG_FORMAT=json
VOLUME /data
ENTRYPOINT ["node", "--import", "tsx", "cli/keel.ts"]
CMD ["worker"]

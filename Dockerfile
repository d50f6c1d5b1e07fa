# syntax=docker/dockerfile:1
# One image for every Caseward process. Its last four stages share every layer and differ
# only in what they run and how their health is checked:
#
#   docker build --target worker -t caseward:worker .   (and migrate, sweeper, web)
#
#   migrate   flask --app app db-upgrade, once, before a new version's web rolls out
#   web       gunicorn with app.gunicorn_conf on :8000; healthy while GET /health answers 200
#   worker    the RQ worker (money queue first); healthy while it heartbeats on Redis
#   sweeper   the sweep of work owed; healthy while it turns and sweeps end
#
# Configuration comes from the environment only (docs/deployment.md lists it): nothing
# secret is baked in. tests/deployment/test_container_commands.py runs each stage's CMD
# and HEALTHCHECK as written here against PostgreSQL and Redis.

# The base images. A registry's mirror, or a base built in house, is named with
# --build-arg; it must have the same Debian release, with python (3.11, venv) and npm.
ARG NODE_IMAGE=node:22-bookworm-slim
ARG PYTHON_IMAGE=python:3.11-slim-bookworm

# ---------------------------------------------------------------- the admin's stylesheet
# Polaris' stylesheet, from the npm package pinned in widget/package-lock.json (the
# Makefile's install does the same copy). The widget itself ships through Shopify.
FROM ${NODE_IMAGE} AS assets
WORKDIR /build/widget
COPY widget/package.json widget/package-lock.json ./
RUN npm ci --legacy-peer-deps --no-audit --no-fund --silent
RUN cp node_modules/@shopify/polaris/build/esm/styles.css /build/polaris.css

# ---------------------------------------------------------------- the Python packages
FROM ${PYTHON_IMAGE} AS packages
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python -m venv /opt/venv
COPY pyproject.toml /build/pyproject.toml
# The project's own dependencies only (no test tools): the code itself runs from source,
# where app/migrations.py finds the Alembic revisions beside it.
RUN python -c "import tomllib; print('\n'.join(tomllib.load(open('/build/pyproject.toml', 'rb'))['project']['dependencies']))" > /build/requirements.txt \
    && /opt/venv/bin/pip install -r /build/requirements.txt

# ---------------------------------------------------------------- what every process runs
FROM ${PYTHON_IMAGE} AS runtime
RUN useradd --system --uid 10001 --home-dir /srv/caseward --shell /usr/sbin/nologin caseward
COPY --from=packages /opt/venv /opt/venv
WORKDIR /srv/caseward
COPY app ./app
COPY integrations ./integrations
COPY migrations ./migrations
COPY --from=assets /build/polaris.css ./app/static/polaris.css
# The instance folder holds nothing in production (secrets come from the environment);
# audit checkpoints go to a volume kept off the machine (CASEWARD_AUDIT_CHECKPOINT_DIR).
RUN mkdir -p instance /var/lib/caseward/audit-checkpoints \
    && chown caseward instance /var/lib/caseward/audit-checkpoints
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONPATH=/srv/caseward \
    PYTHONUNBUFFERED=1 \
    CASEWARD_ENV=production \
    CASEWARD_INSTANCE_PATH=/srv/caseward/instance \
    CASEWARD_AUDIT_CHECKPOINT_DIR=/var/lib/caseward/audit-checkpoints \
    CASEWARD_BIND=0.0.0.0:8000
USER caseward
# A worker told to stop finishes the job it is running (RQ's warm shutdown): give it
# longer than a provider call may take (CASEWARD_PROVIDER_TIMEOUT, 20 s) before a kill,
# e.g. docker stop --time 60, or a pod's terminationGracePeriodSeconds.
STOPSIGNAL SIGTERM

FROM runtime AS migrate
HEALTHCHECK NONE
CMD ["flask", "--app", "app", "db-upgrade"]

FROM runtime AS worker
HEALTHCHECK --interval=30s --timeout=10s --start-period=60s --retries=3 CMD ["python", "-m", "app.jobs.health", "worker"]
CMD ["python", "-m", "app.background", "worker"]

FROM runtime AS sweeper
HEALTHCHECK --interval=30s --timeout=10s --start-period=60s --retries=3 CMD ["python", "-m", "app.jobs.health", "sweeper"]
CMD ["python", "-m", "app.background", "sweeper"]

# Last, so that a build without --target gives the web.
FROM runtime AS web
EXPOSE 8000
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:' + os.environ['CASEWARD_BIND'].rpartition(':')[2] + '/health', timeout=4)"]
CMD ["gunicorn", "--config", "python:app.gunicorn_conf", "app:create_app()"]

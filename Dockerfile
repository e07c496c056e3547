# The image every pipeline component runs in (components/__init__.py IMAGE; `autorater compile --image URI`).
# Components are lightweight Python components with install_kfp_package=False: the image must hold this
# package and the kfp it was compiled with (pinned in pyproject.toml).
#   docker build -t REGION-docker.pkg.dev/PROJECT/REPO/autorater-pipelines:VERSION .
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# Only what `pip install .` needs (.dockerignore keeps everything else out of the build context).
WORKDIR /tmp/autorater-pipelines
COPY pyproject.toml README.md ./
COPY src ./src
COPY components ./components
COPY pipelines ./pipelines
COPY compiled ./compiled
RUN pip install --no-cache-dir . \
    && pip check \
    && cd / && rm -rf /tmp/autorater-pipelines

# An unprivileged user, with a home for the model-response cache (~/.cache/autorater-pipelines).
RUN useradd --create-home --uid 10001 --user-group autorater
USER autorater
WORKDIR /home/autorater

CMD ["autorater", "--help"]

# The image every pipeline component runs in (components/__init__.py IMAGE; `autorater compile --image URI`).
# Components are lightweight Python components with install_kfp_package=False: the image holds this package
# and the kfp it was compiled with, installed from the lock file requirements/image.lock (exact versions).
#   docker build -t REGION-docker.pkg.dev/PROJECT/REPO/autorater-pipelines:VERSION .
# BASE_IMAGE: any Debian-like image with Python 3.11 and its venv module on PATH as `python3` (.ci/docker_image.sh
# builds a stand-in from Debian's packages where python:3.11-slim cannot be pulled).
ARG BASE_IMAGE=python:3.11-slim

# --- build stage: a venv with the locked runtime dependencies, then this package (no build tools carried over)
FROM ${BASE_IMAGE} AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PYTHONDONTWRITEBYTECODE=1
# Dependencies first: this layer is rebuilt only when the lock changes.
COPY requirements/image.lock /tmp/image.lock
RUN python3 -m venv /opt/autorater \
    && /opt/autorater/bin/pip install --quiet --no-compile --require-virtualenv -r /tmp/image.lock
WORKDIR /tmp/autorater-pipelines
COPY pyproject.toml README.md ./
COPY src ./src
COPY components ./components
COPY pipelines ./pipelines
COPY compiled ./compiled
# Then this package. Dropped: pip (nothing installs at run time), the dependencies' test suites, and pyarrow's
# optional Flight RPC and S3 libraries (~50 MB; no step uses them, and the Parquet round trip below checks
# that what steps use still loads).
RUN /opt/autorater/bin/pip install --quiet --no-compile --no-deps . \
    && /opt/autorater/bin/pip check \
    && /opt/autorater/bin/pip uninstall --quiet --yes pip setuptools \
    && find /opt/autorater/lib -depth -type d -name tests -path '*/site-packages/*' -exec rm -rf {} + \
    && cd /opt/autorater/lib/python3*/site-packages/pyarrow \
    && rm -rf include src *flight* *s3* _pyarrow_cpp_tests* *.pxd *.pyx *.pxi
# Byte-compile what the steps import (every component's modules, and what they import lazily: the model
# providers, Cloud Storage and BigQuery, Parquet, the report's matplotlib SVG backend and Pillow), so no step
# compiles at start-up; modules no step imports stay uncompiled (about 100 MB less than compiling them all).
RUN PYTHONDONTWRITEBYTECODE= _KFP_RUNTIME=true /opt/autorater/bin/python -c "\
import kfp.dsl.executor_main, autorater_pipelines.cli; \
from autorater_pipelines import autosxs, io, report; from autorater_pipelines.autosxs import inference, metrics; \
from autorater_pipelines.gecko import steps; \
from autorater_pipelines.models.providers import openai, replay, vertex; \
import io as _io, google.cloud.storage, google.cloud.bigquery, pyarrow.parquet, PIL.Image, matplotlib.figure; \
from autorater_pipelines.models import GenerateConfig, get_model; \
[get_model(m, GenerateConfig(base_url=u)) for m, u in (('gemini-2.5-flash', 'http://127.0.0.1:9'), ('openai/m', 'http://127.0.0.1:9/v1'))]; \
matplotlib.figure.Figure().subplots().figure.savefig(_io.BytesIO(), format='svg'); \
import pyarrow as pa; b = pa.BufferOutputStream(); pyarrow.parquet.write_table(pa.table({'a': [1]}), b); \
assert pyarrow.parquet.read_table(pa.BufferReader(b.getvalue())).to_pylist() == [{'a': 1}]"

# --- runtime stage
FROM ${BASE_IMAGE}
ENV PATH=/opt/autorater/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    AUTORATER_CACHE_DIR=/var/cache/autorater-pipelines/responses \
    MPLCONFIGDIR=/var/cache/autorater-pipelines/matplotlib \
    XDG_CACHE_HOME=/var/cache/autorater-pipelines/xdg
COPY --from=build /opt/autorater /opt/autorater
# Root by default, as Vertex AI Pipelines and the KFP launcher expect: KFP writes artifacts to paths it
# creates as root (the /gcs/ mount on Vertex AI, the pipeline root locally), which a non-root image user
# cannot write (kubeflow/pipelines#5673). Everything the components write besides artifacts (response
# cache, matplotlib's font cache, temp files in /tmp) is world-writable, so the image also runs as any
# other uid (`docker run --user`, runAsUser): matplotlib's font list is built here, once, for all users.
RUN mkdir -p /var/cache/autorater-pipelines/responses /var/cache/autorater-pipelines/matplotlib \
        /var/cache/autorater-pipelines/xdg \
    && python3 -c "import matplotlib.font_manager" \
    && chmod -R a+rwX /var/cache/autorater-pipelines && chmod 1777 /var/cache/autorater-pipelines/* \
    && autorater --help >/dev/null

CMD ["autorater", "--help"]

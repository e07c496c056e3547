# The image every pipeline component runs in (autorater_pipelines/components/__init__.py IMAGE; `autorater compile --image URI`).
# Components are lightweight Python components with install_kfp_package=False: the image holds this package
# and the kfp it was compiled with; the dependencies are installed at the versions of requirements/image.lock.
#   docker build -t REGION-docker.pkg.dev/PROJECT/REPO/autorater-pipelines:VERSION .
# BASE_IMAGE: any Debian-like image with Python 3.11 and its venv module on PATH as `python3` (.ci/docker_image.sh
# builds a stand-in from Debian's packages where python:3.11-slim cannot be pulled).
ARG BASE_IMAGE=python:3.11-slim

# --- deps: the locked runtime dependencies in a venv (rebuilt only when the lock changes)
FROM ${BASE_IMAGE} AS deps
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PYTHONDONTWRITEBYTECODE=1
COPY requirements/image.lock /tmp/image.lock
# Dropped after installing: pip (nothing installs at run time), the dependencies' test suites, and pyarrow's
# optional Flight RPC and S3 libraries (~50 MB; no step uses them; the Parquet round trip below checks that
# what steps use still loads); pyarrow's identical copies of a library (wheels hold no symlinks) become links.
RUN python3 -m venv /opt/autorater \
    && /opt/autorater/bin/pip install --quiet --no-compile --require-virtualenv -r /tmp/image.lock \
    && /opt/autorater/bin/pip uninstall --quiet --yes pip setuptools \
    && find /opt/autorater/lib -depth -type d -name tests -path '*/site-packages/*' -exec rm -rf {} + \
    && cd /opt/autorater/lib/python3*/site-packages/pyarrow \
    && rm -rf include src *flight* *s3* _pyarrow_cpp_tests* *.pxd *.pyx *.pxi \
    && for lib in lib*.so.*.*.*; do for copy in "${lib%.*.*}" "${lib%.*.*.*}"; do \
         if [ -f "$copy" ] && [ ! -L "$copy" ] && cmp -s "$copy" "$lib"; then ln -sf "$lib" "$copy"; fi; done; done
# Byte-compile the modules the steps import (by importing what the library imports, lazily imported ones
# included: tests/test_dockerfile.py keeps this list in step with the library), so no step compiles at
# start-up; modules no step imports stay uncompiled (about 100 MB less than compiling everything). Not
# compiled either: google.cloud.aiplatform, which only the Model Registry import of registry models' evaluations
# loads (its .pyc files would add ~105 MB; that step pays ~5 s of CPU compiling instead).
RUN PYTHONDONTWRITEBYTECODE= _KFP_RUNTIME=true /opt/autorater/bin/python -c "\
import kfp.dsl.executor_main, kfp.registry, numpy, pandas, pydantic, pydantic.alias_generators; \
import jinja2.sandbox, markupsafe, re2, tqdm.auto, yaml, requests, PIL.Image; \
import google.api_core.exceptions, google.auth.transport.requests, google.oauth2.credentials; \
import google.cloud.storage, google.cloud.bigquery; \
import google.genai, openai, aiohttp; \
import google.oauth2.credentials as c; google.genai.Client(vertexai=True, project='p', location='l', credentials=c.Credentials(token='t')); \
openai.AsyncOpenAI(api_key='k', base_url='http://127.0.0.1:9/v1'); \
import pyarrow as pa, pyarrow.parquet as pq; b = pa.BufferOutputStream(); pq.write_table(pa.table({'a': [1]}), b); \
assert pq.read_table(pa.BufferReader(b.getvalue())).to_pylist() == [{'a': 1}]"

# --- package: this package installed into that venv (by a throwaway pip), byte-compiled, staged in /pkg
FROM deps AS package
WORKDIR /tmp/autorater-pipelines
COPY pyproject.toml README.md ./
COPY src ./src
COPY compiled ./compiled
RUN python3 -m venv /tmp/pip \
    && /tmp/pip/bin/pip --python /opt/autorater/bin/python install --quiet --no-compile --no-deps . \
    && /tmp/pip/bin/pip --python /opt/autorater/bin/python check \
    && python3 -m compileall -q /opt/autorater/lib/python3*/site-packages/autorater_pipelines \
    && mkdir /pkg && cd /opt/autorater && cp -a --parents bin/autorater lib/python3*/site-packages/autorater_pipelines* /pkg/

# --- runtime: the dependency layer (cached while the lock is unchanged), then the package's small layer
FROM ${BASE_IMAGE}
ENV PATH=/opt/autorater/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    AUTORATER_CACHE_DIR=/var/cache/autorater-pipelines/responses \
    XDG_CACHE_HOME=/var/cache/autorater-pipelines/xdg
COPY --from=deps /opt/autorater /opt/autorater
COPY --from=package /pkg/ /opt/autorater/
# Root by default, as Vertex AI Pipelines and the KFP launcher expect: KFP writes artifacts to paths it
# creates as root (the /gcs/ mount on Vertex AI, the pipeline root locally), which a non-root image user
# cannot write (kubeflow/pipelines#5673). Everything the components write besides artifacts (response
# cache, temp files in /tmp) is world-writable, so the image also runs as any other uid (`docker run
# --user`, runAsUser).
RUN mkdir -p /var/cache/autorater-pipelines/responses /var/cache/autorater-pipelines/xdg \
    && chmod -R a+rwX /var/cache/autorater-pipelines && chmod 1777 /var/cache/autorater-pipelines/* \
    && autorater --help >/dev/null

CMD ["autorater", "--help"]

# The arena's image: the web site (gunicorn), the Celery worker and beat all run from it.
#   docker build -t yinsh-arena .
# docker-compose.yml runs it; docs/deployment.md explains the services and the settings.
# The base can be any Debian bookworm image with Python 3.11 in /usr/local (as the official
# image has it), for hosts that build from a local mirror: --build-arg BASE_IMAGE=...
ARG BASE_IMAGE=python:3.11-slim-bookworm
FROM ${BASE_IMAGE}

# bubblewrap: the bot sandbox (setpriv, from util-linux, drops to the bots' uids). Python
# bots run on the image's interpreter under /usr/local, which the sandbox mounts read-only.
# The other runtimes bots may use (docs/runtimes.md; arena/referee/runtimes.py lists them):
# Node.js, Java, C and C++, Rust (offline), Go, all from Debian's packages: for Rust the newer
# rustc-web and cargo-web (1.85 or later: edition 2024, Cargo.lock v4), not bookworm's rustc 1.63.
# The web site and the workers run this same image, so the runtimes page shows what bots get.
# (The slim base image leaves out man folders, which the JDK's post-install step needs.)
RUN mkdir -p /usr/share/man/man1 \
    && apt-get update \
    && apt-get install -y --no-install-recommends bubblewrap util-linux \
        nodejs openjdk-17-jdk-headless gcc g++ libc6-dev rustc-web cargo-web golang-go \
    && rm -rf /var/lib/apt/lists/*

ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_NO_CACHE_DIR=1 \
    DJANGO_SETTINGS_MODULE=arena.settings \
    ARENA_VAR_DIR=/var/lib/arena \
    ARENA_BOT_STORE=/srv/bot-store \
    ARENA_BOT_CACHE=/var/cache/arena/bots \
    ARENA_BOT_BUILD_DIR=/var/cache/arena/builds \
    ARENA_SANDBOX_DIR=/var/lib/arena/sandbox

WORKDIR /app
COPY pyproject.toml README.md ./
COPY engine ./engine
COPY arena ./arena
COPY bots ./bots
# The guide's pages on the site are rendered from these files.
COPY docs ./docs
COPY manage.py ./
# Editable, so that the code, templates, static files and bots/ are used from /app.
# The engine and the bot SDK are compiled ahead: bots import them read-only and would compile
# them again at every start (docs/benchmarks.md, "Python bots: start-up").
# PIP_EXTRAS=s3: the S3 bot store's libraries (ARENA_BOT_STORAGE=s3://..., docs/deployment.md).
ARG PIP_EXTRAS=""
RUN pip install -e ".${PIP_EXTRAS:+[$PIP_EXTRAS]}" \
    && python -m compileall -q engine bots/sdk \
    && mkdir -p /var/lib/arena /srv/bot-store /var/cache/arena/bots /var/cache/arena/builds \
    && SECRET_KEY=build ARENA_DEBUG=0 python manage.py collectstatic --noinput

EXPOSE 8000
# Threaded workers: a page's event stream holds a thread up to its lifetime (60 s), mostly
# asleep between its looks at the database; 3 processes of 16 threads serve 48 requests and
# streams at once (docs/deployment.md, "Event streams").
CMD ["gunicorn", "arena.wsgi", "--bind", "0.0.0.0:8000", "--workers", "3", "--worker-class", "gthread", "--threads", "16", "--access-logfile", "-"]

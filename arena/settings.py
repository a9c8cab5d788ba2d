"""Settings of the arena, read from the environment.

The defaults give a working local site with nothing else installed: SQLite and the bot store
under ``var/``, a Celery broker in an SQLite file, debug on. Production sets at least
``ARENA_DEBUG=0``, ``SECRET_KEY``, ``ALLOWED_HOSTS``, ``DATABASE_URL`` and ``REDIS_URL``
(docs/deployment.md lists them all).
"""

from __future__ import annotations

from pathlib import Path

import dj_database_url

from arena.env import env_bool, env_int, env_list, env_path, env_str

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = env_path("ARENA_VAR_DIR", BASE_DIR / "var")

#: The key Django signs sessions with. The default is for local use only: a system check
#: (arena.checks) refuses to run with it when debug is off.
DEFAULT_SECRET_KEY = "insecure-local-development-key-do-not-use-in-production"
SECRET_KEY = env_str("SECRET_KEY", DEFAULT_SECRET_KEY)
DEBUG = env_bool("ARENA_DEBUG", True)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "arena.local",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "arena.urls"
WSGI_APPLICATION = "arena.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "arena" / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --------------------------------------------------------------------------- database

DATABASE_URL = env_str("DATABASE_URL", f"sqlite:///{VAR_DIR / 'arena.sqlite3'}")
DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=60)}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The web process and the worker write at once: WAL lets readers go on during a write, and
    # IMMEDIATE transactions take the write lock up front instead of failing half-way.
    DATABASES["default"]["OPTIONS"] = {
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
        "timeout": 30,
    }
    DATABASES["default"]["CONN_MAX_AGE"] = 0
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --------------------------------------------------------------------------- files

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
MEDIA_URL = "media/"
MEDIA_ROOT = VAR_DIR / "media"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"
        if not DEBUG
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}
#: Where bot files are kept, by content hash (shared by the web process and every worker).
BOT_STORE_DIR = env_path("ARENA_BOT_STORE", VAR_DIR / "bots")
#: Where each worker unpacks bots it runs (a local cache, keyed by content hash).
BOT_CACHE_DIR = env_path("ARENA_BOT_CACHE", VAR_DIR / "bot-cache")
#: Largest upload accepted, in bytes.
BOT_UPLOAD_MAX_BYTES = env_int("ARENA_BOT_UPLOAD_MAX_BYTES", 20 * 1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024

# --------------------------------------------------------------------------- the bot sandbox

#: Memory, processes and scratch space each bot gets (the sandbox enforces them).
BOT_MEMORY_MB = env_int("ARENA_BOT_MEMORY_MB", 512)
BOT_MAX_PROCESSES = env_int("ARENA_BOT_MAX_PROCESSES", 32)
BOT_SCRATCH_MB = env_int("ARENA_BOT_SCRATCH_MB", 64)
#: The explicit development switch: run untrusted bots even where no adequate sandbox exists.
ALLOW_UNSANDBOXED = env_bool("ARENA_ALLOW_UNSANDBOXED", False)
SANDBOX_STATE_DIR = env_path("ARENA_SANDBOX_DIR", VAR_DIR / "sandbox")

# --------------------------------------------------------------------------- Celery

REDIS_URL = env_str("REDIS_URL", "")
CELERY_BROKER_URL = REDIS_URL or f"sqla+sqlite:///{VAR_DIR / 'celery-broker.sqlite3'}"
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
#: A task not acknowledged within this many seconds is delivered again (Redis); every task's
#: hard time limit stays below it.
CELERY_VISIBILITY_TIMEOUT = env_int("ARENA_VISIBILITY_TIMEOUT", 4 * 3600)
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": CELERY_VISIBILITY_TIMEOUT}
CELERY_TIMEZONE = "UTC"

# --------------------------------------------------------------------------- web

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.TokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticatedOrReadOnly"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 50,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "YINSH bot arena API",
    "DESCRIPTION": "Bots, versions, matches, tournaments, ratings and game records.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

SESSION_COOKIE_SECURE = not DEBUG and env_bool("ARENA_SECURE_COOKIES", True)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("ARENA_LOG_LEVEL", "INFO")},
}

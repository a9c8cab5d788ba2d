"""Settings of the arena, read from the environment.

The defaults give a working local site with nothing else installed: SQLite and the bot store
under ``var/``, a Celery broker in an SQLite file, a secret key made for the machine. Debug is
off unless ``ARENA_DEBUG=1`` (``./dev start`` sets it). Production sets at least
``SECRET_KEY``, ``ALLOWED_HOSTS``, ``DATABASE_URL`` and ``REDIS_URL``, and is served over
HTTPS (docs/deployment.md lists them all).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TypedDict

import dj_database_url

import engine
from arena.env import (
    bot_storage,
    env_bool,
    env_float,
    env_int,
    env_list,
    env_path,
    env_str,
    machine_secret_key,
)
from arena.referee.openings import DEFAULT_PLIES

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = env_path("ARENA_VAR_DIR", BASE_DIR / "var")

#: The key Django signs sessions and password-reset links with. Without ``SECRET_KEY``, a
#: random key made on first use and kept in ``var/secret-key`` (only its owner reads it): one
#: machine's processes share it; several web servers need ``SECRET_KEY`` set to the same value.
#: Match workers need none: they sign and verify nothing (the notifications' links are made by
#: the scheduler, which has the site's key), so the key they make is never used.
SECRET_KEY = env_str("SECRET_KEY", "") or machine_secret_key(VAR_DIR / "secret-key")
#: Django's debug pages (tracebacks, settings, the URL list) to whoever asks: only on a
#: developer's machine (``./dev start``).
DEBUG = env_bool("ARENA_DEBUG", False)
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
    "drf_spectacular_sidecar",
    "axes",
    "arena.local",
    "arena.jobs",
    "arena.notifications",
    "arena.bots",
    "arena.ratings",
    "arena.games",
    "arena.admission",
    "arena.analysis",
    "arena.tournaments",
    "arena.duels",
    "arena.web",
    "arena.api",
]

MIDDLEWARE = [
    "arena.metrics.middleware.RequestLatency",
    "django.middleware.security.SecurityMiddleware",
    "arena.web.middleware.RequestSizeLimit",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "arena.web.middleware.PageRateLimit",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "arena.web.middleware.RefusalPages",
    "arena.web.security.ContentSecurityPolicy",
    # Last, as django-axes asks: it answers a login refused while locked out.
    "axes.middleware.AxesMiddleware",
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
                "arena.web.context.site",
            ],
        },
    },
]

# --------------------------------------------------------------------------- database

DATABASE_URL = env_str("DATABASE_URL", f"sqlite:///{VAR_DIR / 'arena.sqlite3'}")
#: Connections are kept for a minute (in a worker, from task to task: arena.celery) and looked
#: at before each reuse, so that a database restart costs a new connection, not a failed query.
DATABASES = {
    "default": dj_database_url.parse(DATABASE_URL, conn_max_age=60, conn_health_checks=True)
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The web process and the worker write at once: WAL lets readers go on during a write, and
    # IMMEDIATE transactions take the write lock up front instead of failing half-way.
    DATABASES["default"]["OPTIONS"] = {
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
        "timeout": 30,
    }
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    # The test database is a file, not Django's default in-memory one, so that a real worker
    # process started by the end-to-end tests sees the same data. One file per test run.
    DATABASES["default"]["TEST"] = {
        "NAME": env_str("ARENA_TEST_DATABASE", str(VAR_DIR / f"test-{os.getpid()}.sqlite3"))
    }
#: PostgreSQL ends a session left idle inside a transaction this long (seconds; 0: never).
#: A worker frozen or stuck half-way through a result's transaction would otherwise keep its
#: rows locked, and every other result and the sweeper waiting, until it died. The arena's
#: transactions never wait on anything but the database (the rating fit runs outside its
#: write), and this is below MATCH_STALE_AFTER, so the sweeper finds the rows free.
DB_IDLE_TRANSACTION_TIMEOUT_S = env_float("ARENA_DB_IDLE_TRANSACTION_TIMEOUT", 10.0)
#: A pooler in transaction mode (PgBouncer's ``pool_mode = transaction``) stands between the
#: arena and PostgreSQL: a query may reach a different server connection from one transaction
#: to the next, so the cursors that ``QuerySet.iterator()`` keeps open on the server are off.
DB_TRANSACTION_POOLER = env_bool("ARENA_DB_TRANSACTION_POOLER", False)
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] = DB_TRANSACTION_POOLER
    _options = DATABASES["default"].setdefault("OPTIONS", {})
    _options["options"] = (
        f"{_options.get('options', '')} "
        f"-c idle_in_transaction_session_timeout={round(DB_IDLE_TRANSACTION_TIMEOUT_S * 1000)}"
    ).strip()
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --------------------------------------------------------------------------- files

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
#: The site's own static files (arena/static/arena/: the style sheet, the replay widget).
STATICFILES_DIRS = [BASE_DIR / "arena" / "static"]
#: Where the guide's Markdown sources are (docs/, bots/starters/): the repository's root.
GUIDE_ROOT = BASE_DIR
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
#: Where uploaded bot files are kept, by content hash: the storage ``bots`` of ``STORAGES``.
#: ``database`` (the default: every worker reaches it anyway), ``folder`` (the local folder
#: ``ARENA_BOT_STORE``; ``folder:/some/path`` names another), or ``s3://bucket[/prefix]`` (an
#: S3-compatible object store, ``pip install .[s3]``; credentials, region and endpoint from the
#: AWS SDK's variables, such as ``AWS_ACCESS_KEY_ID`` and ``AWS_ENDPOINT_URL_S3``).
#: ``manage.py move_bot_store`` copies a store from one to another.
BOT_STORAGE = env_str("ARENA_BOT_STORAGE", "database")
#: The folder of ``ARENA_BOT_STORAGE=folder`` (the store of earlier releases).
BOT_STORE_DIR = env_path("ARENA_BOT_STORE", VAR_DIR / "bots")
STORAGES["bots"] = bot_storage(BOT_STORAGE, BOT_STORE_DIR)
#: Where each worker unpacks bots it runs (a local cache, keyed by content hash).
BOT_CACHE_DIR = env_path("ARENA_BOT_CACHE", VAR_DIR / "bot-cache")
#: Largest upload accepted, in bytes.
BOT_UPLOAD_MAX_BYTES = env_int("ARENA_BOT_UPLOAD_MAX_BYTES", 20 * 1024 * 1024)
#: The most a user's uploads and builds (every version of their bots) may hold, in MiB (0: no
#: quota);
#: operators (staff) are exempt unless ARENA_BOT_QUOTA_EXEMPT_STAFF=0.
BOT_QUOTA_MB = env_float("ARENA_BOT_QUOTA_MB", 200.0)
BOT_QUOTA_EXEMPT_STAFF = env_bool("ARENA_BOT_QUOTA_EXEMPT_STAFF", True)
DATA_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024

# --------------------------------------------------------------------------- the bot sandbox

#: Memory, processes and scratch space each bot gets (the sandbox enforces them).
BOT_MEMORY_MB = env_int("ARENA_BOT_MEMORY_MB", 512)
BOT_MAX_PROCESSES = env_int("ARENA_BOT_MAX_PROCESSES", 256)
BOT_SCRATCH_MB = env_int("ARENA_BOT_SCRATCH_MB", 64)
#: The explicit development switch: run untrusted bots even where no adequate sandbox exists.
ALLOW_UNSANDBOXED = env_bool("ARENA_ALLOW_UNSANDBOXED", False)
SANDBOX_STATE_DIR = env_path("ARENA_SANDBOX_DIR", VAR_DIR / "sandbox")
#: A bot's build (its bot.toml's ``build``): wall time, memory, and the size of its folder.
BOT_BUILD_SECONDS = env_int("ARENA_BOT_BUILD_SECONDS", 300)
#: Seconds a bot may take to start (answer ``hello``), not charged to its clock. A slow host (an
#: emulated one, say) raises it rather than reject sound bots.
BOT_STARTUP_SECONDS = env_int("ARENA_BOT_STARTUP_SECONDS", 10)
if BOT_STARTUP_SECONDS < 1:
    raise ValueError(f"ARENA_BOT_STARTUP_SECONDS={BOT_STARTUP_SECONDS}: at least 1 second")
#: Seconds a bot may take to exit after ``end`` before it is killed (which fails its check).
#: A slow host (an emulated one, say) raises it.
BOT_EXIT_SECONDS = env_int("ARENA_BOT_EXIT_SECONDS", 1)
if BOT_EXIT_SECONDS < 1:
    raise ValueError(f"ARENA_BOT_EXIT_SECONDS={BOT_EXIT_SECONDS}: at least 1 second")
BOT_BUILD_MEMORY_MB = env_int("ARENA_BOT_BUILD_MEMORY_MB", 2048)
BOT_BUILD_DISK_MB = env_int("ARENA_BOT_BUILD_DISK_MB", 512)
#: The most a build may leave in the bot's folder, in MiB (a build over it fails saying so);
#: what it leaves counts in its owner's storage (BOT_QUOTA_MB).
BOT_BUILD_OUTPUT_MB = env_int("ARENA_BOT_BUILD_OUTPUT_MB", 200)
#: Where built bots are kept, by content hash (per worker, or per machine for the local
#: commands).
BOT_BUILD_DIR = env_path("ARENA_BOT_BUILD_DIR", VAR_DIR / "builds")
#: Eviction from those two caches (arena.referee.cachedir): a worker removes the bots no game
#: used for BOT_CACHE_IDLE_HOURS (0: never), then the least recently used while the two hold
#: more than BOT_CACHE_MAX_MB (0: no cap); never one a game or check is running. It looks at
#: its first game and then at most every BOT_CACHE_EVICT_INTERVAL_S seconds.
BOT_CACHE_IDLE_HOURS = env_float("ARENA_BOT_CACHE_IDLE_HOURS", 72.0)
BOT_CACHE_MAX_MB = env_int("ARENA_BOT_CACHE_MAX_MB", 10 * 1024)
BOT_CACHE_EVICT_INTERVAL_S = env_int("ARENA_BOT_CACHE_EVICT_INTERVAL", 600)

# --------------------------------------------------------------------------- Celery

REDIS_URL = env_str("REDIS_URL", "")
#: The broker: Redis when REDIS_URL is set, else a file next to the database (any Celery
#: broker URL can also be given directly).
CELERY_BROKER_URL = env_str(
    "ARENA_CELERY_BROKER_URL", REDIS_URL or f"sqla+sqlite:///{VAR_DIR / 'celery-broker.sqlite3'}"
)
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
#: The queue every arena task goes to (a test run uses its own).
CELERY_TASK_DEFAULT_QUEUE = env_str("ARENA_CELERY_QUEUE", "arena")
#: The queue of the periodic tasks (sweeper, ratings, ladder) and of the notifications'
#: fan-out and deliveries. The scheduler's own worker (``celery worker --beat``, with the
#: site's database role) consumes only it, so they never wait behind matches; match workers on
#: their own role (arena.jobs.roles) consume only the match queue, ``runarena``'s both.
PERIODIC_QUEUE = f"{CELERY_TASK_DEFAULT_QUEUE}.periodic"
#: The queue of the games with a remote player (arena.games.remote): its worker waits for
#: moves over HTTP in threads (``celery worker -Q <it> -P threads``), never holding a process
#: of the match queue's pool, which sandboxed games need.
REMOTE_QUEUE = f"{CELERY_TASK_DEFAULT_QUEUE}.remote"
#: Games the remote queue's worker plays at once (its threads).
REMOTE_CONCURRENCY = env_int("ARENA_REMOTE_CONCURRENCY", 32)
#: A remote bot's allowance per request, in milliseconds, for the network between its machine
#: and the arena: the referee's move overhead for its side (not charged to its clock).
REMOTE_LATENCY_MS = env_int("ARENA_REMOTE_LATENCY_MS", 1000)
#: The time controls a person may choose to play a bot in the browser (arena.games.people),
#: seconds + increment, comma-separated; the first is the form's default.
PEOPLE_TIME_CONTROLS = env_list("ARENA_PEOPLE_TIME_CONTROLS", ["300+3", "180+2", "60+1", "600+5"])
#: The longest a remote bot's client waits in one request for work (long polling), seconds.
REMOTE_WAIT_S = env_int("ARENA_REMOTE_WAIT_SECONDS", 25)
#: The open ladder pairs a remote bot only while its client asked for work within this many
#: seconds; when it asked is written at most every ``REMOTE_SEEN_WRITE_S`` seconds.
REMOTE_SEEN_S = env_int("ARENA_REMOTE_SEEN_SECONDS", 60)
REMOTE_SEEN_WRITE_S = env_int("ARENA_REMOTE_SEEN_WRITE_SECONDS", 5)
#: A task not acknowledged within this many seconds is delivered again (Redis); every task's
#: hard time limit stays below it (tests/arena/test_celery_config.py checks this).
CELERY_VISIBILITY_TIMEOUT = env_int("ARENA_VISIBILITY_TIMEOUT", 4 * 3600)
CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, object] = {
    "visibility_timeout": CELERY_VISIBILITY_TIMEOUT
}
if CELERY_BROKER_URL.startswith("sqla+"):
    # The SQLAlchemy transport hands its options to SQLAlchemy's create_engine: only SQLite's
    # wait for a lock held by another process (30 s, not 5). It has no visibility timeout: it
    # marks a message delivered when a worker takes it and never delivers it again, even if
    # that worker dies; the sweeper (arena.jobs.claims) re-sends the work of dead workers.
    CELERY_BROKER_TRANSPORT_OPTIONS = {"connect_args": {"timeout": 30}}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_TIMEZONE = "UTC"
#: Celery's Django fix-up closes a worker's database connections before and after every task
#: unless this is set (then only every so many tasks): every game would wait for a new
#: PostgreSQL connection. arena.celery closes them instead as a web request's are, when unusable
#: or older than CONN_MAX_AGE.
CELERY_DB_REUSE_MAX = 100

# --------------------------------------------------------------------------- cache, throttles

#: Django's cache holds the throttles' counts (and a few pages' slow parts): local memory per
#: process by default; with REDIS_URL (or ARENA_CACHE_URL) Redis, so that the limits hold
#: across every web process.
CACHE_URL = env_str("ARENA_CACHE_URL", REDIS_URL)
CACHES = {
    "default": (
        {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": CACHE_URL,
            "KEY_PREFIX": env_str("ARENA_CACHE_PREFIX", "arena"),
        }
        if CACHE_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "arena"}
    )
}
#: Per-user rates ("N/period": 20/hour; empty or "off": none) of the actions that cost work
#: (arena.core.throttles: the site and the API alike), of API requests per user ("api") and per
#: address without a login ("anon"). Operators (staff) are not limited.
THROTTLE_RATES: dict[str, str] = {
    "upload": env_str("ARENA_THROTTLE_UPLOAD", "20/hour"),
    "test": env_str("ARENA_THROTTLE_TEST", "20/hour"),
    "challenge": env_str("ARENA_THROTTLE_CHALLENGE", "10/hour"),
    "tournament": env_str("ARENA_THROTTLE_TOURNAMENT", "10/hour"),
    "trial": env_str("ARENA_THROTTLE_TRIAL", "30/hour"),
    "analysis": env_str("ARENA_THROTTLE_ANALYSIS", "10/minute"),
    "people": env_str("ARENA_THROTTLE_PEOPLE", "30/hour"),
    "api": env_str("ARENA_THROTTLE_API", "300/minute"),
    "anon": env_str("ARENA_THROTTLE_ANON", "120/minute"),
    # Per user: test notifications, and emails that ask to verify an address.
    "notify_test": env_str("ARENA_THROTTLE_NOTIFY_TEST", "5/hour"),
    "verify_email": env_str("ARENA_THROTTLE_VERIFY_EMAIL", "3/hour"),
    # Per address and per email asked for: password reset requests.
    "password_reset": env_str("ARENA_THROTTLE_PASSWORD_RESET", "5/hour"),
    # Per address: the site's pages asked for without a login (arena.web.middleware).
    "pages": env_str("ARENA_THROTTLE_PAGES", "300/minute"),
}

# --------------------------------------------------------------------------- the arena

#: The Site header of game records and the site's title.
SITE_NAME = env_str("ARENA_SITE_NAME", "YINSH bot arena")

#: Variants the ladder keeps games flowing in (all of the engine's by default).
LADDER_VARIANTS = env_list("ARENA_LADDER_VARIANTS", list(engine.VARIANTS))
#: Time control of ladder games (seconds + increment), e.g. "10+0.1".
LADDER_TIME_CONTROL = env_str("ARENA_LADDER_TIME_CONTROL", "10+0.1")
#: At most this many ladder matches per variant are queued or running at once.
LADDER_QUEUE_DEPTH = env_int("ARENA_LADDER_QUEUE_DEPTH", 3)
#: The share of the ladders' pairings (0 to 1) whose opponent is chosen by load alone, whatever
#: its rating (arena.games.ladder): every rating stays tied to those far from it.
LADDER_ANY_RATING_SHARE = env_float("ARENA_LADDER_ANY_RATING_SHARE", 0.1)
#: The open ladder (arena.games.ladder), where remote bots meet the sandboxed bots whose owners
#: opted in: at most this many of its matches per variant queued or running at once, and their
#: time control (the ladder's unless set).
OPEN_LADDER_QUEUE_DEPTH = env_int("ARENA_OPEN_LADDER_QUEUE_DEPTH", 2)
OPEN_LADDER_TIME_CONTROL = env_str("ARENA_OPEN_LADDER_TIME_CONTROL", LADDER_TIME_CONTROL)
#: Seasons of the ladder (arena.games.seasons): the share of ladder games that pair bots of
#: adjacent divisions while a season is open (0 to 1); the bots per division, and how many go
#: up and down at the end, of a season opened without saying; how often (seconds) a periodic
#: check closes the seasons whose end date has passed.
SEASON_CROSS_SHARE = env_float("ARENA_SEASON_CROSS_SHARE", 0.1)
SEASON_DIVISION_SIZE = env_int("ARENA_SEASON_DIVISION_SIZE", 8)
SEASON_MOVERS = env_int("ARENA_SEASON_MOVERS", 2)
SEASON_CHECK_INTERVAL_S = env_int("ARENA_SEASON_CHECK_INTERVAL", 300)
#: Ring placements drawn at random (seeded) before the bots take over, in ladder and tournament
#: games (0: every game starts from the empty board). The two games of a pair, colours
#: reversed, start from the same opening.
OPENING_PLIES = env_int("ARENA_OPENING_PLIES", DEFAULT_PLIES)
#: Ratings from fewer games than this are shown as provisional.
RATING_PROVISIONAL_GAMES = env_int("ARENA_RATING_PROVISIONAL_GAMES", 20)
#: At most this many matches of one tournament are queued or running at once.
TOURNAMENT_PARALLEL = env_int("ARENA_TOURNAMENT_PARALLEL", 4)
#: Whether every logged-in user may organise tournaments (else: users with the
#: tournaments.add_tournament permission, e.g. members of the "organisers" group).
OPEN_TOURNAMENTS = env_bool("ARENA_OPEN_TOURNAMENTS", DEBUG)

#: Tests and challenges (arena.duels): pairs of games each keeps in play at once; the most
#: games a test may play (its budget) and a challenge may have; challenges a user may start in
#: 24 hours; the time control they play at unless they choose another.
DUEL_PARALLEL_PAIRS = env_int("ARENA_DUEL_PARALLEL_PAIRS", 2)
DUEL_MAX_GAMES = env_int("ARENA_DUEL_MAX_GAMES", 2000)
CHALLENGE_MAX_GAMES = env_int("ARENA_CHALLENGE_MAX_GAMES", 100)
CHALLENGES_PER_DAY = env_int("ARENA_CHALLENGES_PER_DAY", 5)
DUEL_TIME_CONTROL = env_str("ARENA_DUEL_TIME_CONTROL", LADDER_TIME_CONTROL)

#: Games a new bot version plays against the built-in random bot before it is rated: at least
#: this many, and each variant it declares with each colour (arena.admission).
QUALIFICATION_GAMES = env_int("ARENA_QUALIFICATION_GAMES", 2)
QUALIFICATION_TIME_CONTROL = env_str("ARENA_QUALIFICATION_TIME_CONTROL", "5+0.1")
#: Games of the protocol conformance check (arena.referee.conformance): at least this many, and
#: one in each variant the bot declares; and their clock.
CHECK_GAMES = env_int("ARENA_CHECK_GAMES", 2)
CHECK_TIME_CONTROL = env_str("ARENA_CHECK_TIME_CONTROL", "20+0.2")
#: A trial (arena.admission.trials: an upload's one game before it is published): its clock,
#: and how many finished trials each user keeps (the oldest go first).
TRIAL_TIME_CONTROL = env_str("ARENA_TRIAL_TIME_CONTROL", QUALIFICATION_TIME_CONTROL)
TRIALS_KEPT = env_int("ARENA_TRIALS_KEPT", 20)
#: The analysis board (arena.analysis): the clock a bot has to answer, in milliseconds; how
#: long a request may wait for a worker before it ends unanswered; how many bots one request
#: may ask; the bot that always answers; and how many requests each user keeps.
ANALYSIS_MOVE_MS = env_int("ARENA_ANALYSIS_MOVE_MS", 5000)
ANALYSIS_DEADLINE_S = env_int("ARENA_ANALYSIS_DEADLINE_S", 60)
ANALYSIS_MAX_BOTS = env_int("ARENA_ANALYSIS_MAX_BOTS", 4)
ANALYSIS_BUILTIN_BOT = env_str("ARENA_ANALYSIS_BUILTIN_BOT", "search")
ANALYSES_KEPT = env_int("ARENA_ANALYSES_KEPT", 100)

#: Limits on an uploaded archive, applied while unpacking it (in a worker).
BOT_MAX_FILES = env_int("ARENA_BOT_MAX_FILES", 2000)
BOT_MAX_UNPACKED_BYTES = env_int("ARENA_BOT_MAX_UNPACKED_BYTES", 200 * 1024 * 1024)
BOT_MAX_COMPRESSION_RATIO = env_int("ARENA_BOT_MAX_COMPRESSION_RATIO", 100)

#: The bot the ratings are anchored to, and its fixed rating.
RATING_ANCHOR_BOT = env_str("ARENA_RATING_ANCHOR_BOT", "random")
RATING_ANCHOR_ELO = float(env_int("ARENA_RATING_ANCHOR_ELO", 1000))
#: The system user that owns the built-in bots.
SYSTEM_USERNAME = env_str("ARENA_SYSTEM_USER", "arena")
#: Where the built-in bots are (each a folder with bot.toml).
BUILTIN_BOTS_DIR = env_path("ARENA_BUILTIN_BOTS", BASE_DIR / "bots")
BUILTIN_BOTS = env_list("ARENA_BUILTIN_BOT_NAMES", ["random", "greedy", "search"])
#: The built-in bots registered on the open ladder (so that a remote bot finds opponents).
BUILTIN_OPEN_LADDER = env_list("ARENA_BUILTIN_OPEN_LADDER", ["random", "greedy"])

#: A version fails often (the owner is warned and told once per variant) when at least this
#: share of its recent games in a variant (its latest 50, or FAILING_MIN_GAMES if more, since
#: its owner last resumed it) ended by its own failure, over at least FAILING_MIN_GAMES games;
#: with PAUSE_FAILING_VERSIONS on (the default), the ladder leaves it out of that variant
#: until its owner resumes it or its recent games are good again.
FAILING_RATE = env_float("ARENA_FAILING_RATE", 0.2)
FAILING_MIN_GAMES = env_int("ARENA_FAILING_MIN_GAMES", 10)
PAUSE_FAILING_VERSIONS = env_bool("ARENA_PAUSE_FAILING_VERSIONS", True)
#: Think-time percentiles on a bot's page come from each version's latest this many games.
FAILURE_THINK_GAMES = env_int("ARENA_FAILURE_THINK_GAMES", 10)

#: Most actions a game can have: with the time control it bounds a match's time budget.
MATCH_MAX_ACTIONS = env_int("ARENA_MATCH_MAX_ACTIONS", 600)
#: A running match writes a heartbeat this often; one silent for MATCH_STALE_AFTER seconds
#: belongs to a dead worker and is re-queued, at most MATCH_MAX_ATTEMPTS times in all.
MATCH_HEARTBEAT_S = env_int("ARENA_MATCH_HEARTBEAT", 2)
MATCH_STALE_AFTER_S = env_int("ARENA_MATCH_STALE_AFTER", 12)
MATCH_MAX_ATTEMPTS = env_int("ARENA_MATCH_MAX_ATTEMPTS", 3)
#: A queued match nobody claimed for this long has its message sent again (a lost message;
#: duplicates are harmless). Redis keeps messages safe (visibility timeout); the embedded
#: broker can lose the few a dying worker had taken, so it resends sooner.
MATCH_RESEND_AFTER_S = env_int(
    "ARENA_MATCH_RESEND_AFTER", 120 if CELERY_BROKER_URL.startswith("sqla+") else 900
)
#: ... or after only this many seconds when the broker holds fewer messages than there are
#: queued matches and checks: it lost some (a Redis restarted without its data).
BROKER_RESEND_AFTER_S = env_int("ARENA_BROKER_RESEND_AFTER", 30)
#: Seconds between runs of the periodic tasks.
LADDER_INTERVAL_S = env_int("ARENA_LADDER_INTERVAL", 10)
SWEEP_INTERVAL_S = env_int("ARENA_SWEEP_INTERVAL", 5)
RATING_INTERVAL_S = env_int("ARENA_RATING_INTERVAL", 15)
#: ... and of the check for scheduled tournaments that are due.
SCHEDULE_INTERVAL_S = env_int("ARENA_SCHEDULE_INTERVAL", 60)
#: A worker touches this file every ``WORKER_ALIVE_EVERY_S`` seconds from its event loop (and
#: removes it when it stops): what a container's health check looks at (``arena.celery.Alive``).
#: Empty: no file.
WORKER_ALIVE_FILE = env_str("ARENA_WORKER_ALIVE_FILE", "")
WORKER_ALIVE_EVERY_S = env_float("ARENA_WORKER_ALIVE_EVERY", 15.0)
#: Every WORKER_ALIVE_EVERY_S a worker also writes its heartbeat in the database (its row of
#: arena.jobs.models.WorkerBeat, whatever ARENA_WORKER_ALIVE_FILE says), for the metrics.

#: The pages' server-sent event streams (arena.web.streams): how often a stream looks at the
#: database for a change, how long one lasts at most before the browser opens it again (so no
#: stream holds a web server's thread for long), how often an idle one sends a comment line
#: (proxies close silent connections), and how soon a browser reconnects.
STREAM_POLL_S = env_float("ARENA_STREAM_POLL", 0.15)
STREAM_LIFETIME_S = env_float("ARENA_STREAM_LIFETIME", 60.0)
STREAM_HEARTBEAT_S = env_float("ARENA_STREAM_HEARTBEAT", 15.0)
STREAM_RETRY_MS = env_int("ARENA_STREAM_RETRY_MS", 250)

#: ``GET /metrics`` (arena.metrics) answers a Prometheus scraper that sends this token
#: (``Authorization: Bearer <token>``); empty: the endpoint does not exist (404). With
#: ``PROMETHEUS_MULTIPROC_DIR`` set (an empty folder, one per web server, emptied at its
#: start), the request latencies of all of a gunicorn's processes are added up
#: (arena/gunicorn.conf.py, docs/deployment.md).
METRICS_TOKEN = env_str("ARENA_METRICS_TOKEN", "")


# --------------------------------------------------------------------------- notifications

#: The site's address, for the links in emails and webhook messages.
SITE_URL = env_str("ARENA_SITE_URL", "http://127.0.0.1:8000")
#: Where the arena's source code is published, linked from every page's footer (empty: no link).
SOURCE_URL = env_str("ARENA_SOURCE_URL", "")
#: Email: printed on the console unless an SMTP server is set (ARENA_EMAIL_HOST); any Django
#: email backend can be named with ARENA_EMAIL_BACKEND.
EMAIL_HOST = env_str("ARENA_EMAIL_HOST", "")
EMAIL_BACKEND = env_str(
    "ARENA_EMAIL_BACKEND",
    "django.core.mail.backends.smtp.EmailBackend"
    if EMAIL_HOST
    else "django.core.mail.backends.console.EmailBackend",
)
EMAIL_PORT = env_int("ARENA_EMAIL_PORT", 587)
EMAIL_HOST_USER = env_str("ARENA_EMAIL_USER", "")
EMAIL_HOST_PASSWORD = env_str("ARENA_EMAIL_PASSWORD", "")
EMAIL_USE_SSL = env_bool("ARENA_EMAIL_USE_SSL", False)
EMAIL_USE_TLS = env_bool("ARENA_EMAIL_USE_TLS", not EMAIL_USE_SSL)
EMAIL_TIMEOUT = env_int("ARENA_EMAIL_TIMEOUT", 10)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "arena@localhost")
#: Webhooks: seconds to wait for the endpoint; whether private and loopback addresses may be
#: posted to (tests and a local arena only: it lets users reach the server's own network).
WEBHOOK_TIMEOUT_S = env_float("ARENA_WEBHOOK_TIMEOUT", 5.0)
WEBHOOK_ALLOW_PRIVATE = env_bool("ARENA_WEBHOOK_ALLOW_PRIVATE", False)
#: A delivery is tried this many times, the pause doubling from NOTIFY_RETRY_DELAY_S seconds.
NOTIFY_ATTEMPTS = env_int("ARENA_NOTIFY_ATTEMPTS", 5)
NOTIFY_RETRY_DELAY_S = env_int("ARENA_NOTIFY_RETRY_DELAY", 30)
#: Soft time limit of a delivery task (its hard limit is 10 s more).
NOTIFY_TASK_SECONDS = 60


class BeatEntry(TypedDict):
    """One periodic task: its name, every how many seconds, and how it is sent: to the periodic
    queue, and dropped unrun by a worker that takes it after its interval (the next is on its
    way), so that copies never pile up behind a stopped scheduler's worker."""

    task: str
    schedule: float
    options: dict[str, str | float]


def _every(task: str, seconds: int) -> BeatEntry:
    return {
        "task": task,
        "schedule": float(seconds),
        "options": {"queue": PERIODIC_QUEUE, "expires": float(seconds)},
    }


CELERY_BEAT_SCHEDULE: dict[str, BeatEntry] = {
    "ladder": _every("arena.games.tasks.schedule_ladder", LADDER_INTERVAL_S),
    "sweep": _every("arena.jobs.tasks.sweep", SWEEP_INTERVAL_S),
    "ratings": _every("arena.ratings.tasks.refresh_ratings", RATING_INTERVAL_S),
    "seasons": _every("arena.games.tasks.close_ended_seasons", SEASON_CHECK_INTERVAL_S),
    "schedules": _every("arena.tournaments.tasks.start_scheduled", SCHEDULE_INTERVAL_S),
}

# The embedded defaults keep the databases under VAR_DIR: make sure it exists (the bot store
# and cache folders are made when first written).
try:
    VAR_DIR.mkdir(parents=True, exist_ok=True)
    Path(STATIC_ROOT).mkdir(exist_ok=True)
except OSError:  # a read-only image that keeps everything elsewhere
    pass

# --------------------------------------------------------------------------- web

REST_FRAMEWORK = {
    # Token first: its authenticate_header makes a missing or bad token a 401 with
    # ``WWW-Authenticate: Token``; a 403 is left for a user who may not do what was asked.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticatedOrReadOnly"],
    "DEFAULT_PARSER_CLASSES": [
        "arena.api.parsers.JSONParser",
        "arena.api.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "arena.api.pagination.Pagination",
    "PAGE_SIZE": 50,
    "EXCEPTION_HANDLER": "arena.api.views.exception_handler",
    "DEFAULT_THROTTLE_CLASSES": [
        "arena.api.throttles.UserThrottle",
        "arena.api.throttles.AnonThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": THROTTLE_RATES,
    # Formats are chosen by the Accept header only: a ``format`` query parameter is an ordinary
    # (ignored) parameter, not a 404 for a format the API does not speak.
    "URL_FORMAT_OVERRIDE": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "YINSH bot arena API",
    "DESCRIPTION": "Bots, versions, matches, tournaments, ratings and game records.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # The docs UI's scripts are served from this site (no CDN).
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {
        "BotStatusEnum": "arena.bots.models.Bot.Status",
        "VersionStatusEnum": "arena.bots.models.BotVersion.Status",
        "MatchStatusEnum": "arena.games.models.Match.Status",
        "TournamentStatusEnum": "arena.tournaments.models.Tournament.Status",
        "VersionKindEnum": "arena.bots.models.BotVersion.Kind",
        "MatchKindEnum": "arena.games.models.Match.Kind",
        "DuelKindEnum": "arena.duels.models.Duel.Kind",
        "TrialStatusEnum": "arena.admission.models.TrialStatus",
        "SeasonStatusEnum": "arena.games.models.Season.Status",
        "ScheduleStatusEnum": "arena.tournaments.models.Schedule.Status",
    },
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "arena.api.schema.add_error_responses",
    ],
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

# --------------------------------------------------------------------------- accounts: logins

#: Failed logins (the site's form, ``POST /api/token/``, the admin's) are counted by django-axes
#: in the database, so every web process sees the same counts (arena.web.logins). A username
#: tried from one address is locked after LOGIN_FAILURES_PER_ACCOUNT failures, an address after
#: LOGIN_FAILURES_PER_ADDRESS failures at any usernames; either for LOGIN_COOL_OFF_MINUTES from
#: its last counted failure. A login refused while locked is not counted (the wait is fixed).
LOGIN_FAILURES_PER_ACCOUNT = env_int("ARENA_LOGIN_FAILURES_PER_ACCOUNT", 5)
LOGIN_FAILURES_PER_ADDRESS = env_int("ARENA_LOGIN_FAILURES_PER_ADDRESS", 20)
LOGIN_COOL_OFF_MINUTES = env_int("ARENA_LOGIN_COOL_OFF_MINUTES", 15)
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_ENABLED = env_bool("ARENA_LOGIN_LIMITS", True)
AXES_HANDLER = "arena.web.logins.Attempts"
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"], "ip_address"]
AXES_FAILURE_LIMIT = "arena.web.logins.failure_limit"
AXES_COOLOFF_TIME = "arena.web.logins.cool_off"
AXES_RESET_ON_SUCCESS = True
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_LOCKOUT_CALLABLE = "arena.web.logins.lockout_response"
AXES_USERNAME_CALLABLE = "arena.web.logins.username"
AXES_VERBOSE = False
#: No log of successful logins kept (only the failures that count, until their cool-off ends).
AXES_DISABLE_ACCESS_LOG = True
#: The client's address: arena.web.clients, after PROXY_COUNT (below).
AXES_CLIENT_IP_CALLABLE = "arena.web.clients.address"
#: Email verification links (arena.notifications.verification) work this many days.
EMAIL_VERIFY_DAYS = env_int("ARENA_EMAIL_VERIFY_DAYS", 3)

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# --------------------------------------------------------------------------- HTTPS and headers

#: The site is reached over HTTPS, through a TLS-terminating proxy that says so in
#: ``X-Forwarded-Proto`` (docs/deployment.md). On by default in production (``DATABASE_URL``
#: set) unless debugging; the embedded defaults serve plain HTTP on the loopback.
HTTPS = env_bool("ARENA_HTTPS", not DEBUG and "DATABASE_URL" in os.environ)
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = HTTPS
SECURE_SSL_REDIRECT = HTTPS
#: The health check is asked over plain HTTP from beside the web server (compose's check), and
#: the metrics by a Prometheus beside it.
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^metrics$"]
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if HTTPS else None
#: The client's address, for the login limits and every per-address one (arena.web.clients):
#: the connection's own (REMOTE_ADDR) unless ARENA_PROXY_COUNT reverse proxies stand in front
#: of the site; then the address the outermost of them was reached from, read from
#: X-Forwarded-For counting from the right (each proxy appends the address it was reached
#: from), so that what a client writes in that header itself is never believed. One proxy by
#: default where the site is served over HTTPS (through its TLS proxy): with none counted,
#: every visitor would share the proxy's address, and its limits.
PROXY_COUNT = env_int("ARENA_PROXY_COUNT", 1 if HTTPS else 0)
#: Browsers remember to come back over HTTPS only (sent on HTTPS answers only); also for the
#: names below the site's own, which it alone serves.
SECURE_HSTS_SECONDS = env_int("ARENA_HSTS_SECONDS", 365 * 24 * 3600) if HTTPS else 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
#: Asking browsers' makers to preload the name is the owner of the whole domain's decision.
SECURE_HSTS_PRELOAD = env_bool("ARENA_HSTS_PRELOAD", False)
SILENCED_SYSTEM_CHECKS = [] if SECURE_HSTS_PRELOAD else ["security.W021"]
#: Content-Security-Policy of every page (arena.web.security.ContentSecurityPolicy; Django
#: 6's setting of the same name): scripts and styles from the site itself only, no framing,
#: forms posted to the site only. Styles may be inline (the API reference draws with them).
SECURE_CSP = {
    "default-src": ["'self'"],
    "script-src": ["'self'"],
    "style-src": ["'self'", "'unsafe-inline'"],
    "img-src": ["'self'", "data:"],
    "connect-src": ["'self'"],
    "object-src": ["'none'"],
    "base-uri": ["'self'"],
    "form-action": ["'self'"],
    "frame-ancestors": ["'none'"],
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("ARENA_LOG_LEVEL", "INFO")},
}

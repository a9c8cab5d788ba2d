"""The tools measure the arena, so their tests run in the arena tests' set-up
(tests/arena/conftest.py): a bot store, cache and Celery queue of the run's own, no throttles,
the users and the real workers' environment. Its fixtures are named here to apply here too, and
its end-of-session clean-up with them."""

from tests.arena.conftest import (  # noqa: F401  (fixtures and a hook, registered by name)
    _isolated_files,
    _no_throttles,
    _open_tournaments,
    pytest_sessionfinish,
    system_user,
    user,
    worker_env,
)

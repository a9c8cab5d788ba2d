"""What the match workers' PostgreSQL role may read and write, declared in one place.

A match worker runs bots, which are hostile code; a worker host that falls to one holds the
worker's database credentials. So the workers connect as a role of their own
(``manage.py worker_role``) that may only do what playing games, checking versions and
finishing tournaments and duels needs: read bots, versions and games, write games, results,
ratings and the claims' columns, add a notification to a user's inbox, and read users' ids
and names. It may not read password hashes, API tokens, sessions, e-mail addresses,
notification settings or deliveries (webhook URLs), nor the login-failure records.

Every table of the project is either in :data:`GRANTS` or in :data:`DENIED`
(tests/arena/jobs/test_roles.py fails for a new one that is in neither): a new model forces
a decision. A new table is one line here, e.g.::

    "games_example": Grant(("SELECT", "INSERT", "UPDATE")),

The scheduler (``celery worker --beat``), the site and ``runarena`` keep the site's own role:
the periodic tasks and the notifications' fan-out and deliveries run there
(:mod:`arena.notifications.services`).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth import get_user_model

__all__ = ["DENIED", "GRANTS", "PRIVILEGES", "Grant", "private_user_fields", "sequence_tables"]

#: The table privileges a declaration may name.
PRIVILEGES = ("SELECT", "INSERT", "UPDATE", "DELETE")


@dataclass(frozen=True)
class Grant:
    """The privileges on one table: ``privileges`` on the whole table, and ``SELECT`` on
    ``select_columns`` only (a table whose other columns the workers may not read)."""

    privileges: tuple[str, ...] = ()
    select_columns: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        unknown = [p for p in self.privileges if p not in PRIVILEGES]
        if unknown:
            raise ValueError(f"unknown privileges {unknown}; known: {', '.join(PRIVILEGES)}")
        if self.select_columns and "SELECT" in self.privileges:
            raise ValueError("SELECT on the whole table and on some columns: choose one")


READ = Grant(("SELECT",))
READ_WRITE = Grant(("SELECT", "INSERT", "UPDATE"))
READ_WRITE_DELETE = Grant(("SELECT", "INSERT", "UPDATE", "DELETE"))

#: The match workers' privileges, by table.
GRANTS: dict[str, Grant] = {
    # Owners' names on pages a worker writes into notifications, and the built-in bots'
    # user; nothing else of an account.
    "auth_user": Grant(select_columns=("id", "username")),
    "bots_bot": Grant(("SELECT", "UPDATE")),
    "bots_botversion": Grant(("SELECT", "UPDATE")),
    # The uploads (ARENA_BOT_STORAGE=database): a worker fetches a version's file by its hash.
    "bots_storedfile": READ,
    "bots_storedfilechunk": READ,
    "admission_trial": Grant(("SELECT", "UPDATE")),
    # An analysis request: a worker claims it and writes the bot's answer.
    "analysis_analysis": Grant(("SELECT", "UPDATE")),
    "games_match": READ_WRITE_DELETE,
    "games_matchrecord": READ_WRITE_DELETE,
    "games_livemove": READ_WRITE_DELETE,
    "games_failurealert": READ_WRITE,
    # A remote bot's side of a game (arena.games.remote): the worker opens it, reads what its
    # client forwarded of its standard error, and closes it; it sends lines and reads answers
    # (the site writes them).
    "games_remotegame": READ_WRITE,
    "games_remoteline": Grant(("SELECT", "INSERT")),
    "games_season": READ,
    "games_seasonentry": READ,
    "games_pairstats": READ_WRITE,
    "games_ratingstate": READ_WRITE,
    "games_rating": READ_WRITE_DELETE,
    "games_ratingpoint": READ_WRITE,
    "tournaments_tournament": Grant(("SELECT", "UPDATE")),
    "tournaments_entry": Grant(("SELECT", "UPDATE")),
    "tournaments_bye": READ_WRITE,
    "duels_duel": Grant(("SELECT", "UPDATE")),
    "duels_duelpair": READ_WRITE,
    # Each worker's heartbeat row (an upsert; deleted when it stops), and the sweeper's record
    # of what it recovered when a worker starts (arena.jobs.startup).
    "jobs_workerbeat": READ_WRITE_DELETE,
    "jobs_recovery": Grant(("INSERT",), select_columns=("id",)),
    # A new entry in a user's inbox (its id comes back from the INSERT); not the others'.
    "notifications_notification": Grant(("INSERT",), select_columns=("id",)),
}

#: The tables the match workers may not touch at all, and why.
DENIED: dict[str, str] = {
    "auth_group": "permissions: the site's",
    "auth_group_permissions": "permissions: the site's",
    "auth_permission": "permissions: the site's",
    "auth_user_groups": "permissions: the site's",
    "auth_user_user_permissions": "permissions: the site's",
    "authtoken_token": "API tokens",
    "django_session": "sessions",
    "django_admin_log": "the operators' actions",
    "django_content_type": "only the admin and permissions use it",
    "axes_accessattempt": "login failures: addresses and user agents",
    "axes_accessattemptexpiration": "login failures",
    "axes_accessfailurelog": "login failures: addresses and user agents",
    "axes_accesslog": "logins: addresses and user agents",
    "notifications_notificationsettings": "webhook URLs and verified addresses",
    "notifications_delivery": "e-mail addresses and webhook URLs",
    "jobs_periodicrun": "the periodic tasks run in the scheduler",
    "tournaments_schedule": "the scheduler starts scheduled tournaments",
    "tournaments_schedule_tournaments": "the scheduler starts scheduled tournaments",
}


def private_user_fields(path: str) -> list[str]:
    """The lookups, below ``path`` (a user reached through ``select_related``, e.g.
    ``"version__bot__owner"``), of the account's columns the workers may not read: code a
    worker runs passes them to ``defer()`` so that loading the user reads only its id and
    name (the others would be read on first use, which a page may do)."""
    public = set(GRANTS["auth_user"].select_columns)
    return [
        f"{path}__{f.name}"
        for f in get_user_model()._meta.concrete_fields
        if f.column not in public
    ]


def sequence_tables() -> list[str]:
    """The tables the workers insert into (their id sequences are granted too)."""
    return sorted(t for t, g in GRANTS.items() if "INSERT" in g.privileges)

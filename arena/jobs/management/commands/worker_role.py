"""Create or update the match workers' PostgreSQL role with the grants of
:mod:`arena.jobs.roles`, and print them as the database has them.

Run it as the site's own role (the tables' owner) after ``migrate``, and again after each
``migrate`` that adds tables: it revokes every privilege the declaration does not name (so
running it after a change narrows the role too), then grants the declared ones, in one
transaction. Default privileges are not used: every grant is explicit.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection, transaction
from psycopg import sql

from arena.jobs.roles import GRANTS, sequence_tables

#: A role name the command accepts: lower-case, as an unquoted SQL identifier.
NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")

Privilege = tuple[str, str, str]  # (table, privilege, column or "" for the whole table)


def declared() -> set[Privilege]:
    """The privileges :data:`~arena.jobs.roles.GRANTS` declares."""
    found: set[Privilege] = set()
    for table, grant in GRANTS.items():
        found.update((table, p, "") for p in grant.privileges)
        found.update((table, "SELECT", c) for c in grant.select_columns)
    return found


def granted(role: str) -> set[Privilege]:
    """The role's privileges on the tables of this database's ``public`` schema, read from
    the catalog: table privileges, and column privileges not implied by one of those."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT table_name, privilege_type FROM information_schema.role_table_grants"
            " WHERE grantee = %s AND table_schema = 'public'",
            [role],
        )
        tables = {(t, p, "") for t, p in cursor.fetchall()}
        cursor.execute(
            "SELECT table_name, privilege_type, column_name"
            " FROM information_schema.column_privileges"
            " WHERE grantee = %s AND table_schema = 'public'",
            [role],
        )
        columns = {(t, p, c) for t, p, c in cursor.fetchall() if (t, p, "") not in tables}
    return tables | columns


class Command(BaseCommand):
    help = (
        "Create or update the match workers' PostgreSQL role (LOGIN, no other attribute) with "
        "the grants of arena/jobs/roles.py, revoking any other, and print its grants."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="the role's name, e.g. arena_worker")
        source = parser.add_mutually_exclusive_group()
        source.add_argument(
            "--password-env", metavar="VAR", help="set the password from this environment variable"
        )
        source.add_argument(
            "--password-file", metavar="FILE", help="set the password from this file's first line"
        )
        parser.add_argument(
            "--check",
            action="store_true",
            help="change nothing; exit with an error when the role's grants differ from the "
            "declaration",
        )

    def handle(self, *args: object, **options: Any) -> None:
        if connection.vendor != "postgresql":
            raise CommandError(
                f"the worker role is a PostgreSQL role; this database is {connection.vendor} "
                "(set DATABASE_URL to a PostgreSQL database)"
            )
        name = str(options["name"])
        if not NAME.match(name):
            raise CommandError(
                f"{name!r} is not a role name this command makes: lower-case letters, digits "
                "and underscores, not starting with a digit, at most 63"
            )
        if options["check"]:
            self._check(name)
            return
        password = self._password(options)
        self._refuse_privileged(name)
        with transaction.atomic(), connection.cursor() as cursor:
            self._apply(cursor, name, password)
        self._print(name)

    def _password(self, options: dict[str, Any]) -> str | None:
        if options["password_env"]:
            var = str(options["password_env"])
            value = os.environ.get(var, "")
            if not value:
                raise CommandError(f"the environment variable {var} is unset or empty")
            return value
        if options["password_file"]:
            path = Path(str(options["password_file"]))
            try:
                lines = path.read_text().splitlines()
            except OSError as e:
                raise CommandError(f"cannot read the password file: {e}") from e
            if not lines or not lines[0]:
                raise CommandError(f"{path}: its first line (the password) is empty")
            return lines[0]
        return None

    def _refuse_privileged(self, name: str) -> None:
        """The command makes a worker's role: never one that is something else already (a
        superuser, the site's own role, one that owns tables or may make roles)."""
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_user")
            (me,) = cursor.fetchone() or ("",)
            if name == me:
                raise CommandError(f"{name} is the role this command runs as (the site's)")
            cursor.execute(
                "SELECT rolsuper OR rolcreaterole OR rolcreatedb OR rolreplication"
                " OR rolbypassrls, EXISTS (SELECT 1 FROM pg_class WHERE relowner = pg_roles.oid)"
                " FROM pg_roles WHERE rolname = %s",
                [name],
            )
            row = cursor.fetchone()
        if row and row[0]:
            raise CommandError(
                f"{name} is a privileged role (superuser, or may create roles or databases): "
                "give the workers a role of their own"
            )
        if row and row[1]:
            raise CommandError(f"{name} owns tables: give the workers a role of their own")

    def _apply(self, cursor: Any, name: str, password: str | None) -> None:
        role = sql.Identifier(name)
        cursor.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [name])
        verb = "ALTER" if cursor.fetchone() else "CREATE"
        attributes = sql.SQL(
            "LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS INHERIT"
        )
        statement = sql.SQL("{} ROLE {} WITH {}").format(sql.SQL(verb), role, attributes)
        if password is not None:
            statement = sql.SQL("{} PASSWORD {}").format(statement, sql.Literal(password))
        cursor.execute(statement)
        database = sql.Identifier(connection.settings_dict["NAME"])
        cursor.execute(sql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(database, role))
        cursor.execute(sql.SQL("GRANT USAGE ON SCHEMA public TO {}").format(role))
        cursor.execute(sql.SQL("REVOKE ALL ON ALL TABLES IN SCHEMA public FROM {}").format(role))
        cursor.execute(sql.SQL("REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM {}").format(role))
        existing = set(connection.introspection.table_names(cursor))
        missing = sorted(set(GRANTS) - existing)
        if missing:
            raise CommandError(
                f"tables declared in arena/jobs/roles.py are not in the database: "
                f"{', '.join(missing)} (run migrate first)"
            )
        for table, grant in sorted(GRANTS.items()):
            if grant.privileges:
                cursor.execute(
                    sql.SQL("GRANT {} ON TABLE {} TO {}").format(
                        sql.SQL(", ").join(sql.SQL(p) for p in grant.privileges),
                        sql.Identifier(table),
                        role,
                    )
                )
            if grant.select_columns:
                cursor.execute(
                    sql.SQL("GRANT SELECT ({}) ON TABLE {} TO {}").format(
                        sql.SQL(", ").join(sql.Identifier(c) for c in grant.select_columns),
                        sql.Identifier(table),
                        role,
                    )
                )
        for table in sequence_tables():
            for sequence in connection.introspection.get_sequences(cursor, table):
                cursor.execute(
                    sql.SQL("GRANT USAGE ON SEQUENCE {} TO {}").format(
                        sql.Identifier(sequence["name"]), role
                    )
                )

    def _print(self, name: str) -> None:
        self.stdout.write(f"role {name}: LOGIN; its grants in {connection.settings_dict['NAME']}:")
        by_table: dict[str, list[str]] = {}
        for table, privilege, column in sorted(granted(name)):
            by_table.setdefault(table, []).append(
                f"{privilege} ({column})" if column else privilege
            )
        for table, privileges in sorted(by_table.items()):
            self.stdout.write(f"  {table}: {', '.join(_merge(privileges))}")

    def _check(self, name: str) -> None:
        want, have = declared(), granted(name)
        if want == have:
            self.stdout.write(f"role {name}: its grants are the declared ones")
            return
        lines = [f"role {name}: its grants differ from arena/jobs/roles.py"]
        lines += [f"  missing: {t} {p}{f' ({c})' if c else ''}" for t, p, c in sorted(want - have)]
        lines += [f"  extra: {t} {p}{f' ({c})' if c else ''}" for t, p, c in sorted(have - want)]
        raise CommandError("\n".join(lines))


def _merge(privileges: list[str]) -> list[str]:
    """``SELECT (id)``, ``SELECT (username)`` as ``SELECT (id, username)``."""
    whole = [p for p in privileges if "(" not in p]
    columns: dict[str, list[str]] = {}
    for p in privileges:
        if "(" in p:
            kind, column = p.split(" (", 1)
            columns.setdefault(kind, []).append(column.rstrip(")"))
    return whole + [f"{kind} ({', '.join(cs)})" for kind, cs in columns.items()]

"""The ratings from scratch: every pair's rated results counted again from the finished matches
(the counts are kept as each result is written, :func:`arena.ratings.services.count_result`;
this checks and mends them), then every rating fitted again, in every ladder's rating space.
"""

from __future__ import annotations

from django.db import connection, transaction
from django.db.models import Count, F, Q

from arena.bots.models import Variant
from arena.games.models import Match
from arena.ratings import services as ratings
from arena.ratings.models import Ladder, PairStats, RatingState


def recount_results(variant: str | None = None) -> int:
    """Recount every pair's results from the finished rated matches; returns the number of
    results. Leaves the ratings to :func:`arena.ratings.services.refresh`.

    The counts never pass through Python: one ``GROUP BY`` over the matches goes into a
    temporary table, one join with the stored counts finds the pairs whose counts differ
    (none, unless something went wrong), and only those are written. Rewriting every row
    instead costs far more than counting (index upkeep and key checks for each pair).
    """
    finished = Match.objects.filter(status=Match.Status.FINISHED, rated=True).exclude(
        white=F("black")
    )
    if variant:
        finished = finished.filter(variant=variant)
    grouped = (
        finished.order_by()
        .annotate(space=Match.rating_spaces())
        .values("space", "variant", "white_id", "black_id")
        .annotate(
            wins=Count("pk", filter=Q(result="white")),
            draws=Count("pk", filter=Q(result="draw")),
            losses=Count("pk", filter=Q(result="black")),
        )
        .values_list("space", "variant", "white_id", "black_id", "wins", "draws", "losses")
    )
    counting, count_params = grouped.query.sql_with_params()
    q = connection.ops.quote_name
    table = q(PairStats._meta.db_table)
    counted, changed = q("arena_counted_pairs"), q("arena_changed_pairs")
    current = f"SELECT id, ladder, variant, white_id, black_id, wins, draws, losses FROM {table}"
    current_params: list[str] = []
    if variant:
        current += " WHERE variant = %s"
        current_params.append(variant)
    keys = (
        "c.space = p.ladder AND c.variant = p.variant AND c.white_id = p.white_id "
        "AND c.black_id = p.black_id"
    )
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SET LOCAL work_mem = '64MB'")  # the GROUP BY in memory
        cursor.execute(
            # columns space, variant, white_id, black_id, wins, draws, losses
            f"CREATE TEMPORARY TABLE {counted} AS " + counting,
            count_params,
        )
        cursor.execute(
            f"CREATE TEMPORARY TABLE {changed} AS "
            "SELECT p.id AS pid, c.space, c.variant, c.white_id, c.black_id, c.wins, c.draws, "
            "c.losses "
            f"FROM {counted} c FULL OUTER JOIN ({current}) p "
            f"ON {keys} WHERE p.id IS NULL OR c.variant IS NULL "
            "OR c.wins <> p.wins OR c.draws <> p.draws OR c.losses <> p.losses",
            current_params,
        )
        cursor.execute(
            f"DELETE FROM {table} WHERE id IN (SELECT pid FROM {changed} WHERE variant IS NULL)"
        )
        cursor.execute(
            f"UPDATE {table} SET "
            f"wins = (SELECT wins FROM {changed} WHERE pid = {table}.id), "
            f"draws = (SELECT draws FROM {changed} WHERE pid = {table}.id), "
            f"losses = (SELECT losses FROM {changed} WHERE pid = {table}.id) "
            f"WHERE id IN (SELECT pid FROM {changed} WHERE variant IS NOT NULL)"
        )
        cursor.execute(
            f"INSERT INTO {table} (ladder, variant, white_id, black_id, wins, draws, losses) "
            f"SELECT space, variant, white_id, black_id, wins, draws, losses FROM {changed} "
            "WHERE pid IS NULL"
        )
        cursor.execute(
            f"SELECT space, variant, SUM(wins + draws + losses) FROM {counted} "
            "GROUP BY space, variant"
        )
        total = {(ladder, v): int(n) for ladder, v, n in cursor.fetchall()}
        cursor.execute(f"DROP TABLE {counted}")
        cursor.execute(f"DROP TABLE {changed}")
        for ladder in Ladder:
            for v in [variant] if variant else [c.value for c in Variant]:
                results = total.get((ladder, v), 0)
                if ladder == Ladder.SANDBOX or results:
                    RatingState.objects.update_or_create(
                        ladder=ladder, variant=v, defaults={"results": results}
                    )
                else:  # the open ladder's spaces exist once it has results
                    RatingState.objects.filter(ladder=ladder, variant=v).update(results=0)
    return sum(total.values())


def recompute(variant: str | None = None) -> list[ratings.FitReport]:
    """Count the results again from the matches, then fit every variant again from scratch
    (on every ladder)."""
    recount_results(variant)
    if variant:
        reports = [ratings.refresh(variant, ladder=ladder, force=True) for ladder in Ladder]
        return [r for r in reports if r]
    return ratings.refresh_all(force=True)

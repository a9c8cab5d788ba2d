"""A tournament's input limits, defined once for the model, the services, the form and the API."""

from __future__ import annotations

#: Longest tournament name.
NAME_MAX_LENGTH = 100
#: Longest time control text ("600+10" is 6).
TIME_CONTROL_MAX_LENGTH = 20
DEFAULT_TIME_CONTROL = "10+0.1"
#: Bots in one tournament.
MIN_ENTRANTS = 2
MAX_ENTRANTS = 64
#: Games each pair of entrants plays.
MAX_GAMES_PER_PAIR = 100
DEFAULT_GAMES_PER_PAIR = 2
#: A knockout's tie-break mini-matches in a level tie before the higher seed goes through.
MAX_TIEBREAKS = 2
#: A schedule's interval between events, in days (weekly is 7).
MIN_INTERVAL_DAYS = 1
MAX_INTERVAL_DAYS = 365

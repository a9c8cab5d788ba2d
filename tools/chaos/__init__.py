"""The chaos run: a tournament on real workers while they are killed and frozen and the broker
and the database restart (:mod:`tools.chaos.run`), and its accounting of every match
(:mod:`tools.chaos.accounting`). ``python -m tools.chaos`` (``./dev chaos``) runs it."""

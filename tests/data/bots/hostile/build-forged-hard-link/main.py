"""Never runs: its build fails."""

raise SystemExit(1)

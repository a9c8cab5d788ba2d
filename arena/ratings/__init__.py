"""The ratings: every pair's rated results, the ratings fitted from them (maximum likelihood,
:mod:`arena.stats.rating`), each version's history, the leaderboard and its table of the
likelihood of superiority. The games app feeds it each rated result; it knows nothing of
matches."""

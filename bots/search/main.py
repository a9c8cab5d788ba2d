"""The search bot: alpha-beta with iterative deepening, within its clock.

Each action is a ply, but a player's own follow-up actions (removing the row its move made,
then a ring) do not use up depth. Leaves are scored with yinshbot.heuristics. Moves are
ordered by the previous iteration's best line and by a one-ply score. Time: about a thirtieth
of the clock plus most of the increment per turn, never more than a quarter of the clock; an
iteration that cannot finish in time is abandoned and the last complete one is played.

For tests and reproducible matches the search can be bounded by depth or by nodes instead of
time: ``python3 main.py --depth 2`` or ``--nodes 20000`` (or the environment variables
``YINSH_SEARCH_DEPTH`` / ``YINSH_SEARCH_NODES``).
"""

from __future__ import annotations

import os
import random
import sys
import time

import yinshbot
from yinshbot.heuristics import WIN, evaluate

TYPE_CHECKING = False  # importing typing would add to the bot's start-up
if TYPE_CHECKING:
    from typing import Any

MAX_DEPTH = 12
#: Milliseconds kept back per turn for the pipes and start-up noise.
SAFETY_MS = 60


class _OutOfTime(Exception):
    pass


class Search:
    """One search from one position, for the player to act there."""

    def __init__(
        self,
        state: Any,
        *,
        deadline: float | None = None,
        max_nodes: int | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.state = state
        self.me = state.turn
        self.deadline = deadline
        self.max_nodes = max_nodes
        self.nodes = 0
        self.rng = rng or random.Random(0)
        self.started = time.monotonic()

    def _tick(self) -> None:
        self.nodes += 1
        if self.max_nodes is not None and self.nodes > self.max_nodes:
            raise _OutOfTime
        if self.deadline is not None and self.nodes & 127 == 0 and time.monotonic() > self.deadline:
            raise _OutOfTime

    def run(self, max_depth: int = MAX_DEPTH) -> tuple[Any, float, int]:
        """The best action found, its score and the depth completed."""
        s = self.state
        actions = s.legal_actions()
        if len(actions) == 1:
            return actions[0], 0.0, 0
        # Order the root once by a one-ply score; shuffle first so that ties vary by seed.
        self.rng.shuffle(actions)
        scored = []
        for a in actions:
            s.push(a)
            scored.append((evaluate(s, self.me), a))
            s.pop()
        scored.sort(key=lambda x: -x[0])
        order = [a for _, a in scored]
        best, best_score, depth_done = order[0], scored[0][0], 1
        for depth in range(2, max_depth + 1):
            try:
                score, action = self._root(order, depth)
            except _OutOfTime:
                break
            best, best_score, depth_done = action, score, depth
            order.remove(action)
            order.insert(0, action)
            if abs(score) >= WIN / 2:
                break
            if self.deadline is not None and self._too_late_for_next():
                break
        return best, best_score, depth_done

    def _too_late_for_next(self) -> bool:
        """Whether the next iteration (several times the last ones) cannot finish in time."""
        assert self.deadline is not None
        now = time.monotonic()
        return self.deadline - now < (now - self.started) * 3

    def _root(self, order: list[Any], depth: int) -> tuple[float, Any]:
        s = self.state
        me = self.me
        alpha, beta = -float("inf"), float("inf")
        best_action = order[0]
        for a in order:
            s.push(a)
            try:
                again = s.turn == me and not s.is_over()
                score = self._value(depth if again else depth - 1, alpha, beta)
            finally:
                s.pop()
            if score > alpha:
                alpha, best_action = score, a
        return alpha, best_action

    def _value(self, depth: int, alpha: float, beta: float) -> float:
        """Minimax value (for self.me) of the current position, searched ``depth`` plies."""
        self._tick()
        s = self.state
        if s.is_over() or depth <= 0:
            return evaluate(s, self.me)
        actions = s.legal_actions()
        maximizing = s.turn == self.me
        mover = s.turn
        if depth >= 2 and len(actions) > 1:
            keyed = []
            for a in actions:
                s.push(a)
                keyed.append((evaluate(s, self.me), a))
                s.pop()
            keyed.sort(key=lambda x: -x[0] if maximizing else x[0])
            actions = [a for _, a in keyed]
        if maximizing:
            value = -float("inf")
            for a in actions:
                s.push(a)
                try:
                    again = s.turn == mover and not s.is_over()
                    child = self._value(depth if again else depth - 1, alpha, beta)
                finally:
                    s.pop()
                if child > value:
                    value = child
                if value > alpha:
                    alpha = value
                if alpha >= beta:
                    break
            return value
        value = float("inf")
        for a in actions:
            s.push(a)
            try:
                again = s.turn == mover and not s.is_over()
                child = self._value(depth if again else depth - 1, alpha, beta)
            finally:
                s.pop()
            if child < value:
                value = child
            if value < beta:
                beta = value
            if alpha >= beta:
                break
        return value


def budget_ms(you_ms: int, increment_ms: int, ply: int) -> float:
    """How long to think this turn."""
    share = you_ms / 30 + 0.8 * increment_ms
    return max(1.0, min(share, you_ms / 4) - SAFETY_MS)


class Bot:
    """The search bot's state across one game."""

    def __init__(self, depth: int | None = None, nodes: int | None = None) -> None:
        self.depth = depth
        self.nodes = nodes
        self.rng: random.Random | None = None

    def start(self, hello: yinshbot.Hello) -> None:
        self.rng = random.Random(f"{hello.seed}/{hello.color}/search")

    def choose(self, request: yinshbot.Request) -> tuple[str, dict[str, Any]]:
        started = time.monotonic()
        if self.rng is None:
            self.rng = random.Random(f"{request.seed}/{request.color}/search")
        state = request.state()
        deadline = None
        if self.depth is None and self.nodes is None:
            ms = budget_ms(request.clock.you_ms, request.increment_ms, len(request.history))
            deadline = started + ms / 1000
        search = Search(state, deadline=deadline, max_nodes=self.nodes, rng=self.rng)
        action, score, depth = search.run(self.depth or MAX_DEPTH)
        info = {"score": round(score, 1), "depth": depth, "nodes": search.nodes}
        return str(action), info


def main() -> None:
    depth = int(os.environ.get("YINSH_SEARCH_DEPTH", 0))
    nodes = int(os.environ.get("YINSH_SEARCH_NODES", 0))
    if sys.argv[1:]:
        # Only when there is something to parse: importing argparse adds to a start-up.
        import argparse

        parser = argparse.ArgumentParser()
        parser.add_argument("--depth", type=int, default=depth)
        parser.add_argument("--nodes", type=int, default=nodes)
        args = parser.parse_args()
        depth, nodes = args.depth, args.nodes
    bot = Bot(depth=depth or None, nodes=nodes or None)
    yinshbot.main(bot.choose, on_start=bot.start)


if __name__ == "__main__":
    main()

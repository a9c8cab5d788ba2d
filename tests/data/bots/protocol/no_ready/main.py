"""Reads hello and never answers: the referee gives up after the start-up allowance."""

import sys
import time

sys.stdin.readline()
while True:
    time.sleep(60)

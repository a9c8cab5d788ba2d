"""The transport, with real processes: deadlines, partial lines, caps, end of file, stderr."""

import signal
import sys
import threading
import time

import pytest

from arena.referee.transport import (
    Cancelled,
    Closed,
    LineTooLong,
    LocalProcess,
    PipeTransport,
    Timeout,
    describe_exit,
)

#: A deadline no healthy test gets near: the machine may be busy.
LONG = 60.0


def spawn(code: str, **kwargs) -> PipeTransport:
    return PipeTransport(LocalProcess([sys.executable, "-c", code]), **kwargs)


@pytest.fixture
def bots():
    started: list[PipeTransport] = []

    def start(code: str, **kwargs) -> PipeTransport:
        t = spawn(code, **kwargs)
        started.append(t)
        return t

    yield start
    for t in started:
        t.kill()


def later(seconds: float = LONG) -> float:
    return time.monotonic() + seconds


def test_a_line_is_read_without_its_newline(bots):
    t = bots("import sys; sys.stdout.write(sys.stdin.readline().upper()); sys.stdout.flush()")
    t.send(b"hello\n", later())
    assert t.receive(later()) == b"HELLO"


def test_two_lines_in_one_write_are_two_messages(bots):
    t = bots("import sys; sys.stdout.write('one\\ntwo\\nthr'); sys.stdout.flush(); input()")
    assert t.receive(later()) == b"one"
    assert t.receive(later()) == b"two"


def test_a_partial_line_waits_for_its_end(bots):
    code = (
        "import sys\n"
        "sys.stdout.write('par'); sys.stdout.flush()\n"
        "sys.stdin.readline()\n"
        "sys.stdout.write('tial\\n'); sys.stdout.flush()\n"
        "sys.stdin.readline()\n"
    )
    t = bots(code)
    with pytest.raises(Timeout):
        t.receive(time.monotonic() + 0.3)  # only half a line has come
    t.send(b"go\n", later())
    assert t.receive(later()) == b"partial"


def test_a_silent_bot_times_out_at_the_deadline(bots):
    t = bots("import time; time.sleep(600)")
    start = time.monotonic()
    with pytest.raises(Timeout):
        t.receive(start + 0.2)
    assert time.monotonic() - start >= 0.2


def test_endless_output_without_newline_is_cut_at_the_line_limit(bots):
    t = bots("import sys\nwhile True: sys.stdout.write('x' * 65536)", line_limit=100_000)
    with pytest.raises(LineTooLong, match="100000"):
        t.receive(later())
    assert len(t._buf) <= 100_000 + 65536  # never buffered without end


def test_an_oversized_line_with_its_newline_is_refused(bots):
    t = bots(
        "import sys; sys.stdout.write('y' * 5000 + '\\n'); sys.stdout.flush(); input()",
        line_limit=4096,
    )
    with pytest.raises(LineTooLong):
        t.receive(later())


def test_end_of_output_is_closed_with_the_exit_code(bots):
    t = bots("import sys; sys.exit(3)")
    with pytest.raises(Closed):
        t.receive(later())
    assert t.wait_exit(later()) == 3
    assert describe_exit(t.poll()) == "exit code 3"


def test_a_half_line_then_exit_is_closed(bots):
    t = bots("import sys; sys.stdout.write('{\"type\": '); sys.stdout.flush()")
    with pytest.raises(Closed, match="middle of a line"):
        t.receive(later())


def test_death_by_signal_is_reported(bots):
    t = bots("import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
    with pytest.raises(Closed):
        t.receive(later())
    assert t.wait_exit(later()) == -signal.SIGKILL
    assert describe_exit(t.poll()) == "killed by signal 9 (SIGKILL)"


def test_stderr_is_drained_while_waiting_and_its_tail_kept(bots):
    # 1 MB of stderr would fill the pipe and block the bot if nobody read it.
    code = (
        "import sys\n"
        "for i in range(1024): sys.stderr.write(f'{i:04d}' + 'e' * 1020)\n"
        "sys.stderr.write('THE END'); sys.stderr.flush()\n"
        "print('done', flush=True); input()\n"
    )
    t = bots(code, stderr_limit=4096)
    assert t.receive(later()) == b"done"
    t.drain_stderr()
    assert t.stderr_tail.endswith("THE END")
    assert len(t.stderr_tail) == 4096
    assert t.stderr_bytes == 1024 * 1024 + len("THE END")


def test_writing_to_a_bot_that_exited_is_closed(bots):
    t = bots("pass")
    assert t.wait_exit(later()) == 0
    with pytest.raises(Closed):
        t.send(b"x" * 200_000, later())


def test_writing_to_a_bot_that_never_reads_times_out(bots):
    t = bots("import time; time.sleep(600)")
    with pytest.raises(Timeout):
        t.send(b"x" * 1_000_000, time.monotonic() + 0.3)


def test_a_set_cancel_event_stops_a_wait(bots):
    cancel = threading.Event()
    t = bots("import time; time.sleep(600)", cancel=cancel)
    threading.Timer(0.1, cancel.set).start()
    with pytest.raises(Cancelled):
        t.receive(later())


def test_exit_is_noticed_even_when_a_child_holds_the_output_open(bots):
    # The bot exits; a child it started keeps stdout open: no end of file ever comes.
    code = "import subprocess; subprocess.Popen(['sleep', '600'])"
    t = bots(code)
    start = time.monotonic()
    with pytest.raises(Closed):
        t.receive(start + LONG)
    assert time.monotonic() - start < LONG / 2
    assert t.poll() == 0


def test_closing_input_lets_a_reader_exit(bots):
    t = bots("import sys; sys.stdin.read()")
    t.close_input()
    assert t.wait_exit(later()) == 0


def test_kill_is_idempotent_and_closes_everything(bots):
    t = bots("import time; time.sleep(600)")
    t.kill()
    t.kill()
    assert t.poll() == -signal.SIGKILL
    with pytest.raises(Closed):
        t.receive(later())
    with pytest.raises(Closed):
        t.send(b"x\n", later())


def test_unsolicited_output_is_seen_without_waiting(bots):
    t = bots("print('early', flush=True); input()")
    assert t.receive(later()) == b"early"
    assert t.unsolicited() == b""

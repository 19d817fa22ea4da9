"""Shared pytest setup: the binding on sys.path and the fixture models."""
import os
import pathlib
import sys

ROOT = pathlib.Path(os.environ.get("RESET_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(ROOT / "bindings" / "python"))
FIXTURES = ROOT / "tests" / "fixtures" / "models"


def cancel_while_busy(session, refill, work, refill_above=500, delay=0.05, budget=30.0):
    """Cancel `session` from another thread after `delay` seconds while this
    thread calls work() in a loop; refill() is called, after a reset, once the
    session holds over `refill_above` tokens.  Returns the ResetError that ended the loop
    (None if none came within `budget` seconds).

    reset.h: reset_session_reset drops a request no call has consumed, so the
    reset must not run between the cancel and the call that takes it: the
    canceller and the reset hold one lock, and once the cancel is sent the
    loop resets no more (the next call takes the request)."""
    import threading
    import time

    import reset

    lock = threading.Lock()
    sent = False

    def cancel_once():
        nonlocal sent
        with lock:
            session.cancel()
            sent = True

    timer = threading.Timer(delay, cancel_once)
    timer.start()
    deadline = time.monotonic() + budget
    try:
        while time.monotonic() < deadline:
            if session.length() > refill_above:
                with lock:
                    refilling = not sent
                    if refilling:
                        session.reset()
                if refilling:
                    refill()
            work()
    except reset.ResetError as error:
        return error
    finally:
        timer.join()
    return None

#!/usr/bin/env python3
"""Drive `reset chat` through a pseudo-terminal, as a person would.

    test_repl.py RESET_BINARY MODEL_DIR

Checks: the banner and prompt, a streamed answer, /policy (valid and not, the
repetition penalty shown by /policy alone),
/stats (with the answer's mean log-probability), /think, /save, /reset,
Ctrl-C in the middle of a long generation (the REPL survives and answers the
next prompt), and Ctrl-D (exit 0); then a conversation kept with --session and
continued in a new process: its last exchange shown, its messages in the line
editor's history (Up recalls them); keys and Ctrl-D typed while an answer
streams; the terminal's settings given back on SIGTERM, and while the REPL is
stopped by Ctrl-Z under a shell with job control (held again once it goes on);
Ctrl-C's signal handled on any thread.
Each check fails with what the terminal showed.
"""
import ctypes
import json
import math
import os
import pty
import re
import select
import signal
import sys
import tempfile
import termios
import time

ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]|[\x01\x02]")


class Terminal:
    def __init__(self, argv):
        env = dict(os.environ, TERM="xterm", NO_COLOR="1")
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.execve(argv[0], argv, env)
        self.buffer = b""

    def read(self, timeout):
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return False
        try:
            data = os.read(self.fd, 65536)
        except OSError:
            return False
        self.buffer += data
        return bool(data)

    def expect(self, pattern, timeout=20.0, what=""):
        """Wait until the cleaned output (from the mark on) matches pattern."""
        deadline = time.time() + timeout
        regex = re.compile(pattern)
        while True:
            text = ANSI.sub(b"", self.buffer).decode("utf-8", "replace")
            match = regex.search(text)
            if match:
                self.buffer = self.buffer[len(self.buffer):]  # consume everything seen
                return text[: match.end()]
            if time.time() > deadline or not self.read(min(0.5, max(0.0, deadline - time.time()))):
                if time.time() > deadline:
                    raise AssertionError(f"{what or pattern!r} not seen within {timeout}s; the terminal showed:\n"
                                         f"{text[-3000:]}")

    def send(self, text):
        os.write(self.fd, text.encode())

    def keys(self, text):
        """Send keys typed at a prompt that has just appeared, a little later, as a person would.
        (Before session 45 a key that arrived while the REPL was away from its prompt could be
        lost: seen once under ctest -j2, a Ctrl-D never reached the REPL.  The type-ahead check
        at the end sends its keys at once.)"""
        time.sleep(0.3)
        self.send(text)

    def quit(self):
        """Ctrl-D at the prompt; the exit code.  Sent again if the REPL is still there after 3 s
        (a lost key, as above): a REPL that ignores Ctrl-D still fails after the third."""
        for attempt in range(3):
            self.keys("\x04")
            try:
                return self.wait_exit(timeout=3.0 if attempt < 2 else 10.0, kill=attempt == 2)
            except AssertionError:
                if attempt == 2:
                    raise

    def wait_exit(self, timeout=10.0, kill=True):
        deadline = time.time() + timeout
        while time.time() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                return os.waitstatus_to_exitcode(status)
            self.read(0.1)
        if kill:
            os.kill(self.pid, signal.SIGKILL)
        raise AssertionError("the REPL did not exit; it showed:\n" + self.buffer.decode("utf-8", "replace")[-2000:])


class JobTerminal(Terminal):
    """The REPL as a job of a shell with job control, so that Ctrl-Z stops it: the pty's session
    leader here is a small Python "shell" that runs the REPL in a process group of its own in the
    foreground (the kernel discards a terminal's stop signal to an orphaned process group, such as
    a REPL alone in its session).  Like a shell it takes the terminal back when the job stops, and
    gives it back and continues the job on cont(); it changes no terminal settings itself."""

    def __init__(self, argv):
        report_r, report_w = os.pipe()
        command_r, command_w = os.pipe()
        env = dict(os.environ, TERM="xterm", NO_COLOR="1")
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.close(report_r)
            os.close(command_w)
            job = os.fork()
            if job == 0:
                os.setpgid(0, 0)
                os.execve(argv[0], argv, env)
            os.setpgid(job, job)
            signal.signal(signal.SIGTTOU, signal.SIG_IGN)
            os.tcsetpgrp(0, job)
            while True:
                _, status = os.waitpid(job, os.WUNTRACED)
                if os.WIFSTOPPED(status):
                    os.tcsetpgrp(0, os.getpgrp())
                    os.write(report_w, b"S")
                    os.read(command_r, 1)
                    os.tcsetpgrp(0, job)
                    os.kill(-job, signal.SIGCONT)
                else:
                    os._exit(os.waitstatus_to_exitcode(status) & 0xFF)
        os.close(report_w)
        os.close(command_r)
        self.report, self.command = report_r, command_w
        self.buffer = b""

    def wait_stopped(self, timeout=5.0):
        ready, _, _ = select.select([self.report], [], [], timeout)
        assert ready and os.read(self.report, 1) == b"S", "the REPL did not stop"

    def cont(self):
        os.write(self.command, b"C")


PROMPT = r"(^|\n)> $"


def main():
    binary, model = sys.argv[1], sys.argv[2]
    transcript = os.path.join(tempfile.mkdtemp(prefix="reset-repl-"), "chat.md")
    # A context long enough that an unlimited answer runs for many seconds.
    term = Terminal([binary, "chat", model, "--context", "32768", "--max-tokens", "40", "--threads", "1"])

    term.expect(r"/help for commands.*\n> $", what="banner and prompt")
    print("ok: banner and prompt")

    term.send("What is 2+3?\r")
    answer = term.expect(PROMPT, what="an answer, then the prompt again")
    body = answer.split("What is 2+3?", 1)[-1].strip()
    assert len(body) > 10, f"the answer looks empty: {answer!r}"
    print("ok: streamed answer", repr(body[:40]))

    term.send("/policy fixed 0.7 top_p=0.9 seed=3\r")
    term.expect(r"policy: fixed T=0\.7 top_p=0\.9.*\n> $", what="/policy fixed")
    term.send("/policy nonsense\r")
    term.expect(r"unknown policy 'nonsense'.*\n> $", what="/policy error")
    # The repetition penalty (0.3): set by its key, shown by /policy alone, kept when a value
    # outside [0.1, 10] is refused (the library's message names the field).
    term.send("/policy greedy repetition_penalty=1.2\r")
    term.expect(r"policy: greedy repetition_penalty=1\.2\r?\n> $", what="/policy greedy repetition_penalty=1.2")
    term.send("/policy\r")
    term.expect(r"/policy\r?\npolicy: greedy repetition_penalty=1\.2\r?\n> $", what="/policy showing the penalty")
    term.send("/policy greedy repetition_penalty=11\r")
    term.expect(r"policy not changed: policy parameter repetition_penalty is 11 .*\n> $", what="/policy refusing 11")
    term.send("/policy\r")
    term.expect(r"/policy\r?\npolicy: greedy repetition_penalty=1\.2\r?\n> $", what="/policy after the refusal")
    term.send("/policy reset t_low=0.6 tau0=1.5\r")
    term.expect(r"policy: reset T_high=1 .*\n> $", what="/policy reset")
    print("ok: /policy")

    term.send("Count to ten.\r")
    term.expect(PROMPT, what="an answer under ReSET")
    term.send("/stats\r")
    stats = term.expect(r"temperature:.*\n> $", what="/stats")
    for needle in ("prefill:", "tokens/s", "decode:", "40 tokens", "entropy (nats): mean"):
        assert needle in stats, f"/stats lacks {needle!r}: {stats!r}"
    temps = re.findall(r"T=([0-9.]+) x(\d+)", stats)
    assert temps and sum(int(n) for _, n in temps) == 40, f"temperature counts: {stats!r}"
    assert {t for t, _ in temps} <= {"0.60", "1.00"}, f"ReSET applies T_low or T_high only: {stats!r}"
    # The answer's mean log p(token) under the raw model distribution, and exp(-mean); the random
    # fixture is far from certain, so the mean is clearly below 0.
    m = re.search(r"log-prob: mean (-?[0-9.]+) nats/token, perplexity ([0-9.]+) \(raw model distribution\)", stats)
    assert m, f"/stats lacks the log-prob line: {stats!r}"
    mean, perplexity = float(m[1]), float(m[2])
    assert mean < -0.1 and abs(perplexity - math.exp(-mean)) <= 0.005 + 0.0006 * perplexity, stats
    print("ok: /stats", temps)

    term.send("/think off\r")
    term.expect(r"thinking off.*\n> $", what="/think off")
    term.send(f"/save {transcript}\r")
    term.expect(r"saved 4 messages.*\n> $", what="/save")
    with open(transcript, encoding="utf-8") as f:
        saved = f.read()
    assert "### user\n\nWhat is 2+3?" in saved and "### assistant" in saved, saved[:300]
    print("ok: /think, /save")

    # Ctrl-C in the middle of a long answer: it stops, the REPL stays.
    term.send("/max 0\r")
    term.expect(r"max tokens per answer: 0.*\n> $", what="/max 0")
    term.send("Tell me a very long story.\r")
    term.expect(r"story\.\r?\n[\s\S]{300}", what="the long answer streaming", timeout=20)
    time.sleep(0.3)
    started = time.time()
    term.send("\x03")
    term.expect(r"\[interrupted\]\s*\n> $", what="[interrupted] and the prompt after Ctrl-C", timeout=10)
    print(f"ok: Ctrl-C stopped the answer in {time.time() - started:.2f}s")

    term.send("/max 15\r")
    term.expect(r"max tokens per answer: 15.*\n> $", what="/max 15")
    term.send("And now?\r")
    answer = term.expect(PROMPT, what="an answer after Ctrl-C")
    assert len(answer.split("And now?", 1)[-1].strip()) > 3, f"no answer after Ctrl-C: {answer!r}"
    term.send("/stats\r")
    stats = term.expect(r"temperature:.*\n> $", what="/stats after Ctrl-C")
    assert "15 tokens" in stats, stats
    print("ok: answers after Ctrl-C")

    term.send("/reset\r")
    term.expect(r"conversation cleared.*\n> $", what="/reset")
    term.send("/help\r")
    term.expect(r"(?s)/policy greedy.*Ctrl-C.*\n> $", what="/help")

    # Ctrl-C at the prompt drops the typed text and gives a fresh prompt;
    # Ctrl-D must still quit afterwards (libedit's state is reset).
    term.send("half a question")
    time.sleep(0.2)
    term.send("\x03")
    term.expect(r"\n> $", what="a fresh prompt after Ctrl-C at the prompt")

    code = term.quit()
    assert code == 0, f"Ctrl-D exit code {code}"
    print("ok: Ctrl-D quits with 0")

    # --session at a terminal: the process that continues a conversation shows where it stopped
    # (the last question, the answer's end without its reasoning) and puts the conversation's
    # messages in the line editor's history, so Up recalls them as in the process that wrote it.
    directory = os.path.join(tempfile.mkdtemp(prefix="reset-repl-session-"), "talk")
    argv = [binary, "chat", model, "--max-tokens", "12", "--threads", "1", "--session", directory]
    term = Terminal(argv)
    term.expect(r"/help for commands.*\n> $", what="banner of the first --session process")
    for question in ("What is 2+3?", "And 4+4?"):
        term.keys(question + "\r")
        term.expect(PROMPT, what=f"the answer to {question}")
    assert term.quit() == 0, "the first --session process did not exit with 0"
    with open(os.path.join(directory, "conversation.json"), encoding="utf-8") as f:
        last_answer = json.load(f)["messages"][-1]["content"]
    shown_answer = last_answer.rsplit("</think>", 1)[-1].strip().splitlines()[-1]

    term = Terminal(argv)
    recap = term.expect(r"loaded 4 messages[\s\S]*\n> $", what="the loaded conversation and the prompt")
    assert re.search(r"last exchange:\r?\n> And 4\+4\?\r?\n", recap), f"no last exchange: {recap!r}"
    # Reasoning that ended is left out; an answer cut short inside it is labelled as reasoning.
    assert ("(reasoning left out)" in recap) == ("</think>" in last_answer), recap
    assert ("(stopped in its reasoning)" in recap) == ("<think>" in last_answer and "</think>" not in last_answer), \
        recap
    assert shown_answer in recap.replace("\r", ""), f"the answer's end {shown_answer!r} not shown: {recap!r}"
    term.keys("\x1b[A")  # Up: the last message of the loaded conversation
    term.expect(r"> And 4\+4\?$", what="Up recalling the loaded conversation's last message")
    term.send("\x1b[A")
    term.expect(r"What is 2\+3\?$", what="Up again recalling the first message")
    term.send("\r")  # sends the recalled message: the conversation goes on
    term.expect(PROMPT, what="an answer to the recalled message")
    assert term.quit() == 0, "the second --session process did not exit with 0"
    with open(os.path.join(directory, "conversation.json"), encoding="utf-8") as f:
        messages = json.load(f)["messages"]
    assert [m["content"] for m in messages if m["role"] == "user"] == ["What is 2+3?", "And 4+4?", "What is 2+3?"], \
        messages
    print("ok: --session at a terminal shows the last exchange, and Up recalls the loaded messages")

    # The recap's rules on written conversations (no state: they load all the same): reasoning that
    # ended is left out, an answer cut short inside its reasoning is labelled so, a long answer is
    # shown by its last 12 lines.
    long_answer = "\n".join(f"line {i}" for i in range(1, 21))
    for answer, shown, hidden in (
            ("<think>\nWe add.\n</think>\n\nThe answer is 5.", r"\(reasoning left out\)\r?\nThe answer is 5\.\r?\n", "We add"),
            ("<think>\nWe add the tw", r"\(stopped in its reasoning\)\r?\nWe add the tw\r?\n", "<think>"),
            (long_answer, r"\.\.\.\r?\nline 9\r?\n(line \d+\r?\n){10}line 20\r?\n", "line 8\r")):
        directory = os.path.join(tempfile.mkdtemp(prefix="reset-repl-recap-"), "talk")
        os.makedirs(directory)
        with open(os.path.join(directory, "conversation.json"), "w", encoding="utf-8") as f:
            json.dump({"format": "libreset-chat", "version": 1, "thinking": True, "kept_from": 0, "messages": [
                {"role": "user", "content": "What is 2+3?"}, {"role": "assistant", "content": answer}]}, f)
        term = Terminal([binary, "chat", model, "--threads", "1", "--session", directory])
        recap = term.expect(r"last exchange:[\s\S]*\n> $", what="the recap of a written conversation")
        assert re.search(r"last exchange:\r?\n> What is 2\+3\?\r?\n" + shown + r"> $", recap), recap
        assert hidden not in recap, f"{hidden!r} shown: {recap!r}"
        assert term.quit() == 0, "a --session process on a written conversation did not exit with 0"
    print("ok: the recap leaves finished reasoning out, labels unfinished reasoning, shows a long answer's end")

    # Keys typed while an answer streams wait for the next prompt as typed (chat.cpp: TypeAhead).
    # The keys go out once the answer has begun to stream; at up to 4000 tokens it then runs on for
    # ~0.2 s here.  Each key is sent once: no resend.  With the terminal left in canonical mode
    # during the answer, as before session 45, each check failed 4 times in 4: the line discipline
    # echoed the text into the answer (shown twice) and took the Ctrl-D as its end-of-file, which
    # the line editor then read as a NUL (lost).
    argv = [binary, "chat", model, "--max-tokens", "4000", "--context", "8192", "--threads", "1"]
    term = Terminal(argv)
    term.expect(r"/help for commands.*\n> $", what="banner (type-ahead)")
    term.keys("Tell me a very long story.\r")
    term.expect(r"story\.\r?\n[\s\S]{100}", what="the answer streaming (type-ahead)")
    term.send("/max 3\r")
    shown = term.expect(r"max tokens per answer: 3.*\n> $", what="/max 3 typed during the answer, run after it")
    # Echoed once, by the line editor at the prompt.
    assert shown.count("/max 3") == 1, f"the typed text shown {shown.count('/max 3')} times: {shown[-300:]!r}"
    term.send("/max 4000\r")
    term.expect(r"max tokens per answer: 4000.*\n> $", what="/max 4000")
    term.send("Tell me a very long story.\r")
    term.expect(r"story\.\r?\n[\s\S]{100}", what="the second answer streaming (type-ahead)")
    term.send("\x04")
    code = term.wait_exit(timeout=10.0)
    assert code == 0, f"Ctrl-D typed during an answer: exit code {code}"
    print("ok: text and Ctrl-D typed while an answer streams reach the next prompt")

    # SIGTERM while an answer streams (the terminal held): the process ends by the signal, and the
    # terminal's settings are what they were before it started (the handler gives them back; this
    # test's Python parent restores nothing: without the handler the terminal stayed unechoed, 4
    # times in 4).
    term = Terminal(argv)
    before = termios.tcgetattr(term.fd)
    term.expect(r"/help for commands.*\n> $", what="banner (SIGTERM)")
    term.keys("Tell me a very long story.\r")
    term.expect(r"story\.\r?\n[\s\S]{100}", what="the answer streaming (SIGTERM)")
    os.kill(term.pid, signal.SIGTERM)
    _, status = os.waitpid(term.pid, 0)
    assert os.waitstatus_to_exitcode(status) == -signal.SIGTERM, f"exit status {status}"
    assert termios.tcgetattr(term.fd) == before, "the terminal's settings were not given back after SIGTERM"
    print("ok: SIGTERM during an answer gives the terminal's settings back")

    # Ctrl-Z while an answer streams, under a shell with job control: while the REPL is stopped the
    # terminal has its own settings (echo, lines) for the shell, and once the job continues the
    # REPL holds it again until its next prompt (chat.cpp: on_stop_signal).  This test's "shell"
    # changes no settings, as a plain parent would not: without the handler the terminal stayed
    # unechoed while stopped, and after the job continued it was not held again.
    long_argv = [binary, "chat", model, "--max-tokens", "30000", "--context", "32768", "--threads", "1"]
    term = JobTerminal(long_argv)
    before = termios.tcgetattr(term.fd)
    term.expect(r"/help for commands.*\n> $", what="banner (Ctrl-Z)")
    term.keys("Tell me a very long story.\r")
    term.expect(r"story\.\r?\n[\s\S]{100}", what="the answer streaming (Ctrl-Z)")
    term.send("\x1a")
    term.wait_stopped()
    assert termios.tcgetattr(term.fd) == before, "the terminal's settings were not given back while stopped"
    term.cont()
    # The answer runs on for seconds at up to 30,000 tokens; the REPL takes the terminal again as
    # soon as it runs (polled for up to 5 s: a loaded machine may be slow to schedule it).
    deadline = time.time() + 5.0
    while termios.tcgetattr(term.fd)[3] & (termios.ECHO | termios.ICANON) and time.time() < deadline:
        term.read(0.05)
    lflag = termios.tcgetattr(term.fd)[3]
    assert not lflag & (termios.ECHO | termios.ICANON), "the terminal was not held again once the job continued"
    term.send("\x03")  # the answer stops; the prompt comes back
    term.expect(PROMPT, what="the prompt after Ctrl-C (Ctrl-Z)")
    assert term.quit() == 0, "the REPL continued after Ctrl-Z did not exit with 0"
    assert termios.tcgetattr(term.fd) == before, "the terminal's settings were not given back at the end"
    print("ok: Ctrl-Z during an answer gives the terminal back while stopped and holds it again after")

    # SIGINT handled on a thread other than the main one (the kernel may deliver a process's signal
    # to any thread that does not block it): sent to each of the REPL's other threads in turn, its
    # Ctrl-C watcher's included, while an answer streams, it still stops the answer.  Before session
    # 46 the watcher's read of its pipe ended at the EINTR and every later Ctrl-C was lost: this
    # failed 4 times in 4.
    term = Terminal(argv)
    term.expect(r"/help for commands.*\n> $", what="banner (SIGINT on other threads)")
    term.keys("/max 0\r")
    term.expect(r"max tokens per answer: 0.*\n> $", what="/max 0 (SIGINT on other threads)")
    term.send("Tell me a very long story.\r")
    term.expect(r"story\.\r?\n[\s\S]{100}", what="the answer streaming (SIGINT on other threads)")
    tgkill = ctypes.CDLL(None, use_errno=True).syscall
    others = [int(t) for t in os.listdir(f"/proc/{term.pid}/task") if int(t) != term.pid]
    assert others, "the REPL runs no thread besides its main one"
    for tid in others:
        tgkill(234, term.pid, tid, signal.SIGINT)  # SYS_tgkill on x86-64
        time.sleep(0.05)
    term.expect(r"\[interrupted\]\s*\n> $", what="[interrupted] after SIGINT on the other threads", timeout=10)
    assert term.quit() == 0, "the REPL did not exit with 0 after SIGINT on its other threads"
    print(f"ok: SIGINT handled on any of the REPL's {len(others)} other threads stops the answer")


if __name__ == "__main__":
    main()

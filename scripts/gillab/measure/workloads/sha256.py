"""SHA-256 over threads (document 000, second table).

One bytes object of ``message_bytes`` is made once and reused; ``messages`` digests of it are
split evenly over ``threads`` threads, each calling ``hashlib.sha256(m).digest()``.  The
result is the wall time from creating the threads to joining them.
"""
import hashlib
import sys

from _common import main, timed_threads


def hash_messages(message, count):
    for _ in range(count):
        hashlib.sha256(message).digest()


def run(params):
    threads = int(params["threads"])
    messages = int(params["messages"])
    size = int(params["message_bytes"])
    if threads <= 0 or messages % threads:
        raise ValueError("messages must split evenly over threads >= 1")
    message = b"\x5a" * size
    seconds = timed_threads(hash_messages, [(message, messages // threads)] * threads)
    return {"seconds": seconds, "messages_per_thread": messages // threads}


if __name__ == "__main__":
    sys.exit(main(run))

"""A training step waits on a batch queue that no producer fills. faulthandler's watchdog
(what pytest-timeout and many launchers use) dumps every thread's stack after 5 s and exits."""
import faulthandler
import queue
import sys

faulthandler.dump_traceback_later(5, exit=True, file=sys.stderr)
batches: "queue.Queue[list[float]]" = queue.Queue()


def train_step():
    batch = batches.get()           # bug: the producer thread was never started
    return sum(batch)


print("step 0: waiting for a batch", flush=True)
train_step()

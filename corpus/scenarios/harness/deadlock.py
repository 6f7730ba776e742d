"""Two worker threads take the same two locks in opposite order: a classic lock-order deadlock.
The data loader never finishes; the harness's timeout kills the job."""
import threading
import time

cache_lock = threading.Lock()
stats_lock = threading.Lock()


def loader():
    with cache_lock:
        time.sleep(0.2)
        with stats_lock:
            pass


def reporter():
    with stats_lock:
        time.sleep(0.2)
        with cache_lock:
            pass


threads = [threading.Thread(target=loader), threading.Thread(target=reporter)]
print("starting loader and reporter threads", flush=True)
for t in threads:
    t.start()
for t in threads:
    t.join()
print("done")

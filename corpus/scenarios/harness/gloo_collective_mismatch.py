"""Two gloo ranks; rank 1 skips the all_reduce that rank 0 enters (a collective called on one branch only).
Rank 0 waits for its peer until the process-group timeout."""
import datetime
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def worker(rank: int) -> None:
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29518", rank=rank, world_size=2,
                            timeout=datetime.timedelta(seconds=5))
    grad = torch.ones(1024)
    if rank == 0:                     # bug: only rank 0 syncs gradients
        dist.all_reduce(grad)
    else:
        time.sleep(8)
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.start_processes(worker, nprocs=2, start_method="spawn")

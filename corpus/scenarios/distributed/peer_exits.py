"""Rank 1 exits (a crash in its data loader, say) right after joining the process group; rank 0 is
inside all_reduce and loses its peer's connection."""
import datetime
import os
import time

import torch
import torch.distributed as dist

from _dist import launch


def worker(rank: int, world_size: int, init_method: str) -> None:
    dist.init_process_group("gloo", init_method=init_method, rank=rank, world_size=world_size,
                            timeout=datetime.timedelta(seconds=10))
    if rank == 1:
        dist.barrier()
        time.sleep(0.5)
        os._exit(0)              # dies without leaving the group
    dist.barrier()
    dist.all_reduce(torch.ones(1 << 20))
    dist.destroy_process_group()


if __name__ == "__main__":
    launch(worker)

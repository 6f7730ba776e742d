"""Rank 0 broadcasts float32 weights; rank 1 allocated its receive buffer as float16 (same shape)."""
import datetime

import torch
import torch.distributed as dist

from _dist import launch


def worker(rank: int, world_size: int, init_method: str) -> None:
    dist.init_process_group("gloo", init_method=init_method, rank=rank, world_size=world_size,
                            timeout=datetime.timedelta(seconds=10))
    weights = torch.randn(4096) if rank == 0 else torch.empty(4096, dtype=torch.float16)
    dist.broadcast(weights, src=0)
    dist.destroy_process_group()


if __name__ == "__main__":
    launch(worker)

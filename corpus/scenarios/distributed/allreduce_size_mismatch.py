"""Two gloo ranks all_reduce gradients of different lengths: rank 1 built its buffer from a
different model config (512 elements instead of 1024)."""
import datetime

import torch
import torch.distributed as dist

from _dist import launch


def worker(rank: int, world_size: int, init_method: str) -> None:
    dist.init_process_group("gloo", init_method=init_method, rank=rank, world_size=world_size,
                            timeout=datetime.timedelta(seconds=10))
    grad = torch.ones(1024 if rank == 0 else 512)
    dist.all_reduce(grad)
    dist.destroy_process_group()


if __name__ == "__main__":
    launch(worker)

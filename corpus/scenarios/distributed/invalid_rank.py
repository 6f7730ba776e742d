"""A launcher computes RANK as 2 * local index: the second process asks for rank 2 in a world of 2."""
import datetime

import torch.distributed as dist

from _dist import launch


def worker(rank: int, world_size: int, init_method: str) -> None:
    dist.init_process_group("gloo", init_method=init_method, rank=2 * rank, world_size=world_size,
                            timeout=datetime.timedelta(seconds=5))
    dist.destroy_process_group()


if __name__ == "__main__":
    launch(worker)

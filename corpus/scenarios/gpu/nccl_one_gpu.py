"""Two NCCL ranks on a one-GPU machine, both on cuda:0: NCCL refuses duplicate devices in one communicator."""
import datetime
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def worker(rank: int) -> None:
    torch.cuda.set_device(0)                 # bug: rank % torch.cuda.device_count() == 0 for both ranks
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29531", rank=rank, world_size=2,
                            timeout=datetime.timedelta(seconds=60))
    t = torch.ones(1024, device="cuda")
    dist.all_reduce(t)
    torch.cuda.synchronize()
    print(f"rank {rank}: {t[0].item()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    os.environ.setdefault("NCCL_DEBUG", "WARN")
    mp.start_processes(worker, nprocs=2, start_method="spawn")

"""Helper: run `worker(rank, world_size, init_method)` on two gloo ranks on 127.0.0.1 (a free port)."""
import socket

import torch.multiprocessing as mp


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(worker, world_size: int = 2) -> None:
    init_method = f"tcp://127.0.0.1:{free_port()}"
    mp.start_processes(worker, args=(world_size, init_method), nprocs=world_size, start_method="spawn")

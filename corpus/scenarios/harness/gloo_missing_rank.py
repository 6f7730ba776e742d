"""torch.distributed with world_size=2 but only rank 0 launched: the rendezvous waits, then times out."""
import datetime

import torch.distributed as dist

print("rank 0 of 2: init_process_group(gloo)", flush=True)
dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29517", rank=0, world_size=2,
                        timeout=datetime.timedelta(seconds=5))

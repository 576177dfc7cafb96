"""DistributedDataParallel already averages gradients: nothing to flag here."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main() -> None:
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = nn.Sequential(nn.Linear(4096, 4096), nn.ReLU(), nn.Linear(4096, 1000)).cuda()
    ddp_model = DDP(model, device_ids=[local_rank], bucket_cap_mb=25)
    optimizer = torch.optim.AdamW(ddp_model.parameters(), lr=3e-4)
    for _ in range(10):
        optimizer.zero_grad()
        loss = ddp_model(torch.randn(64, 4096, device="cuda")).square().mean()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()

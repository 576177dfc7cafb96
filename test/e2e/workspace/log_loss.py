"""Logs the loss averaged over ranks: the reduced tensor is the 0-d loss, not a gradient bucket."""
import torch.distributed as dist


def averaged_loss(model, inputs, targets, criterion) -> float:
    loss = criterion(model(inputs), targets)
    reported = loss.detach()
    dist.all_reduce(reported)
    return reported.item() / dist.get_world_size()

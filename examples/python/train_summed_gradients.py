"""Data-parallel SGD with a hand-written gradient sync that sums across ranks and never divides by the world size.

With N ranks every update is N times too large, as if the learning rate were multiplied by N. `collective-profiler
check` reports it as CP001; train_averaged_gradients.py beside this file is the corrected loop.
"""
import torch
import torch.distributed as dist
import torch.nn as nn


def sync_gradients(model: nn.Module) -> None:
    for param in model.parameters():
        dist.all_reduce(param.grad, op=dist.ReduceOp.SUM)


def train(model: nn.Module, loader, epochs: int = 1) -> None:
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = nn.CrossEntropyLoss()
    for _ in range(epochs):
        for inputs, targets in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(inputs), targets)
            loss.backward()
            sync_gradients(model)
            optimizer.step()


if __name__ == "__main__":
    dist.init_process_group("gloo")
    train(nn.Linear(1024, 10), [])

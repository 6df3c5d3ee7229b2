"""Training loops the studies share: epochs of an optimizer over a dataset, and fine-tuning a
network after its activation was swapped - the recovery the article's "unless the modified
model is retrained or fine-tuned" implies."""
from __future__ import annotations

import copy

# The fine-tune's batch order: its own stream, drawn from the seed (not the training's)
FINE_TUNE_STREAM = 7919


def train_epochs(model, activation, x, y, epochs: int, optimizer, batch_size: int,
                 generator, after_epoch=None) -> None:
    """``epochs`` epochs of ``optimizer`` over (x, y) with ``activation`` in the network (None:
    its own), batches in the order ``generator`` draws; ``after_epoch()`` after each."""
    import torch.nn.functional as F
    from torch import randperm

    for _ in range(epochs):
        model.train()
        for batch in randperm(len(x), generator=generator).split(batch_size):
            optimizer.zero_grad()
            F.cross_entropy(model(x[batch], activation), y[batch]).backward()
            optimizer.step()
        if after_epoch is not None:
            after_epoch()


def fine_tune(model, activation, train: tuple, test: tuple, epochs: tuple[int, ...], lr: float,
              batch_size: int, seed: int, accuracy) -> dict[int, float]:
    """A copy of ``model`` fine-tuned with the swapped ``activation`` (Adam at ``lr``), its
    test accuracy after each number of epochs in ``epochs`` (one run, evaluated on the way;
    0: the swapped network as it is). The original is left as it was."""
    import torch

    tuned = copy.deepcopy(model)
    optimizer = torch.optim.Adam(tuned.parameters(), lr=lr)
    order = torch.Generator().manual_seed(seed + FINE_TUNE_STREAM)
    out, done = {}, 0
    for k in sorted(epochs):
        train_epochs(tuned, activation, train[0], train[1], k - done, optimizer, batch_size,
                     order)
        done = k
        out[k] = accuracy(tuned, *test, activation)
    return out


def gap_closed(original: float, swapped: float, tuned: float) -> float | None:
    """How much of the accuracy the swap lost the fine-tuning won back: 0 none, 1 all (more
    than 1: better than the original); None where the swap lost nothing."""
    lost = original - swapped
    return None if lost <= 0 else (tuned - swapped) / lost

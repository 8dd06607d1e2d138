"""The trainer's batches: a split's packed positions as tensors on the training device (the
GPU's memory when training there), unpacked and turned by one of the 8 symmetries there, batch
by batch, so the data pipeline is a few tensor operations and never waits on the CPU; the move
targets (and self-play's sparse visit distributions) turn with the planes."""
import functools

import numpy as np
import torch

from gammago.net import planes as P
from gammago.net.sgf_positions import data_size

NPLANES = P.PLANES


# where each move goes under each symmetry: sym_perm(n)[k][i] = index of move i after symmetry k.
# transform_policy(arange) gives the inverse (entry j = the move that lands on j); for the quarter
# turns (k = 1, 3) the two differ, and using it directly rotated those targets the wrong way.
@functools.lru_cache(maxsize=None)
def sym_perm(n):
    return np.stack([np.argsort(P.transform_policy(np.arange(n * n + 1), n, k))
                     for k in range(8)]).astype(np.int64)


# where each point of a transformed plane comes from: P.transform(x, k)[..., j] = x[..., perm[k][j]]
# (points flattened); with it a batch turns in one gather, on whatever device holds it
@functools.lru_cache(maxsize=None)
def point_perm(n):
    return np.stack([P.transform(np.arange(n * n, dtype=np.float64).reshape(n, n), k).ravel()
                     for k in range(8)]).astype(np.int64)


class Positions:
    """One split's packed positions as tensors on `device` (the GPU's memory when training there),
    unpacked and turned by a symmetry batch by batch on that device, so the data pipeline is a
    few tensor operations and never waits on the CPU."""

    def __init__(self, data, which, device):
        self.device = torch.device(device)
        self.size = n = data_size(data)
        self.x = torch.from_numpy(np.ascontiguousarray(data[f"{which}_x"])).to(self.device)
        self.move = torch.from_numpy(data[f"{which}_move"].astype(np.int64)).to(self.device)
        self.value = torch.from_numpy(data[f"{which}_value"].astype(np.float32)).to(self.device)
        vmask = data.get(f"{which}_vmask")
        if vmask is None:           # caches made before value masks: every position's value trains
            vmask = np.ones(len(self.move), np.int8)
        self.vmask = torch.from_numpy(vmask.astype(np.float32)).to(self.device)
        self.n = len(self.move)
        self._shifts = torch.arange(7, -1, -1, dtype=torch.uint8, device=self.device)   # np.packbits' order
        self._points = torch.from_numpy(point_perm(n)).to(self.device)
        self._moves = torch.from_numpy(sym_perm(n)).to(self.device)
        # self-play's policy targets: the search's visit distribution, sparse ([N, K] point
        # indices and probabilities; a value-only position has none); SGF's: the move played
        self.pidx = self.pprob = None
        if f"{which}_pidx" in data:
            self.pidx = torch.from_numpy(data[f"{which}_pidx"].astype(np.int64)).to(self.device)
            self.pprob = torch.from_numpy(data[f"{which}_pprob"].astype(np.float32)).to(self.device)

    def batch(self, idx, ks=None):
        """idx: long tensor of positions; ks: a symmetry (0..7) for each, or None. Returns planes
        [B, NPLANES, n, n] float32, move targets (-1: none), value targets and value masks."""
        b, n = len(idx), self.size
        bits = (self.x[idx].unsqueeze(2) >> self._shifts) & 1
        x = bits.reshape(b, -1)[:, :NPLANES * n * n].reshape(b, NPLANES, n * n)
        move = self.move[idx]
        if ks is not None:
            x = x.gather(2, self._points[ks].unsqueeze(1).expand(-1, NPLANES, -1))
            move = torch.where(move < 0, move, self._moves[ks, move.clamp(min=0)])
        return x.reshape(b, NPLANES, n, n).float(), move, self.value[idx], self.vmask[idx]

    def policy_targets(self, idx, ks=None):
        """The sparse visit-distribution targets of positions idx under symmetries ks, as
        (point indices [B, K], probabilities [B, K]); None for a dataset of SGF moves."""
        if self.pidx is None:
            return None
        pidx = self.pidx[idx]
        if ks is not None:
            pidx = self._moves[ks].gather(1, pidx)
        return pidx, self.pprob[idx]


def batch_tensors(data, which, idx, rng, augment):
    """The positions idx of a split (numpy arrays) as tensors on the CPU, each under a random
    symmetry when augment: (planes, move targets, value targets)."""
    sub = {f"{which}_{k}": data[f"{which}_{k}"][idx] for k in ("x", "move", "value", "vmask")
           if f"{which}_{k}" in data}
    ks = torch.from_numpy(rng.integers(0, 8, size=len(idx))) if augment else None
    x, move, value, _ = Positions(sub, which, "cpu").batch(torch.arange(len(idx)), ks)
    return x, move, value

"""The net the trainer trains (PyTorch): a residual tower under a policy head (softmax over the
points and pass) and a value head (tanh), both size-free (1x1 convolutions and global pooling),
so one net plays every board size. At run time the engine reads its ONNX export
(gammago.net.onnx_export) with onnxruntime (gammago.net.runtime)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

from gammago.net import planes as P
from gammago.net.runtime import VALUE_HEADS

NPLANES = P.PLANES


class ResBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.b1 = nn.BatchNorm2d(c)
        self.c2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.b2 = nn.BatchNorm2d(c)

    def forward(self, x):
        y = F.relu(self.b1(self.c1(x)))
        return F.relu(x + self.b2(self.c2(y)))


class GoNet(nn.Module):
    """planes [N, NPLANES, H, W] -> (policy logits [N, H*W + 1] (last: pass), value [N] in -1..1
    for the side to move).

    Value heads: "own" (the default) predicts a per-point ownership map (tanh, +1 = the mover's
    point) and adds its board mean, times a learnt scale, to a correction from globally pooled
    features before the final tanh: area scoring counts points, so the map gives the value a
    direct, size-free path from "whose is each point" to "who wins". "pool" (the first shipped
    net's head) only sees mean- and max-pooled features through two dense layers."""

    VALUE_HEADS = VALUE_HEADS          # gammago.net.runtime's: the names the metadata carries

    def __init__(self, blocks=4, channels=48, head=32, value_hidden=64, value_head="own"):
        super().__init__()
        if value_head not in self.VALUE_HEADS:
            raise ValueError(f"value_head must be one of {self.VALUE_HEADS}, not {value_head!r}")
        self.blocks, self.channels, self.value_head = blocks, channels, value_head
        self.stem = nn.Sequential(nn.Conv2d(NPLANES, channels, 3, padding=1, bias=False),
                                  nn.BatchNorm2d(channels), nn.ReLU())
        self.tower = nn.Sequential(*[ResBlock(channels) for _ in range(blocks)])
        self.p_conv = nn.Sequential(nn.Conv2d(channels, head, 1, bias=False), nn.BatchNorm2d(head), nn.ReLU())
        self.p_point = nn.Conv2d(head, 1, 1)
        self.p_pass = nn.Linear(2 * head, 1)
        self.v_conv = nn.Sequential(nn.Conv2d(channels, head, 1, bias=False), nn.BatchNorm2d(head), nn.ReLU())
        self.v_fc = nn.Sequential(nn.Linear(2 * head, value_hidden), nn.ReLU(), nn.Linear(value_hidden, 1))
        if value_head == "own":
            self.v_own = nn.Conv2d(head, 1, 1)
            self.v_scale = nn.Parameter(torch.tensor(3.0))
            self.reset_value_head()

    def reset_value_head(self):
        """Fresh value-head weights; with the "own" head the pooled correction starts at zero, so
        the value starts as tanh(scale * mean ownership)."""
        for part in (self.v_conv, self.v_fc) + ((self.v_own,) if self.value_head == "own" else ()):
            for m in part.modules():
                if hasattr(m, "reset_parameters"):
                    m.reset_parameters()
        if self.value_head == "own":
            with torch.no_grad():
                nn.init.zeros_(self.v_fc[-1].weight)
                nn.init.zeros_(self.v_fc[-1].bias)
                self.v_scale.fill_(3.0)

    def value_parameters(self):
        return [p for name, p in self.named_parameters() if name.startswith("v_")]

    @staticmethod
    def _pool(x):
        # mean and max over the board: the same size of vector for every board size
        return torch.cat([x.mean(dim=(2, 3)), x.amax(dim=(2, 3))], dim=1)

    def forward(self, x):
        h = self.tower(self.stem(x))
        p = self.p_conv(h)
        points = self.p_point(p).flatten(1)
        policy = torch.cat([points, self.p_pass(self._pool(p))], dim=1)
        v = self.v_conv(h)
        z = self.v_fc(self._pool(v)).squeeze(1)                                  # [N]
        if self.value_head == "own":
            z = z + self.v_scale * torch.tanh(self.v_own(v)).mean(dim=(1, 2, 3))  # [N]
        return policy, torch.tanh(z)

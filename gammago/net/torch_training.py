"""Training the net (PyTorch): the losses (policy cross-entropy against the move played or the
search's visit distribution, value MSE on the positions whose value trains), one optimiser step,
the loop over a bounded wall time (linear warm-up, then a cosine to zero; held-out checks and
checkpoints not counted; bfloat16 autocast on a GPU), checkpoints to resume from, and the
held-out figures (policy top-1 / top-5 / NLL, value MSE, by game phase and move number)."""
import contextlib
import math
import os
import time

import numpy as np
import torch
import torch.nn.functional as F
from tqdm import tqdm

from gammago.net.torch_batches import Positions


def _check_value_shape(v, value):
    """The value output and its targets are both [N]: a [N, 1] output against [N] targets would
    broadcast to [N, N] and make the value loss (and MSE) meaningless."""
    if v.shape != value.shape:
        raise ValueError(f"train-net: value output {tuple(v.shape)} vs targets {tuple(value.shape)}")


PLY_BUCKETS = ((0, 50), (50, 100), (100, 150), (150, 200), (200, 10000))   # moves played before


def autocast_for(device):
    """bfloat16 autocast on a CUDA device (the convolutions in bf16, batch norm and losses in
    float32); nothing on the CPU."""
    if torch.device(device).type == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


@torch.no_grad()
def evaluate(model, data, limit=None, batch=256, heldout=None):
    """Held-out policy top-1 / top-5 / NLL and value MSE (targets +-1 for the side to move);
    with the game phase in the data (caches made since the "own" value head), the value MSE of
    each third of the game and the policy top-1 / top-5 by move number too. heldout: the
    held-out Positions already on the model's device (made here when None). limit: score that
    many positions spread evenly over the held-out ones (which come file by file, so the first
    ones may all be of one run, kept for the value alone); the move figures are nan when no
    scored position has a move target."""
    model.eval()
    dev = next(model.parameters()).device
    pos = heldout if heldout is not None else Positions(data, "heldout", dev)
    if limit is None or limit >= pos.n:
        picked = np.arange(pos.n)
    else:
        picked = np.unique(np.linspace(0, pos.n - 1, max(1, limit)).round().astype(np.int64))
    n = len(picked)
    picked_dev = torch.as_tensor(picked, device=dev)
    nll = 0.0
    hit1, hit5, se = (torch.zeros(n, device=dev) for _ in range(3))
    for s in range(0, n, batch):
        at = torch.arange(s, min(n, s + batch), device=dev)
        idx = picked_dev[at]
        x, move, value, _ = pos.batch(idx)
        if dev.type == "cuda":
            x = x.contiguous(memory_format=torch.channels_last)
        with autocast_for(dev):
            logits, v = model(x)
        logits, v = logits.float(), v.float()
        _check_value_shape(v, value)
        nll += policy_loss(logits, move, pos.policy_targets(idx), reduction="sum").item()
        best5 = logits.topk(5, dim=1).indices
        hit1[at] = (best5[:, 0] == move).float()
        hit5[at] = (best5 == move[:, None]).any(dim=1).float()
        se[at] = (v - value) ** 2
    train_mode(model)
    hit1, hit5, se = hit1.cpu().numpy(), hit5.cpu().numpy(), se.cpu().numpy()
    # the move figures over the positions with a move target (a self-play position kept for
    # its value alone has none); the value's over all of them
    has = pos.move[picked_dev].cpu().numpy() >= 0
    hit1, hit5 = np.where(has, hit1, np.nan), np.where(has, hit5, np.nan)
    npol = int(has.sum())
    per = (lambda x: x / npol) if npol else (lambda x: float("nan"))
    out = {"positions": n, "policy_positions": npol,
           "policy_top1": per(float(np.nansum(hit1))), "policy_top5": per(float(np.nansum(hit5))),
           "policy_nll": per(nll), "value_mse": float(se.mean())}
    if "heldout_ply" in data:
        ply = data["heldout_ply"][picked].astype(np.int64)
        third = np.minimum(2, 3 * ply // np.maximum(1, data["heldout_plies"][picked].astype(np.int64)))
        for k, name in enumerate(("first", "middle", "last")):
            sel = third == k
            out[f"value_mse_{name}_third"] = float(se[sel].mean()) if sel.any() else float("nan")
            out[f"positions_{name}_third"] = int(sel.sum())
        for lo, hi in PLY_BUCKETS:
            sel = (ply >= lo) & (ply < hi)
            name = f"moves_{lo + 1}_{hi}" if hi < 10000 else f"moves_{lo + 1}_up"
            sel &= has
            if sel.any():
                out[f"top1_{name}"] = float(hit1[sel].mean())
                out[f"top5_{name}"] = float(hit5[sel].mean())
                out[f"positions_{name}"] = int(sel.sum())
    return out


def train_mode(model):
    """Training mode, except frozen parts (value-only training) keep their batch-norm statistics."""
    model.train()
    if getattr(model, "value_only", False):
        for part in (model.stem, model.tower, model.p_conv):
            part.eval()


def value_head_only(model, fresh=True):
    """Freeze everything but the value head (to retrain a value head on the trunk the policy
    taught): a freshly initialised one, or with fresh=False the one the model has (to fine-tune
    it on other positions, e.g. self-play's, leaving the policy as it was)."""
    model.value_only = True
    for p in model.parameters():
        p.requires_grad_(False)
    if fresh:
        model.reset_value_head()
    for p in model.value_parameters():
        p.requires_grad_(True)


def policy_loss(logits, move, target=None, reduction="mean"):
    """Cross-entropy of the policy against the move played (SGF) or, with target = (point
    indices, probabilities), against the search's visit distribution (self-play); positions
    without a target (move -1, no probabilities) count for nothing."""
    if target is None:
        return F.cross_entropy(logits, move, ignore_index=-1, reduction=reduction)
    pidx, pprob = target
    per = -(pprob * F.log_softmax(logits, dim=1).gather(1, pidx)).sum(1)
    if reduction == "sum":
        return per.sum()
    has = (pprob.sum(1) > 0).float()
    return (per * has).sum() / has.sum().clamp(min=1.0)


def train_step(model, opt, x, move, value, value_weight=1.0, vmask=None, target=None):
    """One optimiser step on a batch; returns (loss, policy loss, value loss, policy logits) as
    tensors (reading them waits for the device). vmask: which positions' value targets train
    (all when None); target: self-play's visit distributions (policy_loss). The value's shape
    is checked against the targets' (_check_value_shape)."""
    with autocast_for(x.device):
        logits, v = model(x)
    logits, v = logits.float(), v.float()
    _check_value_shape(v, value)
    p_loss = policy_loss(logits, move, target)
    if vmask is None:
        v_loss = F.mse_loss(v, value)
    else:
        v_loss = ((v - value) ** 2 * vmask).sum() / vmask.sum().clamp(min=1.0)
    loss = p_loss + value_weight * v_loss
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return loss, p_loss, v_loss, logits


def make_optimizer(model, optimizer, lr, weight_decay):
    params = [p for p in model.parameters() if p.requires_grad]
    if optimizer == "adam":
        return torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay)
    return torch.optim.SGD(params, lr=lr, momentum=0.9, nesterov=True, weight_decay=weight_decay)


def save_checkpoint(path, model, opt, state):
    """The training state (weights, optimiser, time spent, curve), written atomically."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    torch.save({"model": model.state_dict(), "opt": opt.state_dict(), **state}, tmp)
    os.replace(tmp, path)


def train(model, data, minutes, batch, lr, weight_decay, value_weight, seed, eval_every_s, eval_limit,
          optimizer="sgd", checkpoint=None, checkpoint_every_s=300.0, resume=None, heldout=None):
    """Train for `minutes` of wall time (held-out checks not counted): linear warm-up over the
    first 3%, then a cosine to zero at the end. With `checkpoint`, the state is saved there every
    checkpoint_every_s seconds; `resume` (a state read from such a file) goes on where it
    stopped, in the same schedule. heldout: the held-out Positions on the model's device (made
    here when None), for the periodic checks."""
    dev = next(model.parameters()).device
    gen = torch.Generator(device=dev)
    gen.manual_seed(seed + 1)
    opt = make_optimizer(model, optimizer, lr, weight_decay)
    train_mode(model)
    channels_last = dev.type == "cuda"
    if channels_last:
        model.to(memory_format=torch.channels_last)
    pos = Positions(data, "train", dev)
    if heldout is None:
        heldout = Positions(data, "heldout", dev)
    budget = minutes * 60.0
    curve = {"t": [], "train_loss": [], "train_acc": [], "eval_t": [], "eval_nll": [], "eval_top1": [],
             "eval_mse": [], "eval_mse_last_third": []}
    step = seen = 0
    done = 0.0                       # training seconds before this run (a resumed one)
    if resume is not None:
        opt.load_state_dict(resume["opt"])
        curve, step, seen, done = resume["curve"], resume["step"], resume["seen"], resume["elapsed"]
        gen.manual_seed(seed + 1 + step)
        tqdm.write(f"train-net: resuming at {done / 60:.1f} min, {seen} positions seen")
    ema_loss = curve["train_loss"][-1] if curve["train_loss"] else None
    ema_acc = curve["train_acc"][-1] if curve["train_acc"] else None
    start = time.perf_counter() - done
    last_eval = last_ckpt = time.perf_counter()
    bar = tqdm(total=int(budget), initial=int(done), desc="training", unit="s", mininterval=5,
               bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} s [{elapsed}<{remaining}{postfix}]")
    perm, at = torch.randperm(pos.n, device=dev, generator=gen), 0
    sums = torch.zeros(2, device=dev)       # loss and top-1 since the last read, summed on the device
    nsum = 0
    while True:
        now = time.perf_counter()
        frac = (now - start) / budget
        if frac >= 1.0:
            break
        scale = min(1.0, frac / 0.03) * 0.5 * (1 + math.cos(math.pi * frac))
        for g in opt.param_groups:
            g["lr"] = lr * scale
        if at + batch > pos.n:
            perm, at = torch.randperm(pos.n, device=dev, generator=gen), 0
        idx = perm[at:at + batch]
        at += batch
        ks = torch.randint(0, 8, (len(idx),), device=dev, generator=gen)
        x, move, value, vmask = pos.batch(idx, ks)
        if channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
        loss, p_loss, v_loss, logits = train_step(model, opt, x, move, value, value_weight, vmask,
                                                  pos.policy_targets(idx, ks))
        step += 1
        seen += len(idx)
        sums += torch.stack([loss.detach(), (logits.detach().argmax(1) == move).float().mean()])
        nsum += 1
        if step % 10 == 0:         # one read of the device every 10 steps
            l, a = (sums / nsum).tolist()
            sums.zero_()
            nsum = 0
            ema_loss = l if ema_loss is None else 0.8 * ema_loss + 0.2 * l
            ema_acc = a if ema_acc is None else 0.8 * ema_acc + 0.2 * a
            curve["t"].append(time.perf_counter() - start)
            curve["train_loss"].append(ema_loss)
            curve["train_acc"].append(ema_acc)
            bar.n = min(int(budget), int(time.perf_counter() - start))
            bar.set_postfix(loss=f"{ema_loss:.3f}", acc=f"{ema_acc:.3f}", lr=f"{lr * scale:.4f}", pos=seen,
                            refresh=False)
            bar.update(0)
        if time.perf_counter() - last_eval >= eval_every_s:
            t_eval0 = time.perf_counter()
            t = t_eval0 - start
            e = evaluate(model, data, eval_limit, heldout=heldout)
            curve["eval_t"].append(t)
            curve["eval_nll"].append(e["policy_nll"])
            curve["eval_top1"].append(e["policy_top1"])
            curve["eval_mse"].append(e["value_mse"])
            curve["eval_mse_last_third"].append(e.get("value_mse_last_third", float("nan")))
            tqdm.write(f"train-net: {t / 60:5.1f} min, {seen} positions: held-out top-1 "
                       f"{e['policy_top1']:.3f} nll {e['policy_nll']:.3f} value MSE {e['value_mse']:.3f}"
                       f" (last third {e.get('value_mse_last_third', float('nan')):.3f})")
            last_eval = time.perf_counter()
            start += last_eval - t_eval0  # held-out checks do not eat the training budget
        if checkpoint and time.perf_counter() - last_ckpt >= checkpoint_every_s:
            t_ck0 = time.perf_counter()
            save_checkpoint(checkpoint, model, opt, {"elapsed": t_ck0 - start, "step": step, "seen": seen,
                                                      "curve": curve})
            last_ckpt = time.perf_counter()
            start += last_ckpt - t_ck0
    bar.close()
    if checkpoint:
        save_checkpoint(checkpoint, model, opt, {"elapsed": time.perf_counter() - start, "step": step,
                                                  "seen": seen, "curve": curve})
    if channels_last:
        model.to(memory_format=torch.contiguous_format)
    return curve, {"steps": step, "positions_seen": seen, "train_seconds": time.perf_counter() - start}

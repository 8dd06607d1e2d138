"""train-mm's sample of training positions (gammago.moves.train_mm, phase 1): the positions kept
under the corpus-wide budget of --max-positions, their candidates' team keys deduplicated block
by block as the games arrive."""
import numpy as np

SLACK = 0.25                # the kept positions may run this fraction over the budget before a cut
BLOCK_ENTRIES = 1 << 23     # candidate entries per block of teams deduplicated on arrival


class _Block:
    """Positions in arrival order with their candidates' teams deduplicated: team keys `uniq`
    (sorted), and per candidate entry its index into them and how many legal moves share it."""

    def __init__(self, uniq, index, counts, sizes, win, prio):
        self.uniq, self.index, self.counts = uniq, index, counts
        self.sizes, self.win, self.prio = sizes, win, prio
        self._drop_unused()

    def _drop_unused(self):
        used = np.zeros(len(self.uniq), dtype=bool)
        used[self.index] = True
        if not used.all():
            self.index = (np.cumsum(used) - 1).astype(np.int32)[self.index]
            self.uniq = self.uniq[used]

    @property
    def entries(self):
        return len(self.index)

    def keep(self, mask):
        """Only the positions where mask is true; team keys no longer used are dropped."""
        entries = np.repeat(mask, self.sizes)
        self.index, self.counts = self.index[entries], self.counts[entries]
        self.sizes, self.win, self.prio = self.sizes[mask], self.win[mask], self.prio[mask]
        self._drop_unused()

    @classmethod
    def merge(cls, parts):
        """One block of [(sorted keys, [(index into them, counts, sizes, winner, priorities)])]."""
        uniq, inverse = np.unique(np.concatenate([keys for keys, _ in parts]), return_inverse=True)
        cols, at = [[] for _ in range(5)], 0
        for keys, runs in parts:
            renumber = inverse[at: at + len(keys)].astype(np.int32)
            at += len(keys)
            for index, *rest in runs:
                cols[0].append(renumber[index])
                for c, x in zip(cols[1:], rest):
                    c.append(x)
        return cls(uniq, *(np.concatenate(c) for c in cols))

    def part(self):
        return self.uniq, [(self.index, self.counts, self.sizes, self.win, self.prio)]


class Sample:
    """The training positions kept so far, in the order they came, at most budget * (1 + SLACK)
    of them at any time (budget 0: all). When they run over, only the `budget` of lowest
    priority stay, and their threshold keeps later positions out (the workers read it with each
    chunk and skip them). At the end exactly the `budget` positions of lowest priority over the
    whole corpus remain, whatever the order of the games and whoever extracted them."""

    def __init__(self, budget):
        self.budget = budget
        self.threshold = 1.0          # priorities at or above it are out
        self.blocks = []              # sealed _Blocks, oldest first
        self._open = []               # chunks since the last block: (keys, [game runs])
        self._open_entries = 0
        self.positions = 0            # kept now
        self.sampled = 0              # positions the per-game sampling offered

    def add(self, keys, counts, offs, win, prio, sampled):
        """One game: its positions' team keys (offsets per position) as extract_game gives them."""
        uniq, index = np.unique(keys, return_inverse=True)
        self.add_chunk(uniq, [(index.astype(np.int32), counts, offs, win, prio, sampled)])

    def add_chunk(self, keys, games):
        """Games whose team keys are given as indices into one array of distinct keys."""
        runs = []
        for index, counts, offs, win, prio, sampled in games:
            self.sampled += sampled
            sizes = np.diff(offs).astype(np.int16)
            keep = prio < self.threshold
            if not keep.all():
                entries = np.repeat(keep, sizes)
                index, counts = index[entries], counts[entries]
                sizes, win, prio = sizes[keep], win[keep], prio[keep]
            if len(prio):
                runs.append((index, counts, sizes, win, prio))
                self._open_entries += len(index)
                self.positions += len(prio)
        if not runs:
            return
        self._open.append((keys, runs))
        if self._open_entries >= BLOCK_ENTRIES:
            self._seal()
        if self.budget and self.positions > self.budget * (1 + SLACK):
            self._cut()

    def _seal(self):
        if self._open:
            self.blocks.append(_Block.merge(self._open))
            self._open, self._open_entries = [], 0

    def _cut(self):
        """Keep the `budget` positions of lowest priority; merge the blocks left small."""
        self._seal()
        prio = np.concatenate([b.prio for b in self.blocks])
        if len(prio) <= self.budget:
            return
        self.threshold = float(np.partition(prio, self.budget)[self.budget])
        del prio
        blocks, small = [], []
        for b in self.blocks:
            b.keep(b.prio < self.threshold)
            small.append(b)
            if sum(x.entries for x in small) >= BLOCK_ENTRIES // 2:
                blocks.append(_Block.merge([x.part() for x in small]) if len(small) > 1 else small[0])
                small = []
        if small:
            blocks.append(_Block.merge([x.part() for x in small]) if len(small) > 1 else small[0])
        self.blocks = [b for b in blocks if len(b.prio)]
        self.positions = sum(len(b.prio) for b in self.blocks)

    def finish(self):
        """-> (team keys int64 [teams] sorted, team index int32 [entries], counts float32
        [entries], offsets [positions + 1], the entry of each position's move played)."""
        self._seal()
        if self.budget and self.positions > self.budget:
            self._cut()
        keys = np.unique(np.concatenate([b.uniq for b in self.blocks] or [np.zeros(0, np.int64)]))
        n = sum(b.entries for b in self.blocks)
        index = np.empty(n, dtype=np.int32)
        counts = np.empty(n, dtype=np.float32)
        sizes = np.concatenate([b.sizes for b in self.blocks] or [np.zeros(0, np.int16)])
        win = np.concatenate([b.win for b in self.blocks] or [np.zeros(0, np.int16)])
        at = 0
        while self.blocks:                       # block by block, each freed once copied
            b = self.blocks.pop(0)
            index[at: at + b.entries] = np.searchsorted(keys, b.uniq).astype(np.int32)[b.index]
            counts[at: at + b.entries] = b.counts
            at += b.entries
            del b
        offsets = np.zeros(len(sizes) + 1, dtype=np.int64)
        np.cumsum(sizes, out=offsets[1:], dtype=np.int64)
        if n < 2**31:
            offsets = offsets.astype(np.int32)
        return keys, index, counts, offsets, offsets[:-1] + win

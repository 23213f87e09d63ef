"""Shared pieces of the examples: the digits data, training loops, timing, tables and charts.

Used by examples/demo.py, scripts/bench.py models and test/e2e/. Only torch, numpy,
scikit-learn (for its bundled digits set) and, optionally, tqdm and matplotlib.
"""

import math
import os
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

# ----------------------------------------------------------------------------- data


def load_digits_split(test_fraction=0.2, seed=0):
    """sklearn's bundled 8x8 digits (1797 images, no download) as float tensors.

    Returns (x_train, y_train, x_test, y_test); x is (N, 1, 8, 8) scaled to [0, 1] then
    standardised with the training set's mean / std. The split is deterministic.
    """
    from sklearn.datasets import load_digits

    d = load_digits()
    x = torch.tensor(d.images, dtype=torch.float32).unsqueeze(1) / 16.0
    y = torch.tensor(d.target, dtype=torch.long)
    g = torch.Generator().manual_seed(seed)
    perm = torch.randperm(len(y), generator=g)
    n_test = int(round(len(y) * test_fraction))
    te, tr = perm[:n_test], perm[n_test:]
    mean, std = x[tr].mean(), x[tr].std()
    x = (x - mean) / std
    return x[tr], y[tr], x[te], y[te]


def batches(x, y, batch_size, shuffle=False, seed=0):
    idx = torch.randperm(len(y), generator=torch.Generator().manual_seed(seed)) if shuffle else torch.arange(len(y))
    for i in range(0, len(y), batch_size):
        j = idx[i : i + batch_size]
        yield x[j], y[j]


def progress(iterable=None, **kw):
    """tqdm when installed, else a plain iterator (the demo's install step installs tqdm)."""
    try:
        from tqdm.auto import tqdm

        kw.setdefault("mininterval", 0.5)
        return tqdm(iterable, dynamic_ncols=True, **kw)
    except ImportError:  # pragma: no cover

        class _Plain:
            def __init__(self, it):
                self.it = it

            def __iter__(self):
                return iter(self.it)

            def set_postfix(self, **_):
                pass

            def update(self, *_):
                pass

            def close(self):
                pass

        return _Plain(iterable)


# ----------------------------------------------------------------------------- training


def train(
    model, x, y, epochs, lr=2e-3, batch_size=64, desc="train", seed=0, freeze_bn_after=None, freeze_observers_after=None
):
    """Adam + cross-entropy with a progress bar. For QAT pass freeze_* (epoch indices)."""
    torch.manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=max(1, epochs))
    steps = epochs * math.ceil(len(y) / batch_size)
    bar = progress(total=steps, desc=desc, unit="step")
    for ep in range(epochs):
        model.train()
        if freeze_observers_after is not None and ep >= freeze_observers_after:
            model.apply(_disable_observer)
        if freeze_bn_after is not None and ep >= freeze_bn_after:
            model.apply(_freeze_bn_stats)
        correct = total = 0
        for xb, yb in batches(x, y, batch_size, shuffle=True, seed=seed * 1000 + ep):
            out = model(xb)
            loss = F.cross_entropy(out, yb)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            correct += (out.argmax(1) == yb).sum().item()
            total += len(yb)
            bar.update(1)
            bar.set_postfix(epoch=ep + 1, loss=f"{loss.item():.3f}", acc=f"{correct / total:.3f}")
        sched.step()
    bar.close()
    model.eval()
    return model


def _disable_observer(m):
    if hasattr(m, "disable_observer") and callable(m.disable_observer) and not isinstance(m, nn.Sequential):
        try:
            m.disable_observer()
        except TypeError:
            pass


def _freeze_bn_stats(m):
    if hasattr(m, "freeze_bn_stats") and callable(m.freeze_bn_stats):
        m.freeze_bn_stats()


@torch.no_grad()
def calibrate(prepared, x, batch_size=64, max_batches=None, desc="calibrate"):
    prepared.eval()
    n = math.ceil(len(x) / batch_size)
    if max_batches:
        n = min(n, max_batches)
    bar = progress(range(n), desc=desc, unit="batch")
    for i in bar:
        prepared(x[i * batch_size : (i + 1) * batch_size])
    return prepared


@torch.no_grad()
def predict(model, x, batch_size=128):
    return torch.cat([model(x[i : i + batch_size]) for i in range(0, len(x), batch_size)])


def accuracy(logits, y):
    return (logits.argmax(1) == y).float().mean().item()


def agreement(logits, ref):
    """Cosine similarity of flattened logits and top-1 agreement with a reference (fp32)."""
    cos = F.cosine_similarity(logits.double().flatten(1), ref.double().flatten(1), dim=1).mean().item()
    top1 = (logits.argmax(1) == ref.argmax(1)).float().mean().item()
    return cos, top1


# ----------------------------------------------------------------------------- timing


@torch.no_grad()
def time_call(fn, x, min_time=0.2, warmup=3, max_iters=10_000, clock=time.perf_counter):
    """Median seconds per call of fn(x) over chunks totalling about min_time seconds (of ``clock``:
    wall time, or time.process_time, this process's CPU time, robust to a loaded machine)."""
    for _ in range(warmup):
        fn(x)
    t0 = clock()
    fn(x)
    one = max(clock() - t0, 1e-6)
    per_chunk = max(1, min(max_iters, int(min_time / 5 / one)))
    samples = []
    t_end = clock() + min_time
    while len(samples) < 5 or clock() < t_end:
        t0 = clock()
        for _ in range(per_chunk):
            fn(x)
        samples.append((clock() - t0) / per_chunk)
        if len(samples) >= 50:
            break
    return statistics.median(samples)


@torch.no_grad()
def time_interleaved(fns, x, rounds=5, min_time=0.1, clock=time.perf_counter):
    """Time several callables on one input, interleaved round by round (fairer on a noisy
    machine). fns: {key: callable}. Returns {key: median seconds per call}."""
    out = {k: [] for k in fns}
    for _ in range(rounds):
        for k, fn in fns.items():
            out[k].append(time_call(fn, x, min_time=min_time, warmup=1, clock=clock))
    return {k: statistics.median(v) for k, v in out.items()}


def rss_bytes():
    """Resident set size of this process (Linux /proc; no psutil needed)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


# ----------------------------------------------------------------------------- tables and charts


def markdown_table(headers, rows):
    cells = [[str(c) for c in r] for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]
    line = lambda r: "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |"  # noqa: E731
    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(headers), sep] + [line(r) for r in cells])


def bar_chart(path, title, groups, series, panels):
    """Grouped bar chart, one panel per metric.

    groups: x-axis labels; series: names (one colour each); panels: list of
    (panel_title, {(group, series): value or None}). Missing values are drawn as 'n/a'.
    Returns the path written, or None (with the reason) when matplotlib is missing.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        return None, f"matplotlib is not installed ({e}); `pip install matplotlib` for the chart"
    ncols = min(2, len(panels))
    nrows = math.ceil(len(panels) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(6.5 * ncols, 3.6 * nrows), squeeze=False)
    width = 0.8 / max(1, len(series))
    colors = ["#888888", "#d95f02", "#1b9e77", "#7570b3", "#e7298a", "#66a61e"]
    for ax, (ptitle, values) in zip(axes.flat, panels):
        for si, s in enumerate(series):
            xs, hs = [], []
            for gi, g in enumerate(groups):
                v = values.get((g, s))
                x = gi - 0.4 + width * (si + 0.5)
                if v is None:
                    ax.annotate("n/a", (x, 0), ha="center", va="bottom", fontsize=7, color="#b00000", rotation=90)
                    continue
                xs.append(x)
                hs.append(v)
            bars = ax.bar(xs, hs, width, label=s, color=colors[si % len(colors)])
            for b, h in zip(bars, hs):
                ax.annotate(f"{h:.3g}", (b.get_x() + b.get_width() / 2, h), ha="center", va="bottom", fontsize=7)
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels(groups, fontsize=8)
        ax.set_title(ptitle, fontsize=10)
        vals = [v for v in values.values() if v is not None]
        if vals and "%" in ptitle and min(vals) > 50:  # accuracy: zoom in on the interesting range
            ax.set_ylim(max(0.0, min(vals) - 5), 100.5)
        ax.grid(axis="y", alpha=0.3)
    for ax in list(axes.flat)[len(panels) :]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=8)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path, None

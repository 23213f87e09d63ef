"""Sequence classifiers for dynamic quantization (float in, float out; int8 weights).

``LSTMClassifier``: embedding -> 2-layer LSTM -> Linear.
``TransformerClassifier``: embedding -> TransformerEncoder -> mean-pool -> Linear.
Dynamic quantization swaps nn.LSTM and every nn.Linear (attention projections included).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class LSTMClassifier(nn.Module):
    def __init__(self, vocab=10000, embed=256, hidden=512, layers=2, num_classes=10):
        super().__init__()
        self.embedding = nn.Embedding(vocab, embed)
        self.lstm = nn.LSTM(embed, hidden, num_layers=layers, batch_first=True)
        self.fc = nn.Linear(hidden, num_classes)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        out, _ = self.lstm(self.embedding(tokens))
        return self.fc(out[:, -1])


class EncoderLayer(nn.Module):
    """Post-norm Transformer encoder layer (BERT-style) with separate q/k/v/out Linears, so
    dynamic quantization covers every projection (nn.TransformerEncoderLayer keeps attention's
    packed in_proj as a raw Parameter and its fast path reads Linear.weight, which breaks once
    the Linears are swapped)."""

    def __init__(self, d_model, nhead, ff):
        super().__init__()
        self.nhead = nhead
        self.q = nn.Linear(d_model, d_model)
        self.k = nn.Linear(d_model, d_model)
        self.v = nn.Linear(d_model, d_model)
        self.out = nn.Linear(d_model, d_model)
        self.norm1 = nn.LayerNorm(d_model)
        self.ff1 = nn.Linear(d_model, ff)
        self.act = nn.GELU()
        self.ff2 = nn.Linear(ff, d_model)
        self.norm2 = nn.LayerNorm(d_model)

    def _heads(self, t: torch.Tensor) -> torch.Tensor:
        b, n, d = t.shape
        return t.reshape(b, n, self.nhead, d // self.nhead).transpose(1, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, d = x.shape
        a = F.scaled_dot_product_attention(self._heads(self.q(x)), self._heads(self.k(x)), self._heads(self.v(x)))
        x = self.norm1(x + self.out(a.transpose(1, 2).reshape(b, n, d)))
        return self.norm2(x + self.ff2(self.act(self.ff1(x))))


class TransformerClassifier(nn.Module):
    def __init__(self, vocab=10000, d_model=256, nhead=4, ff=1024, layers=4, num_classes=10, max_len=512):
        super().__init__()
        self.embedding = nn.Embedding(vocab, d_model)
        self.pos = nn.Parameter(torch.randn(1, max_len, d_model) * 0.02)
        self.layers = nn.ModuleList([EncoderLayer(d_model, nhead, ff) for _ in range(layers)])
        self.fc = nn.Linear(d_model, num_classes)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embedding(tokens) + self.pos[:, : tokens.shape[1]]
        for layer in self.layers:
            x = layer(x)
        return self.fc(x.mean(dim=1))

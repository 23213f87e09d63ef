"""Sequence classifiers for dynamic quantization (float in, float out; int8 weights).

``LSTMClassifier``: embedding -> 2-layer LSTM -> Linear.
``TransformerClassifier``: embedding -> TransformerEncoder -> mean-pool -> Linear.
Dynamic quantization swaps nn.LSTM and nn.Linear (including the encoder's feed-forward
Linears; attention's out_proj is an NonDynamicallyQuantizableLinear and stays fp32, as in torch).
"""
import torch
import torch.nn as nn


class LSTMClassifier(nn.Module):
    def __init__(self, vocab=10000, embed=256, hidden=512, layers=2, num_classes=10):
        super().__init__()
        self.embedding = nn.Embedding(vocab, embed)
        self.lstm = nn.LSTM(embed, hidden, num_layers=layers, batch_first=True)
        self.fc = nn.Linear(hidden, num_classes)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        out, _ = self.lstm(self.embedding(tokens))
        return self.fc(out[:, -1])


class TransformerClassifier(nn.Module):
    def __init__(self, vocab=10000, d_model=256, nhead=4, ff=1024, layers=4, num_classes=10,
                 max_len=512):
        super().__init__()
        self.embedding = nn.Embedding(vocab, d_model)
        self.pos = nn.Parameter(torch.randn(1, max_len, d_model) * 0.02)
        layer = nn.TransformerEncoderLayer(d_model, nhead, ff, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.fc = nn.Linear(d_model, num_classes)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embedding(tokens) + self.pos[:, : tokens.shape[1]]
        x = self.encoder(x)
        return self.fc(x.mean(dim=1))

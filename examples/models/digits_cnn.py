"""The small CNN of the real-data demo: 8x8 grey digits (sklearn's load_digits), 10 classes.

conv-bn-relu x3 (one residual add_relu through FloatFunctional), max-pool, then a two-layer MLP
head. The convs are what static / QAT quantization speeds up; the Linear head is what
dynamic quantization quantizes.
"""

import torch
import torch.nn as nn

from ._stubs import DeQuantStub, FloatFunctional, QuantStub, default_fuse_fn


class ConvBNReLU(nn.Sequential):
    def __init__(self, cin, cout, k=3, stride=1, groups=1, relu=True):
        layers = [
            nn.Conv2d(cin, cout, k, stride, (k - 1) // 2, groups=groups, bias=False),
            nn.BatchNorm2d(cout),
        ]
        if relu:
            layers.append(nn.ReLU(inplace=False))
        super().__init__(*layers)


class DigitsCNN(nn.Module):
    def __init__(self, num_classes=10, width=32):
        super().__init__()
        self.quant = QuantStub()
        self.conv1 = ConvBNReLU(1, width)  # 8x8
        self.conv2 = ConvBNReLU(width, width, relu=False)  # 8x8, residual (relu after the add)
        self.add = FloatFunctional()
        self.pool = nn.MaxPool2d(2)  # 4x4
        self.conv3 = ConvBNReLU(width, 2 * width)  # 4x4
        self.fc1 = nn.Linear(2 * width * 16, 128)
        self.fc_relu = nn.ReLU()
        self.fc2 = nn.Linear(128, num_classes)
        self.dequant = DeQuantStub()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.quant(x)
        x = self.conv1(x)
        x = self.add.add_relu(self.conv2(x), x)
        x = self.pool(x)
        x = self.conv3(x)
        x = torch.flatten(x, 1)
        x = self.fc_relu(self.fc1(x))
        x = self.fc2(x)
        return self.dequant(x)

    def fuse_model(self, fuse_fn=None):
        """Fuse conv-bn(-relu) and linear-relu in place. Pass torch.ao's fuse_modules_qat for QAT."""
        fuse = fuse_fn or default_fuse_fn()
        fuse(
            self,
            [
                ["conv1.0", "conv1.1", "conv1.2"],
                ["conv2.0", "conv2.1"],
                ["conv3.0", "conv3.1", "conv3.2"],
                ["fc1", "fc_relu"],
            ],
            inplace=True,
        )
        return self

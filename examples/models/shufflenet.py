"""ShuffleNetV2 x1.0 (Ma et al. 2018; torchvision's layout) written for eager quantization.

As torchvision's QuantizableShuffleNetV2: blocks split channels with ``chunk`` (stride 1) or
transform both branches (stride 2), join the halves with a FloatFunctional ``cat`` and shuffle
channels with view / transpose / contiguous on the quantized tensor; ``fuse_model()`` fuses
conv-bn(-relu). One deliberate difference: the global pool is an ``nn.AdaptiveAvgPool2d``
module, not torchvision's ``x.mean([2, 3])`` (a functional call on a quantized tensor, which
convert cannot see: it would run torch's aten kernel).
"""

import torch
import torch.nn as nn

from ._stubs import DeQuantStub, FloatFunctional, QuantStub, default_fuse_fn
from .mobilenet import ConvBNReLU


def channel_shuffle(x: torch.Tensor, groups: int) -> torch.Tensor:
    n, c, h, w = x.size()
    x = x.view(n, groups, c // groups, h, w)
    x = torch.transpose(x, 1, 2).contiguous()
    return x.view(n, -1, h, w)


class InvertedResidual(nn.Module):
    def __init__(self, inp, oup, stride):
        super().__init__()
        self.stride = stride
        half = oup // 2
        if stride > 1:
            self.branch1 = nn.Sequential(
                ConvBNReLU(inp, inp, 3, stride, groups=inp, relu=False), ConvBNReLU(inp, half, 1)
            )
        else:
            self.branch1 = nn.Sequential()
        self.branch2 = nn.Sequential(
            ConvBNReLU(inp if stride > 1 else half, half, 1),
            ConvBNReLU(half, half, 3, stride, groups=half, relu=False),
            ConvBNReLU(half, half, 1),
        )
        self.cat = FloatFunctional()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.stride == 1:
            x1, x2 = x.chunk(2, dim=1)
            out = self.cat.cat([x1, self.branch2(x2)], dim=1)
        else:
            out = self.cat.cat([self.branch1(x), self.branch2(x)], dim=1)
        return channel_shuffle(out, 2)


class ShuffleNetV2(nn.Module):
    def __init__(self, stages_repeats=(4, 8, 4), stages_out_channels=(24, 116, 232, 464, 1024), num_classes=1000):
        super().__init__()
        cin = stages_out_channels[0]
        self.conv1 = ConvBNReLU(3, cin, 3, 2)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        stages = []
        for repeats, cout in zip(stages_repeats, stages_out_channels[1:-1]):
            stages.append(
                nn.Sequential(
                    InvertedResidual(cin, cout, 2), *[InvertedResidual(cout, cout, 1) for _ in range(repeats - 1)]
                )
            )
            cin = cout
        self.stage2, self.stage3, self.stage4 = stages
        self.conv5 = ConvBNReLU(cin, stages_out_channels[-1], 1)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(stages_out_channels[-1], num_classes)
        self.quant = QuantStub()
        self.dequant = DeQuantStub()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.quant(x)
        x = self.maxpool(self.conv1(x))
        x = self.conv5(self.stage4(self.stage3(self.stage2(x))))
        x = self.fc(torch.flatten(self.pool(x), 1))
        return self.dequant(x)

    def fuse_model(self, fuse_fn=None):
        fuse = fuse_fn or default_fuse_fn()
        for name, m in self.named_modules():
            if isinstance(m, ConvBNReLU):
                fuse(self, [[f"{name}.{i}" for i in range(len(m))]], inplace=True)
        return self


def shufflenet_v2_x1_0(num_classes=1000):
    return ShuffleNetV2(num_classes=num_classes)

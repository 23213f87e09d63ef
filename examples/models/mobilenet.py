"""MobileNetV2 (Sandler et al. 2018; torchvision's layout) written for eager quantization.

Inverted residual blocks with depthwise convs; ReLU6 becomes ReLU as in torchvision's
quantizable MobileNetV2 (so conv-bn-relu fuses); residual adds use FloatFunctional.
"""

import torch
import torch.nn as nn

from ._stubs import DeQuantStub, FloatFunctional, QuantStub, default_fuse_fn


def _make_divisible(v, divisor=8):
    new_v = max(divisor, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


def init_weights(model):
    """torchvision's MobileNet initialisation: kaiming (fan_out) convs, identity batch norms,
    small normal linears, zero biases."""
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode="fan_out")
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.BatchNorm2d):
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, 0, 0.01)
            nn.init.zeros_(m.bias)


class ConvBNReLU(nn.Sequential):
    """torchvision's Conv2dNormActivation: conv (no bias), batch norm, then ``activation``
    (ReLU by default; ``relu=False`` or ``activation=None`` for none)."""

    def __init__(self, cin, cout, k=3, stride=1, groups=1, relu=True, activation=nn.ReLU):
        layers = [nn.Conv2d(cin, cout, k, stride, (k - 1) // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
        if relu and activation is not None:
            layers.append(activation())
        super().__init__(*layers)


class InvertedResidual(nn.Module):
    """torchvision's QuantizableInvertedResidual: every block owns ``skip_add``, only the
    residual ones (stride 1, cin == cout) call it. convert() turns the never-called ones into
    modules that raise if called (calibration never reaches them)."""

    def __init__(self, cin, cout, stride, expand_ratio):
        super().__init__()
        hidden = int(round(cin * expand_ratio))
        self.use_res_connect = stride == 1 and cin == cout
        layers = []
        if expand_ratio != 1:
            layers.append(ConvBNReLU(cin, hidden, k=1))
        layers += [ConvBNReLU(hidden, hidden, stride=stride, groups=hidden), ConvBNReLU(hidden, cout, k=1, relu=False)]
        self.conv = nn.Sequential(*layers)
        self.skip_add = FloatFunctional()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.use_res_connect:
            return self.skip_add.add(x, self.conv(x))
        return self.conv(x)


class MobileNetV2(nn.Module):
    def __init__(self, num_classes=1000, width_mult=1.0):
        super().__init__()
        setting = [
            [1, 16, 1, 1],
            [6, 24, 2, 2],
            [6, 32, 3, 2],
            [6, 64, 4, 2],
            [6, 96, 3, 1],
            [6, 160, 3, 2],
            [6, 320, 1, 1],
        ]
        cin = _make_divisible(32 * width_mult)
        self.last_channel = _make_divisible(1280 * max(1.0, width_mult))
        features = [ConvBNReLU(3, cin, stride=2)]
        for t, c, n, s in setting:
            cout = _make_divisible(c * width_mult)
            for i in range(n):
                features.append(InvertedResidual(cin, cout, s if i == 0 else 1, t))
                cin = cout
        features.append(ConvBNReLU(cin, self.last_channel, k=1))
        self.features = nn.Sequential(*features)
        self.pool = nn.AdaptiveAvgPool2d((1, 1))
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(self.last_channel, num_classes))
        self.quant = QuantStub()
        self.dequant = DeQuantStub()
        init_weights(self)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.quant(x)
        x = self.features(x)
        x = torch.flatten(self.pool(x), 1)
        x = self.classifier(x)
        return self.dequant(x)

    def fuse_model(self, fuse_fn=None):
        fuse = fuse_fn or default_fuse_fn()
        for name, m in self.named_modules():
            if isinstance(m, ConvBNReLU):
                names = [f"{name}.0", f"{name}.1"] + ([f"{name}.2"] if len(m) == 3 else [])
                fuse(self, [names], inplace=True)
        return self


def mobilenet_v2(num_classes=1000):
    return MobileNetV2(num_classes)

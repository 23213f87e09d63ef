"""MobileNetV3-Large (Howard et al. 2019; torchvision's layout) written for eager quantization.

As torchvision's QuantizableMobileNetV3: inverted residual blocks with hardswish / relu,
squeeze-excitation (adaptive avg pool, 1x1 conv, relu, 1x1 conv, hardsigmoid, then a
FloatFunctional mul of the gate by the input), ``skip_add`` in every block (only the residual
ones call it); ``fuse_model()`` fuses conv-bn(-relu) and the SE's fc1-relu.
"""

import torch
import torch.nn as nn

from ._stubs import DeQuantStub, FloatFunctional, QuantStub, default_fuse_fn
from .mobilenet import ConvBNReLU, _make_divisible, init_weights


class SqueezeExcitation(nn.Module):
    def __init__(self, channels, squeeze):
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(channels, squeeze, 1)
        self.activation = nn.ReLU()
        self.fc2 = nn.Conv2d(squeeze, channels, 1)
        self.scale_activation = nn.Hardsigmoid()
        self.skip_mul = FloatFunctional()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scale = self.scale_activation(self.fc2(self.activation(self.fc1(self.avgpool(x)))))
        return self.skip_mul.mul(scale, x)


class InvertedResidual(nn.Module):
    def __init__(self, cin, k, exp, cout, use_se, use_hs, stride):
        super().__init__()
        self.use_res_connect = stride == 1 and cin == cout
        act = nn.Hardswish if use_hs else nn.ReLU
        layers = []
        if exp != cin:
            layers.append(ConvBNReLU(cin, exp, k=1, activation=act))
        layers.append(ConvBNReLU(exp, exp, k=k, stride=stride, groups=exp, activation=act))
        if use_se:
            layers.append(SqueezeExcitation(exp, _make_divisible(exp // 4)))
        layers.append(ConvBNReLU(exp, cout, k=1, activation=None))
        self.block = nn.Sequential(*layers)
        self.skip_add = FloatFunctional()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.use_res_connect:
            return self.skip_add.add(x, self.block(x))
        return self.block(x)


# (cin, kernel, expanded, cout, use_se, use_hs, stride): torchvision's mobilenet_v3_large table
LARGE = [
    (16, 3, 16, 16, False, False, 1),
    (16, 3, 64, 24, False, False, 2),
    (24, 3, 72, 24, False, False, 1),
    (24, 5, 72, 40, True, False, 2),
    (40, 5, 120, 40, True, False, 1),
    (40, 5, 120, 40, True, False, 1),
    (40, 3, 240, 80, False, True, 2),
    (80, 3, 200, 80, False, True, 1),
    (80, 3, 184, 80, False, True, 1),
    (80, 3, 184, 80, False, True, 1),
    (80, 3, 480, 112, True, True, 1),
    (112, 3, 672, 112, True, True, 1),
    (112, 5, 672, 160, True, True, 2),
    (160, 5, 960, 160, True, True, 1),
    (160, 5, 960, 160, True, True, 1),
]


class MobileNetV3(nn.Module):
    def __init__(self, setting=LARGE, last_channel=1280, num_classes=1000):
        super().__init__()
        layers = [ConvBNReLU(3, setting[0][0], stride=2, activation=nn.Hardswish)]
        layers += [InvertedResidual(*cfg) for cfg in setting]
        lastconv = 6 * setting[-1][3]
        layers.append(ConvBNReLU(setting[-1][3], lastconv, k=1, activation=nn.Hardswish))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(
            nn.Linear(lastconv, last_channel), nn.Hardswish(), nn.Dropout(0.2), nn.Linear(last_channel, num_classes)
        )
        self.quant = QuantStub()
        self.dequant = DeQuantStub()
        init_weights(self)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.quant(x)
        x = self.avgpool(self.features(x))
        x = self.classifier(torch.flatten(x, 1))
        return self.dequant(x)

    def fuse_model(self, fuse_fn=None):
        fuse = fuse_fn or default_fuse_fn()
        for name, m in self.named_modules():
            if type(m) is ConvBNReLU:
                names = [f"{name}.0", f"{name}.1"]
                if len(m) == 3 and type(m[2]) is nn.ReLU:
                    names.append(f"{name}.2")
                fuse(self, [names], inplace=True)
            elif type(m) is SqueezeExcitation:
                fuse(self, [[f"{name}.fc1", f"{name}.activation"]], inplace=True)
        return self


def mobilenet_v3_large(num_classes=1000):
    return MobileNetV3(LARGE, 1280, num_classes)

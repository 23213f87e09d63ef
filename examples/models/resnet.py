"""ResNet-18 (He et al. 2015; torchvision's layout) written for eager quantization.

Same parameter names and shapes as torchvision.models.resnet18, so its state_dict loads;
residual adds use FloatFunctional.add_relu; ``fuse_model()`` fuses conv-bn(-relu).
"""

import torch
import torch.nn as nn

from ._stubs import DeQuantStub, FloatFunctional, QuantStub, default_fuse_fn


def conv3x3(cin, cout, stride=1):
    return nn.Conv2d(cin, cout, 3, stride, 1, bias=False)


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=False)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample
        self.skip_add = FloatFunctional()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        return self.skip_add.add_relu(out, identity)

    def fuse_patterns(self, prefix):
        p = [[prefix + "conv1", prefix + "bn1", prefix + "relu"], [prefix + "conv2", prefix + "bn2"]]
        if self.downsample is not None:
            p.append([prefix + "downsample.0", prefix + "downsample.1"])
        return p


class ResNet(nn.Module):
    def __init__(self, layers=(2, 2, 2, 2), num_classes=1000):
        super().__init__()
        self.quant = QuantStub()
        self.dequant = DeQuantStub()
        self.inplanes = 64
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=False)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = self._make_layer(64, layers[0])
        self.layer2 = self._make_layer(128, layers[1], stride=2)
        self.layer3 = self._make_layer(256, layers[2], stride=2)
        self.layer4 = self._make_layer(512, layers[3], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)

    def _make_layer(self, planes, blocks, stride=1):
        downsample = None
        if stride != 1 or self.inplanes != planes:
            downsample = nn.Sequential(nn.Conv2d(self.inplanes, planes, 1, stride, bias=False), nn.BatchNorm2d(planes))
        layers = [BasicBlock(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes
        layers += [BasicBlock(planes, planes) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.quant(x)
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        x = torch.flatten(self.avgpool(x), 1)
        x = self.fc(x)
        return self.dequant(x)

    def fuse_model(self, fuse_fn=None):
        fuse = fuse_fn or default_fuse_fn()
        patterns = [["conv1", "bn1", "relu"]]
        for lname in ("layer1", "layer2", "layer3", "layer4"):
            for i, block in enumerate(getattr(self, lname)):
                patterns += block.fuse_patterns(f"{lname}.{i}.")
        fuse(self, patterns, inplace=True)
        return self


def resnet18(num_classes=1000):
    return ResNet((2, 2, 2, 2), num_classes)

"""Small models built from the block patterns of torchvision's quantizable architectures
(torchvision/models/quantization/*.py on top of torchvision/models/*.py), written here from
their source: same module structure, same forward, same ``fuse_model`` fusions; fewer blocks and
channels so that a test runs them in well under a second.

Every model takes the toolkit's QuantStub / DeQuantStub / FloatFunctional (``ns``) so the same
architecture is quantized by torch_qplugin and, as the bar to beat, by torch.ao.quantization.
"""

from types import SimpleNamespace
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F


def toolkit_namespace(tq, ff_cls):
    """The pieces a model needs from one toolkit: its stubs, FloatFunctional and fuse_modules."""
    return SimpleNamespace(
        QuantStub=tq.QuantStub, DeQuantStub=tq.DeQuantStub, FloatFunctional=ff_cls, fuse_modules=tq.fuse_modules
    )


class ConvNormActivation(nn.Sequential):
    """torchvision.ops.misc.Conv2dNormActivation: conv (no bias), batch norm, optional activation."""

    def __init__(self, cin, cout, k=3, stride=1, groups=1, activation=nn.ReLU):
        layers = [nn.Conv2d(cin, cout, k, stride, (k - 1) // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
        if activation is not None:
            layers.append(activation())
        super().__init__(*layers)


class _Quantizable(nn.Module):
    """QuantizableX.forward: quant -> _forward_impl -> dequant."""

    def forward(self, x):
        return self.dequant(self._forward_impl(self.quant(x)))


# ---------------------------------------------------------------- ResNet / ResNeXt (resnet.py)
class BasicBlock(nn.Module):
    """QuantizableBasicBlock: one relu module used once, residual add fused with relu."""

    def __init__(self, ns, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=False)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample
        self.add_relu = ns.FloatFunctional()

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        return self.add_relu.add_relu(out, identity)

    def fuse_model(self, fuse):
        fuse(self, [["conv1", "bn1", "relu"], ["conv2", "bn2"]], inplace=True)
        if self.downsample is not None:
            fuse(self.downsample, ["0", "1"], inplace=True)


class Bottleneck(nn.Module):
    """QuantizableBottleneck: 1x1 -> 3x3 (grouped for ResNeXt) -> 1x1, skip_add_relu."""

    expansion = 4

    def __init__(self, ns, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64):
        super().__init__()
        width = int(planes * (base_width / 64.0)) * groups
        self.conv1 = nn.Conv2d(inplanes, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride, 1, groups=groups, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, planes * self.expansion, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * self.expansion)
        self.relu1 = nn.ReLU(inplace=False)
        self.relu2 = nn.ReLU(inplace=False)
        self.downsample = downsample
        self.skip_add_relu = ns.FloatFunctional()

    def forward(self, x):
        identity = x
        out = self.relu1(self.bn1(self.conv1(x)))
        out = self.relu2(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        return self.skip_add_relu.add_relu(out, identity)

    def fuse_model(self, fuse):
        fuse(self, [["conv1", "bn1", "relu1"], ["conv2", "bn2", "relu2"], ["conv3", "bn3"]], inplace=True)
        if self.downsample is not None:
            fuse(self.downsample, ["0", "1"], inplace=True)


class ResNet(_Quantizable):
    def __init__(self, ns, block, layers=(1, 1), widths=(8, 16), groups=1, width_per_group=64, num_classes=10):
        super().__init__()
        self.quant, self.dequant = ns.QuantStub(), ns.DeQuantStub()
        self.inplanes, self.groups, self.base_width = widths[0], groups, width_per_group
        self.conv1 = nn.Conv2d(3, widths[0], 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(widths[0])
        self.relu = nn.ReLU(inplace=False)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layers = nn.Sequential(
            *[self._make_layer(ns, block, w, n, 1 if i == 0 else 2) for i, (w, n) in enumerate(zip(widths, layers))]
        )
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(self.inplanes, num_classes)

    def _make_layer(self, ns, block, planes, blocks, stride):
        exp = getattr(block, "expansion", 1)
        downsample = None
        if stride != 1 or self.inplanes != planes * exp:
            downsample = nn.Sequential(
                nn.Conv2d(self.inplanes, planes * exp, 1, stride, bias=False), nn.BatchNorm2d(planes * exp)
            )
        kw = {} if block is BasicBlock else {"groups": self.groups, "base_width": self.base_width}
        out = [block(ns, self.inplanes, planes, stride, downsample, **kw)]
        self.inplanes = planes * exp
        out += [block(ns, self.inplanes, planes, **kw) for _ in range(1, blocks)]
        return nn.Sequential(*out)

    def _forward_impl(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layers(x)
        return self.fc(torch.flatten(self.avgpool(x), 1))

    def fuse_model(self, fuse):
        fuse(self, ["conv1", "bn1", "relu"], inplace=True)
        for m in self.modules():
            if isinstance(m, (BasicBlock, Bottleneck)):
                m.fuse_model(fuse)


# ---------------------------------------------------------------- MobileNetV2 (mobilenetv2.py)
class InvertedResidualV2(nn.Module):
    """QuantizableInvertedResidual: EVERY block owns ``skip_add``; only residual ones call it."""

    def __init__(self, ns, inp, oup, stride, expand_ratio):
        super().__init__()
        hidden = int(round(inp * expand_ratio))
        self.use_res_connect = stride == 1 and inp == oup
        layers = []
        if expand_ratio != 1:
            layers.append(ConvNormActivation(inp, hidden, k=1))  # ReLU6 -> ReLU (_replace_relu)
        layers += [
            ConvNormActivation(hidden, hidden, stride=stride, groups=hidden),
            nn.Conv2d(hidden, oup, 1, 1, 0, bias=False),
            nn.BatchNorm2d(oup),
        ]
        self.conv = nn.Sequential(*layers)
        self.skip_add = ns.FloatFunctional()

    def forward(self, x):
        if self.use_res_connect:
            return self.skip_add.add(x, self.conv(x))
        return self.conv(x)

    def fuse_model(self, fuse):
        for idx in range(len(self.conv)):
            if type(self.conv[idx]) is nn.Conv2d:
                fuse(self.conv, [str(idx), str(idx + 1)], inplace=True)


class MobileNetV2(_Quantizable):
    def __init__(self, ns, num_classes=10):
        super().__init__()
        self.quant, self.dequant = ns.QuantStub(), ns.DeQuantStub()
        setting = [[1, 8, 1, 1], [6, 12, 2, 2], [6, 16, 2, 1]]  # t, c, n, s
        cin = 8
        features = [ConvNormActivation(3, cin, stride=2)]
        for t, c, n, s in setting:
            for i in range(n):
                features.append(InvertedResidualV2(ns, cin, c, s if i == 0 else 1, t))
                cin = c
        features.append(ConvNormActivation(cin, 32, k=1))
        self.features = nn.Sequential(*features)
        self.pool = nn.AdaptiveAvgPool2d((1, 1))  # torchvision: F.adaptive_avg_pool2d (see FUNCTIONAL_HEADS)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(32, num_classes))

    def _forward_impl(self, x):
        x = self.features(x)
        return self.classifier(torch.flatten(self.pool(x), 1))

    def fuse_model(self, fuse):
        for m in self.modules():
            if type(m) is ConvNormActivation:
                fuse(m, ["0", "1", "2"], inplace=True)
            if type(m) is InvertedResidualV2:
                m.fuse_model(fuse)


# ---------------------------------------------------------------- MobileNetV3 (mobilenetv3.py)
class SqueezeExcitation(nn.Module):
    """QuantizableSqueezeExcitation: adaptive avg pool, 1x1 conv, relu, 1x1 conv, hardsigmoid,
    then ``skip_mul.mul(scale, input)`` (a broadcasting mul of (N,C,1,1) by (N,C,H,W))."""

    def __init__(self, ns, input_channels, squeeze_channels):
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(input_channels, squeeze_channels, 1)
        self.fc2 = nn.Conv2d(squeeze_channels, input_channels, 1)
        self.activation = nn.ReLU()
        self.scale_activation = nn.Hardsigmoid()
        self.skip_mul = ns.FloatFunctional()

    def _scale(self, x):
        return self.scale_activation(self.fc2(self.activation(self.fc1(self.avgpool(x)))))

    def forward(self, x):
        return self.skip_mul.mul(self._scale(x), x)

    def fuse_model(self, fuse):
        fuse(self, ["fc1", "activation"], inplace=True)


class InvertedResidualV3(nn.Module):
    """QuantizableInvertedResidual (v3): expand, depthwise (+SE), project; skip_add in every block."""

    def __init__(self, ns, cin, k, exp, cout, use_se, use_hs, stride):
        super().__init__()
        self.use_res_connect = stride == 1 and cin == cout
        act = nn.Hardswish if use_hs else nn.ReLU
        layers = []
        if exp != cin:
            layers.append(ConvNormActivation(cin, exp, k=1, activation=act))
        layers.append(ConvNormActivation(exp, exp, k=k, stride=stride, groups=exp, activation=act))
        if use_se:
            layers.append(SqueezeExcitation(ns, exp, max(8, exp // 4 // 8 * 8)))  # ~_make_divisible(exp // 4)
        layers.append(ConvNormActivation(exp, cout, k=1, activation=None))
        self.block = nn.Sequential(*layers)
        self.skip_add = ns.FloatFunctional()

    def forward(self, x):
        if self.use_res_connect:
            return self.skip_add.add(x, self.block(x))
        return self.block(x)


class MobileNetV3(_Quantizable):
    # (cin, kernel, expanded, cout, use_se, use_hs, stride): a cut of mobilenet_v3_large's table
    SETTING = [
        (16, 3, 16, 16, False, False, 1),
        (16, 3, 64, 24, False, False, 2),
        (24, 5, 72, 24, True, False, 1),
        (24, 3, 96, 32, False, True, 2),
        (32, 5, 128, 32, True, True, 1),
    ]

    def __init__(self, ns, num_classes=10):
        super().__init__()
        self.quant, self.dequant = ns.QuantStub(), ns.DeQuantStub()
        layers = [ConvNormActivation(3, 16, stride=2, activation=nn.Hardswish)]
        layers += [InvertedResidualV3(ns, *cfg) for cfg in self.SETTING]
        layers.append(ConvNormActivation(32, 96, k=1, activation=nn.Hardswish))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Linear(96, 64), nn.Hardswish(), nn.Dropout(0.2), nn.Linear(64, num_classes))

    def _forward_impl(self, x):
        x = self.avgpool(self.features(x))
        return self.classifier(torch.flatten(x, 1))

    def fuse_model(self, fuse):
        for m in self.modules():
            if type(m) is ConvNormActivation:
                names = ["0", "1"]
                if len(m) == 3 and type(m[2]) is nn.ReLU:
                    names.append("2")
                fuse(m, names, inplace=True)
            elif type(m) is SqueezeExcitation:
                m.fuse_model(fuse)


# ---------------------------------------------------------------- GoogLeNet (googlenet.py)
class BasicConv2d(nn.Module):
    """QuantizableBasicConv2d: conv (no bias) + bn(eps=0.001) + relu, fused."""

    def __init__(self, cin, cout, **kwargs):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, bias=False, **kwargs)
        self.bn = nn.BatchNorm2d(cout, eps=0.001)
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.relu(self.bn(self.conv(x)))

    def fuse_model(self, fuse):
        fuse(self, ["conv", "bn", "relu"], inplace=True)


class Inception(nn.Module):
    """QuantizableInception: four branches (1x1; 1x1->3x3; 1x1->3x3; maxpool->1x1) joined by
    ``self.cat.cat(outputs, 1)``."""

    def __init__(self, ns, cin, ch1x1, ch3x3red, ch3x3, ch5x5red, ch5x5, pool_proj):
        super().__init__()
        self.branch1 = BasicConv2d(cin, ch1x1, kernel_size=1)
        self.branch2 = nn.Sequential(
            BasicConv2d(cin, ch3x3red, kernel_size=1), BasicConv2d(ch3x3red, ch3x3, kernel_size=3, padding=1)
        )
        self.branch3 = nn.Sequential(
            BasicConv2d(cin, ch5x5red, kernel_size=1), BasicConv2d(ch5x5red, ch5x5, kernel_size=3, padding=1)
        )
        self.branch4 = nn.Sequential(
            nn.MaxPool2d(kernel_size=3, stride=1, padding=1, ceil_mode=True), BasicConv2d(cin, pool_proj, kernel_size=1)
        )
        self.cat = ns.FloatFunctional()

    def forward(self, x):
        outputs = [self.branch1(x), self.branch2(x), self.branch3(x), self.branch4(x)]
        return self.cat.cat(outputs, 1)


class InceptionAux(nn.Module):
    """QuantizableInceptionAux: only used in training mode, so calibration (eval) never reaches it."""

    def __init__(self, cin, num_classes):
        super().__init__()
        self.conv = BasicConv2d(cin, 8, kernel_size=1)
        self.fc1 = nn.Linear(8 * 2 * 2, 16)
        self.fc2 = nn.Linear(16, num_classes)
        self.relu = nn.ReLU()
        self.dropout = nn.Dropout(0.7)

    def forward(self, x):
        x = self.conv(F.adaptive_avg_pool2d(x, (2, 2)))
        x = self.relu(self.fc1(torch.flatten(x, 1)))
        return self.fc2(self.dropout(x))


class GoogLeNet(nn.Module):
    def __init__(self, ns, num_classes=10, aux_logits=True):
        super().__init__()
        self.quant, self.dequant = ns.QuantStub(), ns.DeQuantStub()
        self.aux_logits = aux_logits
        self.conv1 = BasicConv2d(3, 16, kernel_size=7, stride=2, padding=3)
        self.maxpool1 = nn.MaxPool2d(3, stride=2, ceil_mode=True)
        self.inception3a = Inception(ns, 16, 8, 8, 12, 4, 6, 6)
        self.inception3b = Inception(ns, 32, 12, 8, 16, 4, 8, 8)
        self.aux1 = InceptionAux(32, num_classes) if aux_logits else None
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.dropout = nn.Dropout(0.2)
        self.fc = nn.Linear(44, num_classes)

    def forward(self, x):
        x = self.quant(x)
        x = self.maxpool1(self.conv1(x))
        x = self.inception3a(x)
        aux1: Optional[torch.Tensor] = None
        if self.aux1 is not None:
            if self.training:
                aux1 = self.aux1(x)  # noqa: F841  torchvision returns GoogLeNetOutputs(x, aux2, aux1) then
        x = self.inception3b(x)
        x = self.fc(self.dropout(torch.flatten(self.avgpool(x), 1)))
        return self.dequant(x)

    def fuse_model(self, fuse):
        for m in self.modules():
            if type(m) is BasicConv2d:
                m.fuse_model(fuse)


# ---------------------------------------------------------------- ShuffleNetV2 (shufflenetv2.py)
def channel_shuffle(x, groups: int):
    batchsize, num_channels, height, width = x.size()
    channels_per_group = num_channels // groups
    x = x.view(batchsize, groups, channels_per_group, height, width)
    x = torch.transpose(x, 1, 2).contiguous()
    return x.view(batchsize, -1, height, width)


class ShuffleInvertedResidual(nn.Module):
    """QuantizableInvertedResidual (ShuffleNetV2): stride 1 splits channels with chunk and
    transforms one half; stride 2 transforms both; halves joined by ``self.cat.cat``, then
    channel_shuffle (view / transpose / contiguous / view on the quantized tensor)."""

    def __init__(self, ns, inp, oup, stride):
        super().__init__()
        self.stride = stride
        branch_features = oup // 2
        if stride > 1:
            self.branch1 = nn.Sequential(
                nn.Conv2d(inp, inp, 3, stride, 1, groups=inp, bias=False),
                nn.BatchNorm2d(inp),
                nn.Conv2d(inp, branch_features, 1, 1, 0, bias=False),
                nn.BatchNorm2d(branch_features),
                nn.ReLU(inplace=False),
            )
        else:
            self.branch1 = nn.Sequential()
        self.branch2 = nn.Sequential(
            nn.Conv2d(inp if stride > 1 else branch_features, branch_features, 1, 1, 0, bias=False),
            nn.BatchNorm2d(branch_features),
            nn.ReLU(inplace=False),
            nn.Conv2d(branch_features, branch_features, 3, stride, 1, groups=branch_features, bias=False),
            nn.BatchNorm2d(branch_features),
            nn.Conv2d(branch_features, branch_features, 1, 1, 0, bias=False),
            nn.BatchNorm2d(branch_features),
            nn.ReLU(inplace=False),
        )
        self.cat = ns.FloatFunctional()

    def forward(self, x):
        if self.stride == 1:
            x1, x2 = x.chunk(2, dim=1)
            out = self.cat.cat([x1, self.branch2(x2)], dim=1)
        else:
            out = self.cat.cat([self.branch1(x), self.branch2(x)], dim=1)
        return channel_shuffle(out, 2)


class ShuffleNetV2(_Quantizable):
    def __init__(self, ns, stages_repeats=(2, 2), stages_out_channels=(8, 16, 32, 64), num_classes=10):
        super().__init__()
        self.quant, self.dequant = ns.QuantStub(), ns.DeQuantStub()
        cin = stages_out_channels[0]
        self.conv1 = nn.Sequential(nn.Conv2d(3, cin, 3, 2, 1, bias=False), nn.BatchNorm2d(cin), nn.ReLU(inplace=False))
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        stages = []
        for repeats, cout in zip(stages_repeats, stages_out_channels[1:]):
            seq = [ShuffleInvertedResidual(ns, cin, cout, 2)]
            seq += [ShuffleInvertedResidual(ns, cout, cout, 1) for _ in range(repeats - 1)]
            stages.append(nn.Sequential(*seq))
            cin = cout
        self.stages = nn.Sequential(*stages)
        cout = stages_out_channels[-1]
        self.conv5 = nn.Sequential(
            nn.Conv2d(cin, cout, 1, 1, 0, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=False)
        )
        self.pool = nn.AdaptiveAvgPool2d(1)  # torchvision: x.mean([2, 3]) (see FUNCTIONAL_HEADS)
        self.fc = nn.Linear(cout, num_classes)

    def _forward_impl(self, x):
        x = self.maxpool(self.conv1(x))
        x = self.conv5(self.stages(x))
        return self.fc(torch.flatten(self.pool(x), 1))

    def fuse_model(self, fuse):
        for name in ("conv1", "conv5"):
            fuse(getattr(self, name), [["0", "1", "2"]], inplace=True)
        for m in self.modules():
            if type(m) is ShuffleInvertedResidual:
                if len(m.branch1._modules) > 0:
                    fuse(m.branch1, [["0", "1"], ["2", "3", "4"]], inplace=True)
                fuse(m.branch2, [["0", "1", "2"], ["3", "4"], ["5", "6", "7"]], inplace=True)


# (name, factory(ns), input shape)
MODELS = {
    "resnet18_basicblock": (lambda ns: ResNet(ns, BasicBlock, (2, 1), (8, 16)), (2, 3, 32, 32)),
    "resnet50_bottleneck": (lambda ns: ResNet(ns, Bottleneck, (2, 1), (4, 8)), (2, 3, 32, 32)),
    "resnext_grouped": (
        lambda ns: ResNet(ns, Bottleneck, (2, 1), (16, 32), groups=4, width_per_group=8),
        (2, 3, 32, 32),
    ),
    "mobilenet_v2": (lambda ns: MobileNetV2(ns), (2, 3, 32, 32)),
    "mobilenet_v3": (lambda ns: MobileNetV3(ns), (2, 3, 32, 32)),
    "googlenet": (lambda ns: GoogLeNet(ns), (2, 3, 32, 32)),
    "shufflenet_v2": (lambda ns: ShuffleNetV2(ns), (2, 3, 32, 32)),
}

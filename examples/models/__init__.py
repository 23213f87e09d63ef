"""Model architectures written for eager-mode quantization.

Every model here runs as plain fp32 and is ready for the eager workflow of both
``torch_qplugin.quantization`` and ``torch.ao.quantization``:

* ``QuantStub`` / ``DeQuantStub`` mark where tensors enter and leave int8;
* residual adds go through ``FloatFunctional`` (swapped for a quantized add by ``convert``);
* conv / bn / relu sit in sibling submodules and ``fuse_model()`` fuses them in place.

Stubs and FloatFunctional come from ``torch.ao`` (``models/_stubs.py``) so the models import
even without a built torch_qplugin; both toolkits' mappings swap them.

``digits_cnn``: the small CNN of the real-data demo (``examples/demo.py``).
``resnet``: ResNet-18.  ``mobilenet``: MobileNetV2.  ``mobilenet_v3``: MobileNetV3-Large.
``shufflenet``: ShuffleNetV2 x1.0 (all four as torchvision's quantizable versions).
``sequence``: LSTM and Transformer-encoder classifiers for dynamic quantization.
"""

from .digits_cnn import DigitsCNN
from .mobilenet import MobileNetV2, mobilenet_v2
from .mobilenet_v3 import MobileNetV3, mobilenet_v3_large
from .resnet import ResNet, resnet18
from .sequence import LSTMClassifier, TransformerClassifier
from .shufflenet import ShuffleNetV2, shufflenet_v2_x1_0

__all__ = [
    "DigitsCNN",
    "MobileNetV2",
    "mobilenet_v2",
    "MobileNetV3",
    "mobilenet_v3_large",
    "ShuffleNetV2",
    "shufflenet_v2_x1_0",
    "ResNet",
    "resnet18",
    "LSTMClassifier",
    "TransformerClassifier",
]

"""Quantized Conv1d/2d/3d on qplugin::conv{1,2,3}d and ConvTranspose1d/2d/3d on
qplugin::conv_transpose{1,2,3}d (mirror torch.ao.nn.quantized.Conv*d / ConvTranspose*d)."""

from typing import Any, Dict, List, Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
from torch.nn.common_types import _size_1_t, _size_2_t, _size_3_t
from torch.nn.modules.utils import _pair, _single, _triple

from ....quantization import _compat as C
from ...plain._base import _per_output_channel
from .utils import (
    _PackedPickle,
    _act_qparams,
    _guard_never_calibrated,
    _quantize_weight,
    _require_quantized,
    _weight_observer,
    _zeros_qint8,
)

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _reverse_repeat_padding(padding: List[int]) -> List[int]:
    out: List[int] = []
    for p in reversed(padding):
        out.extend([p, p])
    return out


class _ConvNd(_PackedPickle, nn.Module):
    # version history: 1..3 as torch.ao.nn.quantized (weight, bias, scale, zero_point entries)
    _version = 3
    _FLOAT_MODULE = nn.Conv2d
    _NNI_CONV_RELU_MODULE = None
    _NNIQAT_CONV_BN_MODULE = None
    _NNI_CONV_ADD_MODULE = None
    _NNI_CONV_ADD_RELU_MODULE = None
    _NAME = "torch_qplugin.nn.quantized.Conv"

    def _init(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Tuple[int, ...],
        stride: Tuple[int, ...],
        padding: Tuple[int, ...],
        dilation: Tuple[int, ...],
        transposed: bool,
        output_padding: Tuple[int, ...],
        groups: int,
        bias: bool,
        padding_mode: str = "zeros",
        device: Optional[torch.device] = None,
        dtype: Optional[torch.dtype] = None,
    ):
        nn.Module.__init__(self)
        if out_channels <= 0:
            raise ValueError(f"out_channels must be greater than 0, got {out_channels}")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"'padding_mode' should be one of {_PADDING_MODES}, got '{padding_mode}'")
        if isinstance(padding, str):
            raise ValueError(f"qplugin quantized conv: padding should be a number or tuple, got '{padding}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        self._reversed_padding_repeated_twice = _reverse_repeat_padding(list(padding))
        self.set_weight_bias(
            _zeros_qint8(list(self._weight_shape())), torch.zeros(out_channels, dtype=torch.float) if bias else None
        )
        self.scale = 1.0
        self.zero_point = 0

    def _weight_shape(self):
        return (self.out_channels, self.in_channels // self.groups) + tuple(self.kernel_size)

    def _prepack_padding(self) -> List[int]:
        if self.padding_mode == "zeros":
            return list(self.padding)
        return [0] * len(self.padding)

    def extra_repr(self):
        s = (
            "{in_channels}, {out_channels}, kernel_size={kernel_size}"
            ", stride={stride}, scale={scale}, zero_point={zero_point}"
        )
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias() is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)

    def weight(self):
        return self._weight_bias()[0]

    def bias(self):
        return self._weight_bias()[1]

    def _pad(self, x: Tensor) -> Tensor:
        if self.padding_mode != "zeros":
            # pad the integer values (data movement only, bit-exact), keep the qparams
            ints = F.pad(torch.ops.qplugin.int_repr(x), self._reversed_padding_repeated_twice, mode=self.padding_mode)
            x = torch.ops.qplugin.make_per_tensor_quantized_tensor(ints, x.q_scale(), x.q_zero_point())
        return x

    def _save_to_state_dict(self, destination: Dict[str, Any], prefix: str, keep_vars: bool):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        w, b = self._weight_bias()
        destination[prefix + "weight"] = w
        destination[prefix + "bias"] = b
        destination[prefix + "scale"] = torch.tensor(self.scale, dtype=torch.double)  # exact round trip
        destination[prefix + "zero_point"] = torch.tensor(self.zero_point)

    def _load_from_state_dict(
        self,
        state_dict: Dict[str, Any],
        prefix: str,
        local_metadata: Dict[str, Any],
        strict: bool,
        missing_keys: List[str],
        unexpected_keys: List[str],
        error_msgs: List[str],
    ):
        keys = [prefix + k for k in ("weight", "bias", "scale", "zero_point")]
        missing = [k for k in keys if k not in state_dict]
        if missing:
            missing_keys.extend(missing)
            return
        w, b = state_dict.pop(keys[0]), state_dict.pop(keys[1])
        scale, zp = state_dict.pop(keys[2]), state_dict.pop(keys[3])
        if tuple(w.shape) != self._weight_shape():
            error_msgs.append(
                f"size mismatch for {prefix}weight: copying a param with shape "
                f"{tuple(w.shape)} from checkpoint, the shape in current model is "
                f"{self._weight_shape()}."
            )
            return
        if b is not None and tuple(b.shape) != (self.out_channels,):
            error_msgs.append(
                f"size mismatch for {prefix}bias: copying a param with shape "
                f"{tuple(b.shape)} from checkpoint, the shape in current model is "
                f"{(self.out_channels,)}."
            )
            return
        try:
            self.set_weight_bias(w, b)
        except RuntimeError as e:
            error_msgs.append(f"{prefix}weight: cannot pack the loaded weight/bias: {e}")
            return
        self.scale, self.zero_point = float(scale), int(zp)
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, False, missing_keys, unexpected_keys, error_msgs
        )

    @classmethod
    def get_qconv(
        cls,
        mod: nn.Module,
        activation_post_process: Optional[Tuple[float, int]],
        weight_post_process: Optional[nn.Module] = None,
        run_observer: bool = True,
    ) -> "_ConvNd":
        if weight_post_process is None:
            weight_post_process = mod.qconfig.weight()
        if run_observer:
            weight_post_process(mod.weight)
        qconv = cls(
            mod.in_channels,
            mod.out_channels,
            mod.kernel_size,
            mod.stride,
            mod.padding,
            mod.dilation,
            mod.groups,
            mod.bias is not None,
            mod.padding_mode,
        )
        qconv.set_weight_bias(
            _quantize_weight(mod.weight, weight_post_process), None if mod.bias is None else mod.bias.detach().float()
        )
        if activation_post_process is not None:
            qconv.scale, qconv.zero_point = activation_post_process
        return qconv

    @classmethod
    def from_float(cls, mod: nn.Module, use_precomputed_fake_quant: bool = False) -> "_ConvNd":
        """Quantized conv from an observed float conv, a fused ConvReLU/ConvAdd, or a QAT conv."""
        who = cls._NAME
        if hasattr(mod, "weight_fake_quant"):
            if cls._NNIQAT_CONV_BN_MODULE is not None and isinstance(mod, cls._NNIQAT_CONV_BN_MODULE):
                mod.weight, mod.bias = torch.nn.utils.fuse_conv_bn_weights(
                    mod.weight,
                    mod.bias,
                    mod.bn.running_mean,
                    mod.bn.running_var,
                    mod.bn.eps,
                    mod.bn.weight,
                    mod.bn.bias,
                )
            qparams = _act_qparams(mod, who)
            return _guard_never_calibrated(
                cls.get_qconv(mod, qparams, mod.weight_fake_quant, run_observer=not use_precomputed_fake_quant), mod
            )
        allowed = tuple(t for t in (cls._FLOAT_MODULE,) if t is not None)
        if type(mod) not in allowed:
            raise TypeError(
                f"{who}.from_float only works for "
                f"{', '.join(t.__name__ for t in allowed)}, but got: {type(mod).__name__}"
            )
        qparams = _act_qparams(mod, who)
        conv = mod[0] if isinstance(mod, C._FusedModule) else mod
        wobs, _ = _weight_observer(conv, who)
        return _guard_never_calibrated(cls.get_qconv(conv, qparams, wobs), mod)

    @classmethod
    def from_reference(cls, ref: nn.Module, output_scale: float, output_zero_point: int) -> "_ConvNd":
        q = cls(
            ref.in_channels,
            ref.out_channels,
            ref.kernel_size,
            ref.stride,
            ref.padding,
            ref.dilation,
            ref.groups,
            ref.bias is not None,
            ref.padding_mode,
        )
        q.set_weight_bias(ref.get_quantized_weight(), ref.bias)
        q.scale, q.zero_point = float(output_scale), int(output_zero_point)
        return q


class Conv1d(_ConvNd):
    """Quantized 1-d convolution; input (N, C, L) quint8."""

    _FLOAT_MODULE = nn.Conv1d
    _NNIQAT_CONV_BN_MODULE = getattr(C.intrinsic_qat, "ConvBn1d", None)
    _NNI_CONV_RELU_MODULE = C.ConvReLU1d
    _NAME = "torch_qplugin.nn.quantized.Conv1d"

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: _size_1_t,
        stride: _size_1_t = 1,
        padding: _size_1_t = 0,
        dilation: _size_1_t = 1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device: Optional[torch.device] = None,
        dtype: Optional[torch.dtype] = None,
    ) -> None:
        padding = padding if isinstance(padding, str) else _single(padding)
        self._init(
            in_channels,
            out_channels,
            _single(kernel_size),
            _single(stride),
            padding,
            _single(dilation),
            False,
            _single(0),
            groups,
            bias,
            padding_mode,
        )

    def _get_name(self):
        return "QuantizedConv1d"

    def set_weight_bias(self, w: Tensor, b: Optional[Tensor]) -> None:
        self._packed_params = torch.ops.qplugin.conv1d_prepack(
            w, b, list(self.stride), self._prepack_padding(), list(self.dilation), self.groups
        )

    def _weight_bias(self):
        return torch.ops.qplugin.conv1d_unpack(self._packed_params)

    def forward(self, input: Tensor) -> Tensor:
        _require_quantized(input, "torch_qplugin.nn.quantized.Conv1d")
        if input.dim() != 3:
            raise ValueError("Input shape must be `(N, C, L)`!")
        return torch.ops.qplugin.conv1d(self._pad(input), self._packed_params, self.scale, self.zero_point)


class Conv2d(_ConvNd):
    """Quantized 2-d convolution; input (N, C, H, W) quint8, contiguous or channels_last."""

    _FLOAT_MODULE = nn.Conv2d
    _NNIQAT_CONV_BN_MODULE = getattr(C.intrinsic_qat, "ConvBn2d", None)
    _NNI_CONV_RELU_MODULE = C.ConvReLU2d
    _NNI_CONV_ADD_MODULE = C.ConvAdd2d
    _NNI_CONV_ADD_RELU_MODULE = C.ConvAddReLU2d
    _NAME = "torch_qplugin.nn.quantized.Conv2d"

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: _size_2_t,
        stride: _size_2_t = 1,
        padding: _size_2_t = 0,
        dilation: _size_2_t = 1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device: Optional[torch.device] = None,
        dtype: Optional[torch.dtype] = None,
    ) -> None:
        padding = padding if isinstance(padding, str) else _pair(padding)
        self._init(
            in_channels,
            out_channels,
            _pair(kernel_size),
            _pair(stride),
            padding,
            _pair(dilation),
            False,
            _pair(0),
            groups,
            bias,
            padding_mode,
        )

    def _get_name(self):
        return "QuantizedConv2d"

    def set_weight_bias(self, w: Tensor, b: Optional[Tensor]) -> None:
        self._packed_params = torch.ops.qplugin.conv2d_prepack(
            w, b, list(self.stride), self._prepack_padding(), list(self.dilation), self.groups
        )

    def _weight_bias(self):
        return torch.ops.qplugin.conv2d_unpack(self._packed_params)

    def forward(self, input: Tensor) -> Tensor:
        _require_quantized(input, "torch_qplugin.nn.quantized.Conv2d")
        if input.dim() != 4:
            raise ValueError("Input shape must be `(N, C, H, W)`!")
        return torch.ops.qplugin.conv2d(self._pad(input), self._packed_params, self.scale, self.zero_point)


class Conv3d(_ConvNd):
    """Quantized 3-d convolution; input (N, C, D, H, W) quint8."""

    _FLOAT_MODULE = nn.Conv3d
    _NNIQAT_CONV_BN_MODULE = getattr(C.intrinsic_qat, "ConvBn3d", None)
    _NNI_CONV_RELU_MODULE = C.ConvReLU3d
    _NAME = "torch_qplugin.nn.quantized.Conv3d"

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: _size_3_t,
        stride: _size_3_t = 1,
        padding: _size_3_t = 0,
        dilation: _size_3_t = 1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device: Optional[torch.device] = None,
        dtype: Optional[torch.dtype] = None,
    ) -> None:
        padding = padding if isinstance(padding, str) else _triple(padding)
        self._init(
            in_channels,
            out_channels,
            _triple(kernel_size),
            _triple(stride),
            padding,
            _triple(dilation),
            False,
            _triple(0),
            groups,
            bias,
            padding_mode,
        )

    def _get_name(self):
        return "QuantizedConv3d"

    def set_weight_bias(self, w: Tensor, b: Optional[Tensor]) -> None:
        self._packed_params = torch.ops.qplugin.conv3d_prepack(
            w, b, list(self.stride), self._prepack_padding(), list(self.dilation), self.groups
        )

    def _weight_bias(self):
        return torch.ops.qplugin.conv3d_unpack(self._packed_params)

    def forward(self, input: Tensor) -> Tensor:
        _require_quantized(input, "torch_qplugin.nn.quantized.Conv3d")
        if input.dim() != 5:
            raise ValueError("Input shape must be `(N, C, D, H, W)`!")
        return torch.ops.qplugin.conv3d(self._pad(input), self._packed_params, self.scale, self.zero_point)


class _ConvTransposeNd(_ConvNd):
    """Shared by ConvTranspose1d/2d/3d: weight (in_channels, out_channels / groups, kernel...), per
    tensor or per output channel (axis 1; torch's kernels refuse per-channel transposed conv)."""

    _NAME = "torch_qplugin.nn.quantized.ConvTranspose"

    def _init_transposed(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Tuple[int, ...],
        stride: Tuple[int, ...],
        padding: Tuple[int, ...],
        output_padding: Tuple[int, ...],
        groups: int,
        bias: bool,
        dilation: Tuple[int, ...],
        padding_mode: str,
    ):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {self.__class__.__name__}')
        self._init(
            in_channels,
            out_channels,
            kernel_size,
            stride,
            padding,
            dilation,
            True,
            output_padding,
            groups,
            bias,
            padding_mode,
        )

    def _weight_shape(self):
        return (self.in_channels, self.out_channels // self.groups) + tuple(self.kernel_size)

    def _input_padding(self, kernel_size: List[int], dilation: List[int], padding: List[int]) -> List[int]:
        res: List[int] = []
        for kdx in range(len(kernel_size)):
            res.append(dilation[kdx] * (kernel_size[kdx] - 1) - padding[kdx])
        return res

    def set_weight_bias(self, w: Tensor, b: Optional[Tensor]) -> None:
        prepack = getattr(torch.ops.qplugin, f"conv_transpose{len(self.kernel_size)}d_prepack")
        self._packed_params = prepack(
            w, b, list(self.stride), list(self.padding), list(self.output_padding), list(self.dilation), self.groups
        )

    def _weight_bias(self):
        return getattr(torch.ops.qplugin, f"conv_transpose{len(self.kernel_size)}d_unpack")(self._packed_params)

    @classmethod
    def get_qconv(
        cls,
        mod: nn.Module,
        activation_post_process: Optional[Tuple[float, int]],
        weight_post_process: Optional[nn.Module] = None,
        run_observer: bool = True,
    ) -> "_ConvTransposeNd":
        if weight_post_process is None:
            weight_post_process = mod.qconfig.weight()
        if run_observer:
            _per_output_channel(weight_post_process)
            weight_post_process(mod.weight)
        qconv = cls(
            mod.in_channels,
            mod.out_channels,
            mod.kernel_size,
            mod.stride,
            mod.padding,
            mod.output_padding,
            mod.groups,
            mod.bias is not None,
            mod.dilation,
            mod.padding_mode,
        )
        qconv.set_weight_bias(
            _quantize_weight(mod.weight, weight_post_process), None if mod.bias is None else mod.bias.detach().float()
        )
        if activation_post_process is not None:
            qconv.scale, qconv.zero_point = activation_post_process
        return qconv

    @classmethod
    def from_float(cls, mod: nn.Module, use_precomputed_fake_quant: bool = False) -> "_ConvTransposeNd":
        """Quantized transposed conv from an observed float nn.ConvTranspose*d (a ConvTranspose +
        BatchNorm pair fused by fuse_modules is one). A per-channel weight observer observes the
        output channels (weight axis 1)."""
        who = cls._NAME
        if type(mod) is not cls._FLOAT_MODULE:
            raise TypeError(
                f"{who}.from_float only works for {cls._FLOAT_MODULE.__name__}, but got: {type(mod).__name__}"
            )
        qparams = _act_qparams(mod, who)
        wobs, _ = _weight_observer(mod, who)
        return _guard_never_calibrated(cls.get_qconv(mod, qparams, wobs), mod)

    @classmethod
    def from_reference(cls, ref: nn.Module, output_scale: float, output_zero_point: int) -> "_ConvTransposeNd":
        q = cls(
            ref.in_channels,
            ref.out_channels,
            ref.kernel_size,
            ref.stride,
            ref.padding,
            ref.output_padding,
            ref.groups,
            ref.bias is not None,
            ref.dilation,
            ref.padding_mode,
        )
        q.set_weight_bias(ref.get_quantized_weight(), ref.bias)
        q.scale, q.zero_point = float(output_scale), int(output_zero_point)
        return q


class ConvTranspose1d(_ConvTransposeNd):
    """Quantized 1-d transposed convolution; input (N, C, L) quint8."""

    _FLOAT_MODULE = nn.ConvTranspose1d
    _NAME = "torch_qplugin.nn.quantized.ConvTranspose1d"

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: _size_1_t,
        stride: _size_1_t = 1,
        padding: _size_1_t = 0,
        output_padding: _size_1_t = 0,
        groups: int = 1,
        bias: bool = True,
        dilation: _size_1_t = 1,
        padding_mode: str = "zeros",
        device: Optional[torch.device] = None,
        dtype: Optional[torch.dtype] = None,
    ) -> None:
        self._init_transposed(
            in_channels,
            out_channels,
            _single(kernel_size),
            _single(stride),
            _single(padding),
            _single(output_padding),
            groups,
            bias,
            _single(dilation),
            padding_mode,
        )

    def _get_name(self):
        return "QuantizedConvTranspose1d"

    def forward(self, input: Tensor) -> Tensor:
        _require_quantized(input, "torch_qplugin.nn.quantized.ConvTranspose1d")
        if input.dim() != 3:
            raise ValueError("Input shape must be `(N, C, L)`!")
        return torch.ops.qplugin.conv_transpose1d(input, self._packed_params, self.scale, self.zero_point)


class ConvTranspose2d(_ConvTransposeNd):
    """Quantized 2-d transposed convolution; input (N, C, H, W) quint8, contiguous or channels_last."""

    _FLOAT_MODULE = nn.ConvTranspose2d
    _NAME = "torch_qplugin.nn.quantized.ConvTranspose2d"

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: _size_2_t,
        stride: _size_2_t = 1,
        padding: _size_2_t = 0,
        output_padding: _size_2_t = 0,
        groups: int = 1,
        bias: bool = True,
        dilation: _size_2_t = 1,
        padding_mode: str = "zeros",
        device: Optional[torch.device] = None,
        dtype: Optional[torch.dtype] = None,
    ) -> None:
        self._init_transposed(
            in_channels,
            out_channels,
            _pair(kernel_size),
            _pair(stride),
            _pair(padding),
            _pair(output_padding),
            groups,
            bias,
            _pair(dilation),
            padding_mode,
        )

    def _get_name(self):
        return "QuantizedConvTranspose2d"

    def forward(self, input: Tensor) -> Tensor:
        _require_quantized(input, "torch_qplugin.nn.quantized.ConvTranspose2d")
        if input.dim() != 4:
            raise ValueError("Input shape must be `(N, C, H, W)`!")
        return torch.ops.qplugin.conv_transpose2d(input, self._packed_params, self.scale, self.zero_point)


class ConvTranspose3d(_ConvTransposeNd):
    """Quantized 3-d transposed convolution; input (N, C, D, H, W) quint8."""

    _FLOAT_MODULE = nn.ConvTranspose3d
    _NAME = "torch_qplugin.nn.quantized.ConvTranspose3d"

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: _size_3_t,
        stride: _size_3_t = 1,
        padding: _size_3_t = 0,
        output_padding: _size_3_t = 0,
        groups: int = 1,
        bias: bool = True,
        dilation: _size_3_t = 1,
        padding_mode: str = "zeros",
        device: Optional[torch.device] = None,
        dtype: Optional[torch.dtype] = None,
    ) -> None:
        self._init_transposed(
            in_channels,
            out_channels,
            _triple(kernel_size),
            _triple(stride),
            _triple(padding),
            _triple(output_padding),
            groups,
            bias,
            _triple(dilation),
            padding_mode,
        )

    def _get_name(self):
        return "QuantizedConvTranspose3d"

    def forward(self, input: Tensor) -> Tensor:
        _require_quantized(input, "torch_qplugin.nn.quantized.ConvTranspose3d")
        if input.dim() != 5:
            raise ValueError("Input shape must be `(N, C, D, H, W)`!")
        return torch.ops.qplugin.conv_transpose3d(input, self._packed_params, self.scale, self.zero_point)

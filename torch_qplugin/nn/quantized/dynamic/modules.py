"""Dynamically quantized Linear and recurrent modules on qplugin::linear_dynamic."""

from typing import Any, Callable, Dict, List, Optional, Tuple

import torch
import torch.nn as nn
from torch import Tensor

from ....quantization import _compat as C
from ..modules.linear import Linear as _QLinear
from ...plain import _base as B
from ...plain._base import _dynamic_weight_observer
from ..modules.utils import _PackedPickle, _quantize_weight, _zeros_qint8, quantized_dtype

__all__ = ["Linear", "LSTM", "GRU", "LSTMCell", "GRUCell", "RNNCell"]


def _weight_dtype(obs: nn.Module, who: str):
    """torch.qint8 or torch.float16 (the fp16 scheme), from a weight observer's dtype."""
    return quantized_dtype(B._weight_dtype(obs, who), who)


def _quantize(w: Tensor, factory: Callable[[], nn.Module], dtype: torch.dtype = torch.int8) -> Tensor:
    """The weight a module of ``dtype`` packs: qint8 through a fresh observer, or the float weight."""
    if dtype == torch.float16:
        return w.float()
    obs = factory()
    obs(w)
    return _quantize_weight(w, obs)


class Linear(_QLinear):
    """Float in, float out. dtype=torch.qint8: x is quantized per call (full 8-bit range), weights
    qint8 (linear_dynamic). dtype=torch.float16: float16 weights, float activations, float32
    accumulation, no int8 step (linear_dynamic_fp16)."""

    # version history: 1-3 as nn.quantized.Linear; 4 (torch's) no scale/zero_point meaning
    _version = 4
    _FLOAT_MODULE = (nn.Linear, nn.modules.linear.NonDynamicallyQuantizableLinear)
    _NAME = "torch_qplugin.nn.quantized.dynamic.Linear"

    def __init__(
        self, in_features: int, out_features: int, bias_: bool = True, dtype: torch.dtype = torch.int8
    ) -> None:
        super().__init__(in_features, out_features, bias_, dtype=dtype)

    def _get_name(self):
        return "DynamicQuantizedLinear"

    def extra_repr(self) -> str:
        s = f"in_features={self.in_features}, out_features={self.out_features}, dtype={self._packed_params.dtype}"
        if self._packed_params.dtype == torch.qint8:
            s += f", qscheme={self.weight().qscheme()}"
        return s

    def forward(self, x: Tensor) -> Tensor:
        if x.is_quantized:
            raise RuntimeError(
                "torch_qplugin.nn.quantized.dynamic.Linear: expected a float input, got a "
                "quantized tensor (dynamic modules quantize their input themselves)"
            )
        if self._packed_params.dtype == torch.float16:
            return torch.ops.qplugin.linear_dynamic_fp16(x, self._packed_params._packed_params)
        return torch.ops.qplugin.linear_dynamic(x, self._packed_params._packed_params, False)

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
        state_dict.setdefault(prefix + "scale", torch.tensor(1.0))
        state_dict.setdefault(prefix + "zero_point", torch.tensor(0))
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
        )

    @classmethod
    def from_float(cls, mod: nn.Module, use_precomputed_fake_quant: bool = False) -> "Linear":
        allowed = cls._FLOAT_MODULE + C.present(getattr(C.qat, "Linear", None))
        if type(mod) not in allowed:
            raise TypeError(
                f"{cls._NAME}.from_float only works for "
                f"{', '.join(t.__name__ for t in allowed)}, but got: {type(mod).__name__}"
            )
        if hasattr(mod, "weight_fake_quant"):
            wobs = mod.weight_fake_quant
        else:
            wobs = _dynamic_weight_observer(mod)()
        dtype = _weight_dtype(wobs, cls._NAME)
        bias = None if mod.bias is None else mod.bias.detach().float()
        q = cls(mod.in_features, mod.out_features, dtype=dtype)
        if dtype == torch.float16:
            q.set_weight_bias(mod.weight.detach().float(), bias)
        else:
            wobs(mod.weight)
            q.set_weight_bias(_quantize_weight(mod.weight, wobs), bias)
        return q


# ---- recurrent cells -------------------------------------------------------------------------
class _CellBase(_PackedPickle, nn.Module):
    _version = 1
    _PACKED_ATTRS = ("_packed_weight_ih", "_packed_weight_hh")
    _FLOAT_MODULE = nn.RNNCellBase
    _NUM_CHUNKS = 1

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, dtype: torch.dtype = torch.int8) -> None:
        super().__init__()
        dtype = quantized_dtype(dtype, "qplugin dynamic RNN cells")
        if dtype not in (torch.qint8, torch.float16):
            raise ValueError(f"qplugin dynamic RNN cells: dtype should be torch.qint8 or torch.float16, got {dtype}")
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        self.weight_dtype = dtype
        g = self._NUM_CHUNKS * hidden_size
        b = torch.zeros(g) if bias else None
        zeros = _zeros_qint8 if dtype == torch.qint8 else torch.zeros
        self.set_weight_bias((zeros([g, input_size]), b), (zeros([g, hidden_size]), b))

    def extra_repr(self):
        return f"{self.input_size}, {self.hidden_size}, dtype={self.weight_dtype}"

    def _weight_bias(self):
        unpack = (
            torch.ops.qplugin.linear_unpack
            if self.weight_dtype == torch.qint8
            else torch.ops.qplugin.linear_unpack_fp16
        )
        return unpack(self._packed_weight_ih), unpack(self._packed_weight_hh)

    def set_weight_bias(self, ih: Tuple[Tensor, Optional[Tensor]], hh: Tuple[Tensor, Optional[Tensor]]) -> None:
        # qint8 weights (linear_prepack) or, for dtype=torch.float16, float weights kept as float16
        prepack = (
            torch.ops.qplugin.linear_prepack
            if self.weight_dtype == torch.qint8
            else torch.ops.qplugin.linear_prepack_fp16
        )
        self._packed_weight_ih = prepack(ih[0], ih[1])
        self._packed_weight_hh = prepack(hh[0], hh[1])

    def _gates(self, x: Tensor, h: Tensor) -> Tuple[Tensor, Tensor]:
        if self.weight_dtype == torch.float16:
            return (
                torch.ops.qplugin.linear_dynamic_fp16(x, self._packed_weight_ih),
                torch.ops.qplugin.linear_dynamic_fp16(h, self._packed_weight_hh),
            )
        return (
            torch.ops.qplugin.linear_dynamic(x, self._packed_weight_ih, False),
            torch.ops.qplugin.linear_dynamic(h, self._packed_weight_hh, False),
        )

    @classmethod
    def from_float(cls, mod: nn.Module, use_precomputed_fake_quant: bool = False) -> "_CellBase":
        if type(mod) is not cls._FLOAT_MODULE:
            raise TypeError(
                f"torch_qplugin.nn.quantized.dynamic.{cls.__name__}.from_float only works "
                f"for {cls._FLOAT_MODULE.__name__}, but got: {type(mod).__name__}"
            )
        factory = _dynamic_weight_observer(mod)
        dtype = _weight_dtype(factory(), f"torch_qplugin.nn.quantized.dynamic.{cls.__name__}")
        kwargs = {"nonlinearity": mod.nonlinearity} if isinstance(mod, nn.RNNCell) else {}
        q = cls(mod.input_size, mod.hidden_size, mod.bias, dtype=dtype, **kwargs)
        bih = None if mod.bias_ih is None else mod.bias_ih.detach().float()
        bhh = None if mod.bias_hh is None else mod.bias_hh.detach().float()
        q.set_weight_bias(
            (_quantize(mod.weight_ih.detach(), factory, dtype), bih),
            (_quantize(mod.weight_hh.detach(), factory, dtype), bhh),
        )
        return q


class RNNCell(_CellBase):
    _FLOAT_MODULE = nn.RNNCell

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        nonlinearity: str = "tanh",
        dtype: torch.dtype = torch.int8,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, dtype)
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNNCell: nonlinearity should be 'tanh' or 'relu', got '{nonlinearity}'")
        self.nonlinearity = nonlinearity

    def _get_name(self):
        return "DynamicQuantizedRNNCell"

    def forward(self, input: Tensor, hx: Optional[Tensor] = None) -> Tensor:
        if hx is None:
            hx = torch.zeros(input.size(0), self.hidden_size, dtype=input.dtype)
        gi, gh = self._gates(input, hx)
        if self.nonlinearity == "tanh":
            return torch.tanh(gi + gh)
        return torch.relu(gi + gh)


class LSTMCell(_CellBase):
    _FLOAT_MODULE = nn.LSTMCell
    _NUM_CHUNKS = 4

    def _get_name(self):
        return "DynamicQuantizedLSTMCell"

    def forward(self, input: Tensor, hx: Optional[Tuple[Tensor, Tensor]] = None) -> Tuple[Tensor, Tensor]:
        if hx is None:
            z = torch.zeros(input.size(0), self.hidden_size, dtype=input.dtype)
            hx = (z, z)
        _, h, c = torch.ops.qplugin._rnn_layer_dynamic(
            input.unsqueeze(0), hx[0], hx[1], self._packed_weight_ih, self._packed_weight_hh, 4, False
        )
        return h, c


class GRUCell(_CellBase):
    _FLOAT_MODULE = nn.GRUCell
    _NUM_CHUNKS = 3

    def _get_name(self):
        return "DynamicQuantizedGRUCell"

    def forward(self, input: Tensor, hx: Optional[Tensor] = None) -> Tensor:
        if hx is None:
            hx = torch.zeros(input.size(0), self.hidden_size, dtype=input.dtype)
        _, h, _ = torch.ops.qplugin._rnn_layer_dynamic(
            input.unsqueeze(0), hx, hx, self._packed_weight_ih, self._packed_weight_hh, 3, False
        )
        return h


# ---- full-sequence LSTM / GRU --------------------------------------------------------------
class _Direction(_CellBase):
    """One layer, one direction of an LSTM / GRU (qplugin::_rnn_layer_dynamic)."""

    def __init__(
        self, input_size: int, hidden_size: int, bias: bool, chunks: int, reverse: bool, dtype: torch.dtype = torch.int8
    ) -> None:
        self._NUM_CHUNKS = chunks
        super().__init__(input_size, hidden_size, bias, dtype)
        self.reverse = reverse
        self.is_lstm = chunks == 4

    def forward(self, x: Tensor, h: Tensor, c: Tensor) -> Tuple[Tensor, Tensor, Tensor]:
        # Whole sequence in C++: input projections in one GEMM (int8, or the fp16 kernel for float16
        # weights), then per step the hidden projection and one fused pass for the gates
        # (qplugin::_rnn_layer_dynamic).
        return torch.ops.qplugin._rnn_layer_dynamic(
            x, h, c, self._packed_weight_ih, self._packed_weight_hh, self._NUM_CHUNKS, self.reverse
        )


class _RNNBase(B.RecurrentBase, nn.Module):
    _version = 1

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        dtype: torch.dtype = torch.int8,
    ) -> None:
        super().__init__()
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional = bidirectional
        self.dtype = dtype = quantized_dtype(dtype, "torch_qplugin.nn.quantized.dynamic")
        self.num_directions = 2 if bidirectional else 1
        dirs = []
        for layer in range(num_layers):
            isz = input_size if layer == 0 else hidden_size * self.num_directions
            for d in range(self.num_directions):
                dirs.append(_Direction(isz, hidden_size, bias, self._CHUNKS, d == 1, dtype))
        self._dirs = nn.ModuleList(dirs)

    @classmethod
    def from_float(cls, mod: nn.Module, use_precomputed_fake_quant: bool = False) -> "_RNNBase":
        q, factory = cls._new_from_float(mod, "torch_qplugin.nn.quantized.dynamic")
        for i, d in enumerate(q._dirs):
            layer, rev = divmod(i, q.num_directions)
            sfx = f"_l{layer}" + ("_reverse" if rev else "")

            def get(name: str):
                t = getattr(mod, name + sfx, None)
                return None if t is None else t.detach().float()

            d.set_weight_bias(
                (_quantize(get("weight_ih"), factory, q.dtype), get("bias_ih")),
                (_quantize(get("weight_hh"), factory, q.dtype), get("bias_hh")),
            )
        return q


class LSTM(B.LSTMForward, _RNNBase):
    def _get_name(self):
        return "DynamicQuantizedLSTM"


class GRU(B.GRUForward, _RNNBase):
    def _get_name(self):
        return "DynamicQuantizedGRU"

"""Observers: record statistics of float tensors and choose quantization parameters.

Same statistics and the same qparams as torch.ao.quantization's observers of the same name for
the same data (tested against them), without importing torch.ao.quantization. Defaults differ
only where torch's defaults exist to work around its kernels (no ``reduce_range`` needed here).
"""

import functools
import math
import warnings
from abc import ABC, abstractmethod
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch
import torch.nn as nn

from ..quantizer import plain_dtype

__all__ = [
    "ObserverBase",
    "UniformQuantizationObserverBase",
    "MinMaxObserver",
    "MovingAverageMinMaxObserver",
    "PerChannelMinMaxObserver",
    "MovingAveragePerChannelMinMaxObserver",
    "HistogramObserver",
    "PlaceholderObserver",
    "FixedQParamsObserver",
    "with_args",
]

_PER_TENSOR = (torch.per_tensor_affine, torch.per_tensor_symmetric)
_PER_CHANNEL = (torch.per_channel_affine, torch.per_channel_symmetric, torch.per_channel_affine_float_qparams)
_SYMMETRIC = (torch.per_tensor_symmetric, torch.per_channel_symmetric)


class _PartialWrapper:
    """``Observer.with_args(...)``: a factory that can be given more arguments later."""

    def __init__(self, p: Callable[..., Any]) -> None:
        self.p = p

    def __call__(self, *args: Any, **keywords: Any) -> Any:
        return self.p(*args, **keywords)

    def __repr__(self) -> str:
        return self.p.__repr__()

    def with_args(self, **kwargs: Any) -> "_PartialWrapper":
        return _PartialWrapper(functools.partial(self.p, **kwargs))


def with_args(cls_or_self: Any, **kwargs: Any) -> _PartialWrapper:
    return _PartialWrapper(functools.partial(cls_or_self, **kwargs))


# dtype -> (quant_min, quant_max), and with reduce_range; uint4: 4-bit embedding rows
# (float_qparams_weight_only_qconfig_4bit)
_QRANGE = {
    torch.int8: ((-128, 127), (-64, 63)),
    torch.uint8: ((0, 255), (0, 127)),
    torch.int32: ((-(2**31), 2**31 - 1),) * 2,
    torch.uint4: ((0, 15),) * 2,
}


def _qrange(dtype: torch.dtype, reduce_range: bool, quant_min: Optional[int], quant_max: Optional[int]):
    """(quant_min, quant_max) for a plain dtype (torch.uint8 / int8 / int32 / uint4; the quantized
    dtypes as their aliases while torch has them)."""
    dtype = plain_dtype(dtype)
    if dtype not in _QRANGE:
        raise ValueError(
            f"observer: dtype should be torch.uint8, torch.int8, torch.int32 or torch.uint4 (or "
            f"their quantized aliases quint8, qint8, qint32, quint4x2), got {dtype}"
        )
    if quant_min is not None and quant_max is not None:
        if not quant_min <= 0 <= quant_max:
            raise ValueError(f"observer: quant_min..quant_max should include 0, got {quant_min}..{quant_max}")
        if quant_min >= quant_max:
            raise ValueError(f"observer: quant_min should be < quant_max, got {quant_min}..{quant_max}")
        lo, hi = _QRANGE[dtype][0]
        if quant_min < lo or quant_max > hi:
            raise ValueError(
                f"observer: quant_min..quant_max should lie in {dtype}'s range {lo}..{hi}, got {quant_min}..{quant_max}"
            )
        return quant_min, quant_max
    return _QRANGE[dtype][1 if reduce_range else 0]


class ObserverBase(ABC, nn.Module):
    """Base class: ``forward`` records statistics and returns its input unchanged;
    ``calculate_qparams`` returns ``(scale, zero_point)`` tensors."""

    def __init__(self, dtype: torch.dtype, is_dynamic: bool = False) -> None:
        super().__init__()
        self.dtype = plain_dtype(dtype)  # the quantized dtypes are aliases of the plain ones
        self.is_dynamic = is_dynamic

    @abstractmethod
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        pass

    @abstractmethod
    def calculate_qparams(self, **kwargs: Any) -> Tuple[torch.Tensor, torch.Tensor]:
        pass

    with_args = classmethod(with_args)


class UniformQuantizationObserverBase(ObserverBase):
    _version = 3
    eps: torch.Tensor

    def __init__(
        self,
        dtype: torch.dtype = torch.uint8,
        qscheme: torch.qscheme = torch.per_tensor_affine,
        reduce_range: bool = False,
        quant_min: Optional[int] = None,
        quant_max: Optional[int] = None,
        factory_kwargs: Optional[Dict[str, Any]] = None,
        eps: float = torch.finfo(torch.float32).eps,
        is_dynamic: bool = False,
        **kwargs: Any,
    ) -> None:
        factory_kwargs = nn.factory_kwargs(factory_kwargs)
        super().__init__(dtype=dtype, is_dynamic=is_dynamic)
        if qscheme not in _PER_TENSOR + _PER_CHANNEL:
            raise ValueError(f"observer: qscheme should be one of {_PER_TENSOR + _PER_CHANNEL}, got {qscheme}")
        self.qscheme = qscheme
        self.reduce_range = reduce_range
        self.register_buffer("eps", torch.tensor([eps], **factory_kwargs))
        self.has_customized_qrange = quant_min is not None and quant_max is not None
        self.quant_min, self.quant_max = _qrange(dtype, reduce_range, quant_min, quant_max)

    def _calculate_qparams(self, min_val: torch.Tensor, max_val: torch.Tensor):
        """scale / zero_point from a (per-tensor or per-channel) range, torch's rule."""
        if not _min_max_valid(min_val, max_val):
            return torch.tensor([1.0], device=min_val.device.type), torch.tensor([0], device=min_val.device.type)
        qmin, qmax = self.quant_min, self.quant_max
        if self.qscheme == torch.per_channel_affine_float_qparams:
            # embedding rows (torch's rule): the row's own range, float zero_point = -min / scale,
            # so that q = round((x - min) / scale)
            scale = (max_val - min_val) / float(qmax - qmin)
            scale = torch.where(scale > self.eps, scale, torch.ones_like(scale))
            return scale, -1 * min_val / scale
        min_neg = torch.min(min_val, torch.zeros_like(min_val))
        max_pos = torch.max(max_val, torch.zeros_like(max_val))
        device = min_neg.device
        zero_point = torch.zeros(min_neg.size(), dtype=torch.int64, device=device)
        if self.qscheme in _SYMMETRIC:
            max_pos = torch.max(-min_neg, max_pos)
            scale = max_pos / (float(qmax - qmin) / 2)
            scale = torch.max(scale, self.eps)
            if self.dtype == torch.uint8:
                mid = (qmin + qmax) // 2 if self.has_customized_qrange else 128
                zero_point = zero_point.new_full(zero_point.size(), mid)
        else:
            scale = (max_pos - min_neg) / float(qmax - qmin)
            scale = torch.max(scale, self.eps)
            zero_point = qmin - torch.round(min_neg / scale).to(torch.int)
            zero_point = torch.clamp(zero_point, qmin, qmax)
        if scale.dim() == 0:
            scale = torch.tensor([float(scale)], dtype=scale.dtype, device=device)
        if zero_point.dim() == 0:
            zero_point = torch.tensor([int(zero_point)], dtype=zero_point.dtype, device=device)
        return scale, zero_point

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
        version = local_metadata.get("version", None)
        if version is None or version == 1:
            state_dict[prefix + "eps"] = torch.tensor([torch.finfo(torch.float32).eps])
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
        )

    @torch.jit.export
    def reset_min_max_vals(self) -> None:
        raise NotImplementedError("Cannot reset min/max values in the given observer.")


def _min_max_valid(min_val: torch.Tensor, max_val: torch.Tensor):
    if min_val.numel() == 0 or max_val.numel() == 0:
        warnings.warn("must run observer before calling calculate_qparams. Returning default values.", stacklevel=3)
        return False
    if min_val.dim() == 0 or max_val.dim() == 0:
        if min_val == float("inf") and max_val == float("-inf"):
            warnings.warn("must run observer before calling calculate_qparams. Returning default values.", stacklevel=3)
            return False
        if not min_val <= max_val:
            raise ValueError(f"observer: min {min_val} should be <= max {max_val}")
    elif not torch.all(min_val <= max_val):
        raise ValueError(f"observer: min {min_val} should be <= max {max_val}")
    return True


def observer_state(observer: nn.Module) -> Tuple[str, str]:
    """What an observer (or the observer inside a fake-quant) has recorded, as ``(state, why)``:

    * ``"calibrated"``: a complete, finite range (per channel: every channel), and for a
      histogram observer a non-empty histogram; also observers that need no data (placeholder,
      fixed qparams);
    * ``"untouched"``: still in its initial state: it recorded nothing;
    * ``"partial"``: some statistics but not a usable range (``why`` says which): a min without a
      max, channels without data, NaN, min > max, a histogram with no counts.

    Reads the buffers torch's observers share (``min_val``, ``max_val``, ``histogram``), so it
    works for torch.ao.quantization's observers too."""
    obs = getattr(observer, "activation_post_process", observer)  # FakeQuantize wraps an observer
    min_val, max_val = getattr(obs, "min_val", None), getattr(obs, "max_val", None)
    if not isinstance(min_val, torch.Tensor) or not isinstance(max_val, torch.Tensor):
        return "calibrated", ""
    hist = getattr(obs, "histogram", None)
    counts = float(hist.sum()) if isinstance(hist, torch.Tensor) else None
    initial = (min_val.numel() == 0 and max_val.numel() == 0) or (
        min_val.numel() == 1
        and max_val.numel() == 1
        and float(min_val) == float("inf")
        and float(max_val) == float("-inf")
    )
    if initial:
        if not counts:
            return "untouched", ""
        return "partial", f"its histogram holds {counts:g} counts but min_val / max_val were never set"
    if min_val.shape != max_val.shape:
        return "partial", (f"min_val has shape {tuple(min_val.shape)} but max_val has shape {tuple(max_val.shape)}")
    finite = torch.isfinite(min_val) & torch.isfinite(max_val)
    if not bool(finite.all()):
        if min_val.dim() == 0 or min_val.numel() == 1:
            return "partial", f"its range is not finite (min_val={float(min_val)}, max_val={float(max_val)})"
        bad = (~finite).nonzero().flatten().tolist()
        more = f" and {len(bad) - 8} more" if len(bad) > 8 else ""
        return "partial", (
            f"{len(bad)} of its {min_val.numel()} channels have no finite range (channels {bad[:8]}{more})"
        )
    if bool((min_val > max_val).any()):
        return "partial", "its min_val exceeds its max_val"
    if counts is not None and not (counts > 0 and math.isfinite(counts)):
        return "partial", f"its histogram is empty or not finite (sum {counts:g}) although min_val / max_val are set"
    return "calibrated", ""


def is_calibrated(observer: nn.Module) -> bool:
    """True when the observer holds a usable range (``observer_state(observer)[0] == "calibrated"``)."""
    return observer_state(observer)[0] == "calibrated"


class MinMaxObserver(UniformQuantizationObserverBase):
    """Running min / max of everything seen."""

    min_val: torch.Tensor
    max_val: torch.Tensor

    def __init__(
        self,
        dtype: torch.dtype = torch.uint8,
        qscheme: torch.qscheme = torch.per_tensor_affine,
        reduce_range: bool = False,
        quant_min: Optional[int] = None,
        quant_max: Optional[int] = None,
        factory_kwargs: Optional[Dict[str, Any]] = None,
        eps: float = torch.finfo(torch.float32).eps,
        is_dynamic: bool = False,
        **kwargs: Any,
    ) -> None:
        if qscheme not in _PER_TENSOR:
            raise ValueError(f"{type(self).__name__}: qscheme should be per-tensor, got {qscheme}")
        if is_dynamic:
            raise NotImplementedError(f"{type(self).__name__} doesn't support dynamic quantization")
        super().__init__(
            dtype=dtype,
            qscheme=qscheme,
            reduce_range=reduce_range,
            quant_min=quant_min,
            quant_max=quant_max,
            factory_kwargs=factory_kwargs,
            eps=eps,
            **kwargs,
        )
        factory_kwargs = nn.factory_kwargs(factory_kwargs)
        self.register_buffer("min_val", torch.tensor(float("inf"), **factory_kwargs))
        self.register_buffer("max_val", torch.tensor(float("-inf"), **factory_kwargs))

    def forward(self, x_orig: torch.Tensor) -> torch.Tensor:
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach().to(self.min_val.dtype)
        min_now, max_now = torch.aminmax(x)
        self.min_val.copy_(torch.min(min_now, self.min_val))
        self.max_val.copy_(torch.max(max_now, self.max_val))
        return x_orig

    @torch.jit.export
    def calculate_qparams(self) -> Tuple[torch.Tensor, torch.Tensor]:
        return self._calculate_qparams(self.min_val, self.max_val)

    @torch.jit.export
    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}"

    @torch.jit.export
    def reset_min_max_vals(self) -> None:
        self.min_val.copy_(torch.tensor(float("inf")))
        self.max_val.copy_(torch.tensor(float("-inf")))


class MovingAverageMinMaxObserver(MinMaxObserver):
    """Exponential moving average of per-batch min / max (``averaging_constant``)."""

    def __init__(
        self,
        averaging_constant: float = 0.01,
        dtype: torch.dtype = torch.uint8,
        qscheme: torch.qscheme = torch.per_tensor_affine,
        reduce_range: bool = False,
        quant_min: Optional[int] = None,
        quant_max: Optional[int] = None,
        eps: float = torch.finfo(torch.float32).eps,
        is_dynamic: bool = False,
        **kwargs: Any,
    ) -> None:
        if is_dynamic:
            raise NotImplementedError("MovingAverageMinMaxObserver doesn't support dynamic quantization")
        self.averaging_constant = averaging_constant
        super().__init__(
            dtype=dtype,
            qscheme=qscheme,
            reduce_range=reduce_range,
            quant_min=quant_min,
            quant_max=quant_max,
            eps=eps,
            **kwargs,
        )

    def forward(self, x_orig: torch.Tensor) -> torch.Tensor:
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach().to(self.min_val.dtype)
        min_val, max_val = self.min_val, self.max_val
        if min_val == float("inf") and max_val == float("-inf"):
            min_val, max_val = torch.aminmax(x)
        else:
            min_now, max_now = torch.aminmax(x)
            min_val = min_val + self.averaging_constant * (min_now - min_val)
            max_val = max_val + self.averaging_constant * (max_now - max_val)
        self.min_val.copy_(min_val)
        self.max_val.copy_(max_val)
        return x_orig


class PerChannelMinMaxObserver(UniformQuantizationObserverBase):
    """Running min / max per slice along ``ch_axis``."""

    min_val: torch.Tensor
    max_val: torch.Tensor

    def __init__(
        self,
        ch_axis: int = 0,
        dtype: torch.dtype = torch.uint8,
        qscheme: torch.qscheme = torch.per_channel_affine,
        reduce_range: bool = False,
        quant_min: Optional[int] = None,
        quant_max: Optional[int] = None,
        factory_kwargs: Optional[Dict[str, Any]] = None,
        eps: float = torch.finfo(torch.float32).eps,
        is_dynamic: bool = False,
        **kwargs: Any,
    ) -> None:
        if qscheme not in _PER_CHANNEL:
            raise ValueError(f"{type(self).__name__}: qscheme should be per-channel, got {qscheme}")
        if is_dynamic:
            raise NotImplementedError(f"{type(self).__name__} doesn't support dynamic quantization")
        super().__init__(
            dtype=dtype,
            qscheme=qscheme,
            reduce_range=reduce_range,
            quant_min=quant_min,
            quant_max=quant_max,
            factory_kwargs=factory_kwargs,
            eps=eps,
            **kwargs,
        )
        factory_kwargs = nn.factory_kwargs(factory_kwargs)
        self.ch_axis = ch_axis
        self.register_buffer("min_val", torch.tensor([], **factory_kwargs))
        self.register_buffer("max_val", torch.tensor([], **factory_kwargs))

    def _rows(self, x_orig: torch.Tensor):
        x = x_orig.detach()
        axis = self.ch_axis if self.ch_axis >= 0 else self.ch_axis + x.dim()
        order = [axis] + [d for d in range(x.dim()) if d != axis]
        return torch.flatten(x.permute(order).to(self.min_val.dtype), start_dim=1)

    def forward(self, x_orig: torch.Tensor) -> torch.Tensor:
        if x_orig.numel() == 0:
            return x_orig
        min_now, max_now = torch.aminmax(self._rows(x_orig), dim=1)
        if self.min_val.numel() == 0 or self.max_val.numel() == 0:
            min_val, max_val = min_now, max_now
        else:
            min_val, max_val = torch.min(min_now, self.min_val), torch.max(max_now, self.max_val)
        self._store(min_val, max_val)
        return x_orig

    def _store(self, min_val: torch.Tensor, max_val: torch.Tensor):
        self.min_val.resize_(min_val.shape)
        self.max_val.resize_(max_val.shape)
        self.min_val.copy_(min_val)
        self.max_val.copy_(max_val)

    @torch.jit.export
    def calculate_qparams(self) -> Tuple[torch.Tensor, torch.Tensor]:
        return self._calculate_qparams(self.min_val, self.max_val)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}"

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
        for name in ("min_val", "max_val"):  # shapes depend on the data seen
            key = prefix + name
            if key in state_dict:
                getattr(self, name).resize_(state_dict[key].shape)
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
        )

    @torch.jit.export
    def reset_min_max_vals(self) -> None:
        self.min_val = torch.tensor([], device=self.min_val.device)
        self.max_val = torch.tensor([], device=self.max_val.device)


class MovingAveragePerChannelMinMaxObserver(PerChannelMinMaxObserver):
    def __init__(
        self,
        averaging_constant: float = 0.01,
        ch_axis: int = 0,
        dtype: torch.dtype = torch.uint8,
        qscheme: torch.qscheme = torch.per_channel_affine,
        reduce_range: bool = False,
        quant_min: Optional[int] = None,
        quant_max: Optional[int] = None,
        eps: float = torch.finfo(torch.float32).eps,
        is_dynamic: bool = False,
        **kwargs: Any,
    ) -> None:
        if is_dynamic:
            raise NotImplementedError("MovingAveragePerChannelMinMaxObserver doesn't support dynamic quantization")
        super().__init__(
            ch_axis=ch_axis,
            dtype=dtype,
            qscheme=qscheme,
            reduce_range=reduce_range,
            quant_min=quant_min,
            quant_max=quant_max,
            eps=eps,
            **kwargs,
        )
        self.averaging_constant = averaging_constant

    def forward(self, x_orig: torch.Tensor) -> torch.Tensor:
        if x_orig.numel() == 0:
            return x_orig
        min_now, max_now = torch.aminmax(self._rows(x_orig), dim=1)
        if self.min_val.numel() == 0 or self.max_val.numel() == 0:
            min_val, max_val = min_now, max_now
        else:
            min_val = self.min_val + self.averaging_constant * (min_now - self.min_val)
            max_val = self.max_val + self.averaging_constant * (max_now - self.max_val)
        self._store(min_val, max_val)
        return x_orig


class HistogramObserver(UniformQuantizationObserverBase):
    """Histogram of everything seen; qparams minimise the L2 quantization error over candidate
    ranges (the non-linear search torch uses, same result)."""

    histogram: torch.Tensor
    min_val: torch.Tensor
    max_val: torch.Tensor

    def __init__(
        self,
        bins: int = 2048,
        dtype: torch.dtype = torch.uint8,
        qscheme: torch.qscheme = torch.per_tensor_affine,
        reduce_range: bool = False,
        quant_min: Optional[int] = None,
        quant_max: Optional[int] = None,
        factory_kwargs: Optional[Dict[str, Any]] = None,
        eps: float = torch.finfo(torch.float32).eps,
        is_dynamic: bool = False,
        **kwargs: Any,
    ) -> None:
        if qscheme not in _PER_TENSOR:
            raise NotImplementedError(
                f"HistogramObserver: qscheme should be per_tensor_affine or per_tensor_symmetric, got {qscheme}"
            )
        if is_dynamic:
            raise NotImplementedError("HistogramObserver doesn't support dynamic quantization")
        super().__init__(
            dtype=dtype,
            qscheme=qscheme,
            reduce_range=reduce_range,
            quant_min=quant_min,
            quant_max=quant_max,
            factory_kwargs=factory_kwargs,
            eps=eps,
            **kwargs,
        )
        factory_kwargs = nn.factory_kwargs(factory_kwargs)
        self.bins = bins
        self.register_buffer("histogram", torch.zeros(self.bins, **factory_kwargs))
        self.register_buffer("min_val", torch.tensor(float("inf"), **factory_kwargs))
        self.register_buffer("max_val", torch.tensor(float("-inf"), **factory_kwargs))
        self.dst_nbins = 2 ** torch.iinfo(self.dtype).bits
        self.upsample_rate = 16

    @staticmethod
    def _norm(begin: torch.Tensor, end: torch.Tensor, density: torch.Tensor) -> torch.Tensor:
        # density * integral_{begin}^{end} x^2 dx
        return density * (end * end * end - begin * begin * begin) / 3

    def _quantization_error(self, start_bin: int, end_bin: int):
        bin_width = (self.max_val.item() - self.min_val.item()) / self.bins
        dst_width = bin_width * (end_bin - start_bin + 1) / self.dst_nbins
        if dst_width == 0.0:
            return 0.0
        src = torch.arange(self.bins, device=self.histogram.device)
        src_begin = (src - start_bin) * bin_width
        src_end = src_begin + bin_width
        dst_of_begin = torch.clamp(torch.div(src_begin, dst_width, rounding_mode="floor"), 0, self.dst_nbins - 1)
        dst_of_end = torch.clamp(torch.div(src_end, dst_width, rounding_mode="floor"), 0, self.dst_nbins - 1)
        density = self.histogram / bin_width
        half = dst_width / 2
        norm = torch.zeros(self.bins, device=self.histogram.device)
        norm += self._norm(
            src_begin - (dst_of_begin + 0.5) * dst_width,
            torch.ones(self.bins, device=self.histogram.device) * half,
            density,
        )
        norm += (dst_of_end - dst_of_begin - 1) * self._norm(torch.tensor(-half), torch.tensor(half), density)
        norm += self._norm(torch.tensor(-half), src_end - (dst_of_end * dst_width + half), density)
        return norm.sum().item()

    def _non_linear_param_search(self):
        bin_width = (self.max_val - self.min_val) / self.bins
        total = torch.sum(self.histogram).item()
        csum = torch.cumsum(self.histogram, dim=0)
        step, alpha, beta = 1e-5, 0.0, 1.0
        start_bin, end_bin = 0, self.bins - 1
        norm_min = float("inf")
        while alpha < beta:
            next_alpha, next_beta = alpha + step, beta - step
            lo, hi = start_bin, end_bin
            while lo < end_bin and csum[lo] < next_alpha * total:
                lo += 1
            while hi > start_bin and csum[hi] > next_beta * total:
                hi -= 1
            next_start, next_end = start_bin, end_bin
            if (lo - start_bin) > (end_bin - hi):
                next_start, alpha = lo, next_alpha
            else:
                next_end, beta = hi, next_beta
            if next_start == start_bin and next_end == end_bin:
                continue
            norm = self._quantization_error(next_start, next_end)
            if norm > norm_min:
                break
            norm_min, start_bin, end_bin = norm, next_start, next_end
        return self.min_val + bin_width * start_bin, self.min_val + bin_width * (end_bin + 1)

    def _upscale_histogram(
        self,
        hist: torch.Tensor,
        orig_min: torch.Tensor,
        orig_max: torch.Tensor,
        new_min: torch.Tensor,
        new_max: torch.Tensor,
    ):
        hist = hist.repeat_interleave(self.upsample_rate) / self.upsample_rate
        bin_size = (orig_max - orig_min) / (self.bins * self.upsample_rate)
        mids = (
            torch.linspace(orig_min, orig_max, self.bins * self.upsample_rate + 1, device=orig_min.device)[:-1].to(
                hist.device
            )
            + 0.5 * bin_size
        )
        bounds = torch.linspace(new_min, new_max, self.bins + 1, device=new_min.device).to(hist.device)
        bucket = torch.bucketize(mids, bounds, right=True) - 1
        bucket = bucket.clamp(0, self.bins - 1)
        return torch.bincount(bucket, weights=hist, minlength=self.bins)

    def _combine_histograms(
        self,
        orig_hist: torch.Tensor,
        orig_min: torch.Tensor,
        orig_max: torch.Tensor,
        new_hist: torch.Tensor,
        new_min: torch.Tensor,
        new_max: torch.Tensor,
    ):
        if new_min == orig_min and new_max == orig_max:
            return orig_hist + new_hist
        if orig_min == orig_max:
            return torch.histc(orig_min, bins=self.bins, min=new_min, max=new_max) * torch.sum(orig_hist) + new_hist
        return new_hist + self._upscale_histogram(orig_hist, orig_min, orig_max, new_min, new_max)

    def _set(self, name: str, value: torch.Tensor):
        buf = getattr(self, name)
        buf.detach_().resize_(value.shape)
        buf.copy_(value)

    def forward(self, x_orig: torch.Tensor) -> torch.Tensor:
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach()
        x_min, x_max = torch.aminmax(x)
        if x_min == -torch.inf or x_max == torch.inf:
            warnings.warn("torch.inf detected in input tensor, ignoring input", stacklevel=2)
            x = x[x.abs() != torch.inf]
            if x.numel() == 0:
                return x_orig
            x_min, x_max = torch.aminmax(x)
        cur_min, cur_max = self.min_val, self.max_val
        if cur_min == float("inf") or cur_max == float("-inf"):
            self._set("min_val", x_min)
            self._set("max_val", x_max)
            self._set("histogram", torch.histc(x, self.bins, min=x_min, max=x_max))
            return x_orig
        new_min = torch.min(cur_min, x_min).detach()
        new_max = torch.max(cur_max, x_max).detach()
        update = torch.histc(x, self.bins, min=new_min, max=new_max).to(self.histogram.device)
        if new_min == cur_min and new_max == cur_max:
            self._set("histogram", self.histogram + update)
        else:
            self._set("histogram", self._combine_histograms(self.histogram, cur_min, cur_max, update, new_min, new_max))
            self._set("min_val", new_min)
            self._set("max_val", new_max)
        return x_orig

    @torch.jit.export
    def calculate_qparams(self) -> Tuple[torch.Tensor, torch.Tensor]:
        if self.min_val == float("inf") and self.max_val == float("-inf"):
            warnings.warn(
                "must run observer before calling calculate_qparams. Returning default scale and zero point ",
                stacklevel=2,
            )
            return torch.tensor([1.0], device=self.min_val.device.type), torch.tensor(
                [0], device=self.min_val.device.type
            )
        new_min, new_max = self._non_linear_param_search()
        return self._calculate_qparams(new_min, new_max)

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
        for name in ("min_val", "max_val", "histogram"):
            key = prefix + name
            if key in state_dict:
                getattr(self, name).resize_(state_dict[key].shape)
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
        )

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}"


class PlaceholderObserver(ObserverBase):
    """Records nothing; carries dtype (and ``is_dynamic``) for dynamic quantization."""

    def __init__(
        self,
        dtype: torch.dtype = torch.float32,
        custom_op_name: str = "",
        compute_dtype: Optional[torch.dtype] = None,
        quant_min: Optional[int] = None,
        quant_max: Optional[int] = None,
        qscheme: Optional[torch.qscheme] = None,
        eps: Optional[float] = None,
        is_dynamic: bool = False,
    ) -> None:
        super().__init__(dtype=dtype, is_dynamic=is_dynamic)
        self.qscheme = torch.per_tensor_affine if qscheme is None else qscheme
        self.quant_min, self.quant_max = quant_min, quant_max
        self.eps = eps
        self.custom_op = custom_op_name

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x

    @torch.jit.export
    def calculate_qparams(self) -> Tuple[torch.Tensor, torch.Tensor]:
        raise RuntimeError(
            "PlaceholderObserver has no qparams: it marks a tensor that is quantized dynamically (at run time)"
        )


class FixedQParamsObserver(ObserverBase):
    """Fixed qparams (e.g. sigmoid's 1/256, 0): records nothing."""

    scale: torch.Tensor
    zero_point: torch.Tensor

    def __init__(
        self,
        scale: float,
        zero_point: int,
        dtype: torch.dtype = torch.uint8,
        qscheme: torch.qscheme = torch.per_tensor_affine,
        quant_min: int = 0,
        quant_max: int = 255,
        is_dynamic: bool = False,
        **kwargs: Any,
    ) -> None:
        if is_dynamic:
            raise NotImplementedError("FixedQParamsObserver doesn't support dynamic quantization")
        super().__init__(dtype=dtype, is_dynamic=is_dynamic)
        self.quant_min, self.quant_max, self.qscheme = quant_min, quant_max, qscheme
        self.register_buffer("scale", torch.tensor([scale], dtype=torch.float))
        self.register_buffer("zero_point", torch.tensor([zero_point], dtype=torch.int))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x

    @torch.jit.export
    def calculate_qparams(self) -> Tuple[torch.Tensor, torch.Tensor]:
        return self.scale, self.zero_point


# ---- workflow pieces torch.ao.quantization also offers ---------------------------------------
class NoopObserver(ObserverBase):
    """Observes nothing and carries a dtype (default float16): marks a tensor that stays float
    (torch's NoopObserver; its calculate_qparams raises)."""

    def __init__(self, dtype: torch.dtype = torch.float16, custom_op_name: str = "") -> None:
        super().__init__(dtype=dtype, is_dynamic=False)
        self.custom_op = custom_op_name

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x

    @torch.jit.export
    def calculate_qparams(self) -> Tuple[torch.Tensor, torch.Tensor]:
        raise RuntimeError("NoopObserver has no qparams: it observes nothing")


class RecordingObserver(ObserverBase):
    """Keeps every tensor it sees (debugging); ``get_tensor_value()`` returns the list."""

    __annotations__ = {"tensor_val": List[Optional[torch.Tensor]]}

    def __init__(self, dtype: torch.dtype = torch.uint8) -> None:
        super().__init__(dtype=dtype, is_dynamic=False)
        self.tensor_val = []

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.tensor_val.append(x.clone())
        return x

    @torch.jit.export
    def calculate_qparams(self) -> Tuple[torch.Tensor, torch.Tensor]:
        raise RuntimeError("RecordingObserver has no qparams: it records tensors (get_tensor_value())")

    @torch.jit.export
    def get_tensor_value(self) -> List[Optional[torch.Tensor]]:
        return self.tensor_val

"""FakeQuantize: observe, then quantize-dequantize in float (straight-through gradients).

Same interface as torch.ao.quantization.FakeQuantize; backed by aten's
fake_quantize_per_{tensor,channel}_affine, whose backward is the straight-through estimator
(gradient 1 inside [quant_min, quant_max] after scaling, 0 outside).
"""

from typing import Any, Callable, Dict, List, Optional, Tuple

import torch
import torch.nn as nn

from .observer import MovingAverageMinMaxObserver, _PER_CHANNEL, _PER_TENSOR, with_args

__all__ = [
    "FakeQuantizeBase",
    "FakeQuantize",
    "disable_fake_quant",
    "enable_fake_quant",
    "disable_observer",
    "enable_observer",
]


class FakeQuantizeBase(nn.Module):
    fake_quant_enabled: torch.Tensor
    observer_enabled: torch.Tensor

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("fake_quant_enabled", torch.tensor([1], dtype=torch.uint8))
        self.register_buffer("observer_enabled", torch.tensor([1], dtype=torch.uint8))

    @torch.jit.export
    def enable_fake_quant(self, enabled: bool = True) -> None:
        self.fake_quant_enabled[0] = 1 if enabled else 0

    @torch.jit.export
    def disable_fake_quant(self) -> None:
        self.enable_fake_quant(False)

    @torch.jit.export
    def enable_observer(self, enabled: bool = True) -> None:
        self.observer_enabled[0] = 1 if enabled else 0

    @torch.jit.export
    def disable_observer(self) -> None:
        self.enable_observer(False)

    with_args = classmethod(with_args)


class FakeQuantize(FakeQuantizeBase):
    scale: torch.Tensor
    zero_point: torch.Tensor

    def __init__(
        self,
        observer: Callable[..., nn.Module] = MovingAverageMinMaxObserver,
        quant_min: Optional[int] = None,
        quant_max: Optional[int] = None,
        is_dynamic: bool = False,
        **observer_kwargs: Any,
    ) -> None:
        super().__init__()
        if quant_min is not None and quant_max is not None:
            if quant_min > quant_max:
                raise ValueError(f"FakeQuantize: quant_min should be <= quant_max, got {quant_min} > {quant_max}")
            observer_kwargs.update({"quant_min": quant_min, "quant_max": quant_max})
        observer_kwargs["is_dynamic"] = is_dynamic
        self.activation_post_process = observer(**observer_kwargs)
        app = self.activation_post_process
        self.quant_min, self.quant_max = app.quant_min, app.quant_max
        self.is_dynamic = app.is_dynamic
        self.register_buffer("scale", torch.tensor([1.0], dtype=torch.float))
        self.register_buffer("zero_point", torch.tensor([0], dtype=torch.int))
        self.dtype = app.dtype
        self.qscheme = app.qscheme
        self.ch_axis = getattr(app, "ch_axis", -1)
        if self.qscheme not in _PER_TENSOR + _PER_CHANNEL:
            raise ValueError(f"FakeQuantize: qscheme should be per-tensor or per-channel, got {self.qscheme}")
        self.is_per_channel = self.qscheme in _PER_CHANNEL

    @torch.jit.export
    def calculate_qparams(self) -> Tuple[torch.Tensor, torch.Tensor]:
        return self.activation_post_process.calculate_qparams()

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        if self.observer_enabled[0] == 1:
            self.activation_post_process(X.detach())
            scale, zero_point = self.calculate_qparams()
            scale, zero_point = scale.to(self.scale.device), zero_point.to(self.zero_point.device)
            if self.scale.shape != scale.shape:
                self.scale.resize_(scale.shape)
                self.zero_point.resize_(zero_point.shape)
            self.scale.copy_(scale)
            self.zero_point.copy_(zero_point)
        if self.fake_quant_enabled[0] == 1:
            if self.is_per_channel:
                X = torch.fake_quantize_per_channel_affine(
                    X, self.scale, self.zero_point, self.ch_axis, self.quant_min, self.quant_max
                )
            else:
                X = torch.fake_quantize_per_tensor_affine(
                    X, self.scale, self.zero_point, self.quant_min, self.quant_max
                )
        return X

    @torch.jit.export
    def extra_repr(self) -> str:
        return (
            f"fake_quant_enabled={self.fake_quant_enabled}, observer_enabled={self.observer_enabled}, "
            f"quant_min={self.quant_min}, quant_max={self.quant_max}, dtype={self.dtype}, "
            f"qscheme={self.qscheme}, ch_axis={self.ch_axis}, scale={self.scale}, "
            f"zero_point={self.zero_point}"
        )

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
        for name in ("scale", "zero_point"):
            key = prefix + name
            if key in state_dict:
                getattr(self, name).resize_(state_dict[key].shape)
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
        )


def _is_fake_quant(mod: nn.Module):
    return isinstance(mod, FakeQuantizeBase) or (hasattr(mod, "enable_fake_quant") and hasattr(mod, "enable_observer"))


def disable_fake_quant(mod: nn.Module) -> None:
    """``model.apply(disable_fake_quant)``"""
    if _is_fake_quant(mod):
        mod.disable_fake_quant()


def enable_fake_quant(mod: nn.Module) -> None:
    if _is_fake_quant(mod):
        mod.enable_fake_quant()


def disable_observer(mod: nn.Module) -> None:
    if _is_fake_quant(mod):
        mod.disable_observer()


def enable_observer(mod: nn.Module) -> None:
    if _is_fake_quant(mod):
        mod.enable_observer()

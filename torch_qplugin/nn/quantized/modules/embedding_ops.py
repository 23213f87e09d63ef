"""Quantized Embedding / EmbeddingBag (mirror torch.ao.nn.quantized's) on qplugin's embedding
kernels: weights quantized row-wise with float qparams (quint8, or quint4x2 two codes a byte),
float outputs. state_dicts are torch's (``_packed_params.dtype``, ``_packed_params._packed_weight``
holding the quantized weight), so either side loads the other's."""

from typing import Any, Dict, List, Optional, Type

import torch
import torch.nn as nn
from torch import Tensor

from ...plain._base import _weight_only_observer
from .utils import _hide_packed_params_repr
from ....quantizer import quantized_dtype

__all__ = ["EmbeddingPackedParams", "Embedding", "EmbeddingBag"]

_MODES = {"sum": 0, "mean": 1, "max": 2}


def _table_dtype(dtype: torch.dtype, who: str, error: Type[Exception] = NotImplementedError):
    """torch.quint8 / quint4x2 for a table dtype given as it or its plain alias (uint8 / uint4)."""
    q = quantized_dtype(dtype, who)
    if q not in (getattr(torch, "quint8", None), getattr(torch, "quint4x2", None)):
        raise error(f"{who}: dtype should be torch.quint8 or torch.quint4x2, got {dtype}")
    return q


def _empty_rows(num_embeddings: int, embedding_dim: int, dtype: torch.dtype):
    return torch._empty_per_channel_affine_quantized(
        [num_embeddings, embedding_dim],
        scales=torch.ones(num_embeddings, dtype=torch.float),
        zero_points=torch.zeros(num_embeddings, dtype=torch.float),
        axis=0,
        dtype=dtype,
    )


class EmbeddingPackedParams(nn.Module):
    _version = 1

    def __init__(self, num_embeddings: int, embedding_dim: int, dtype: torch.dtype = torch.uint8) -> None:
        super().__init__()
        dtype = _table_dtype(dtype, "torch_qplugin quantized embedding")
        self.dtype = dtype
        self.set_weight(_empty_rows(num_embeddings, embedding_dim, dtype))

    @torch.jit.export
    def set_weight(self, weight: Tensor) -> None:
        self._packed_weight = torch.ops.qplugin.embedding_bag_prepack(weight)

    @torch.jit.export
    def _weight(self):
        return torch.ops.qplugin.embedding_bag_unpack(self._packed_weight)

    def forward(self, x: Tensor) -> Tensor:
        return x

    # Version 1 (torch's layout)
    #   |--- _packed_weight : the quantized weight (unpacked)
    #   |--- dtype : torch.dtype
    def _save_to_state_dict(self, destination: Dict[str, Any], prefix: str, keep_vars: bool):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "dtype"] = self.dtype
        destination[prefix + "_packed_weight"] = self._weight()

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
        self.dtype = state_dict.pop(prefix + "dtype")
        self.set_weight(state_dict.pop(prefix + "_packed_weight"))
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, False, missing_keys, unexpected_keys, error_msgs
        )

    def __repr__(self) -> str:
        return self._weight().__repr__()


def _quantize_rows(weight: Tensor, observer: nn.Module, who: str):
    """The float weight quantized row-wise with a float_qparams weight observer (run here)."""
    if observer.qscheme != torch.per_channel_affine_float_qparams:
        raise ValueError(
            f"{who}: embedding quantization needs a per_channel_affine_float_qparams weight "
            f"observer (float_qparams_weight_only_qconfig), got qscheme {observer.qscheme}"
        )
    dtype = _table_dtype(observer.dtype, f"{who}: weight observer", ValueError)
    w = weight.detach().float()
    observer(w)
    scale, zp = observer.calculate_qparams()
    return torch.quantize_per_channel(w, scale.float(), zp.float(), 0, dtype)


def _float_weight(cls: type, mod: nn.Module, float_type: type):
    """(weight observer, quantized weight) for ``cls.from_float(mod)``; mod must be ``float_type``."""
    who = f"torch_qplugin.nn.quantized.{cls.__name__}"
    if type(mod) is not float_type:
        raise TypeError(
            f"{who}.from_float: module should be a torch.nn.{float_type.__name__}, got {type(mod).__name__}"
        )
    obs = _weight_only_observer(mod, who)
    return obs, _quantize_rows(mod.weight, obs, who)


class Embedding(nn.Module):
    """Quantized embedding lookup (qplugin::embedding_byte / embedding_4bit): torch.nn.Embedding's
    interface; output rows are fma(scale, code, bias) in float32."""

    _version = 1

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        padding_idx: Optional[int] = None,
        max_norm: Optional[float] = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
        _weight: Optional[Tensor] = None,
        dtype: torch.dtype = torch.uint8,
    ) -> None:
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        dtype = _table_dtype(dtype, "torch_qplugin quantized embedding")
        self.dtype = dtype
        if _weight is None:
            qweight = _empty_rows(num_embeddings, embedding_dim, dtype)
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise ValueError(
                    f"torch_qplugin.nn.quantized.{type(self).__name__}: _weight should have shape "
                    f"{[num_embeddings, embedding_dim]}, got {list(_weight.shape)}"
                )
            qweight = _weight
        self._packed_params = EmbeddingPackedParams(num_embeddings, embedding_dim, dtype)
        self._packed_params.set_weight(qweight)

    def forward(self, indices: Tensor) -> Tensor:
        if self.dtype == torch.quint4x2:
            return torch.ops.qplugin.embedding_4bit(self._packed_params._packed_weight, indices)
        return torch.ops.qplugin.embedding_byte(self._packed_params._packed_weight, indices)

    def _get_name(self):
        return "QuantizedEmbedding"

    def __repr__(self) -> str:
        return _hide_packed_params_repr(self, EmbeddingPackedParams)

    def extra_repr(self) -> str:
        return (
            f"num_embeddings={self.num_embeddings}, embedding_dim={self.embedding_dim}, "
            f"dtype={self._packed_params.dtype}, qscheme={self.weight().qscheme()}"
        )

    def set_weight(self, w: Tensor) -> None:
        self._packed_params.set_weight(w)

    def weight(self) -> Tensor:
        return self._packed_params._weight()

    @classmethod
    def from_float(cls, mod: nn.Module, use_precomputed_fake_quant: bool = False) -> "Embedding":
        obs, qweight = _float_weight(cls, mod, nn.Embedding)
        q = cls(mod.num_embeddings, mod.embedding_dim, dtype=obs.dtype)
        q.set_weight(qweight)
        return q

    @classmethod
    def from_reference(cls, ref_embedding: nn.Module) -> "Embedding":
        return cls(
            ref_embedding.num_embeddings,
            ref_embedding.embedding_dim,
            ref_embedding.padding_idx,
            ref_embedding.max_norm,
            ref_embedding.norm_type,
            ref_embedding.scale_grad_by_freq,
            ref_embedding.sparse,
            ref_embedding.get_quantized_weight(),
            ref_embedding.weight_dtype,
        )


class EmbeddingBag(Embedding):
    """Quantized embedding bag (qplugin::embedding_bag_byte / embedding_bag_4bit): torch.nn.EmbeddingBag's
    interface, modes 'sum', 'mean' and 'max' (torch's quantized EmbeddingBag always sums, whatever
    its mode), per_sample_weights with 'sum', pruned weights through compressed_indices_mapping."""

    _version = 1

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        max_norm: Optional[float] = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        mode: str = "sum",
        sparse: bool = False,
        _weight: Optional[Tensor] = None,
        include_last_offset: bool = False,
        dtype: torch.dtype = torch.uint8,
    ) -> None:
        super().__init__(num_embeddings, embedding_dim, _weight=_weight, dtype=dtype)
        if mode not in _MODES:
            raise ValueError(
                f"torch_qplugin.nn.quantized.EmbeddingBag: mode should be 'sum', 'mean' or 'max', got '{mode}'"
            )
        self.mode = mode
        self._mode = _MODES[mode]
        self.pruned_weights = False
        self.include_last_offset = include_last_offset

    def forward(
        self,
        indices: Tensor,
        offsets: Optional[Tensor] = None,
        per_sample_weights: Optional[Tensor] = None,
        compressed_indices_mapping: Optional[Tensor] = None,
    ) -> Tensor:
        if self.dtype == torch.quint4x2:
            return torch.ops.qplugin.embedding_bag_4bit(
                self._packed_params._packed_weight,
                indices,
                offsets,
                False,
                self._mode,
                self.pruned_weights,
                per_sample_weights,
                compressed_indices_mapping,
                self.include_last_offset,
            )
        return torch.ops.qplugin.embedding_bag_byte(
            self._packed_params._packed_weight,
            indices,
            offsets,
            False,
            self._mode,
            self.pruned_weights,
            per_sample_weights,
            compressed_indices_mapping,
            self.include_last_offset,
        )

    def _get_name(self):
        return "QuantizedEmbeddingBag"

    @classmethod
    def from_float(cls, mod: nn.Module, use_precomputed_fake_quant: bool = False) -> "EmbeddingBag":
        obs, qweight = _float_weight(cls, mod, nn.EmbeddingBag)
        q = cls(
            mod.num_embeddings,
            mod.embedding_dim,
            max_norm=mod.max_norm,
            norm_type=mod.norm_type,
            scale_grad_by_freq=mod.scale_grad_by_freq,
            mode=mod.mode,
            sparse=mod.sparse,
            include_last_offset=mod.include_last_offset,
            dtype=obs.dtype,
        )
        q.set_weight(qweight)
        return q

    @classmethod
    def from_reference(cls, ref_embedding_bag: nn.Module) -> "EmbeddingBag":
        return cls(
            ref_embedding_bag.num_embeddings,
            ref_embedding_bag.embedding_dim,
            ref_embedding_bag.max_norm,
            ref_embedding_bag.norm_type,
            ref_embedding_bag.scale_grad_by_freq,
            ref_embedding_bag.mode,
            ref_embedding_bag.sparse,
            ref_embedding_bag.get_quantized_weight(),
            ref_embedding_bag.include_last_offset,
            ref_embedding_bag.weight_dtype,
        )

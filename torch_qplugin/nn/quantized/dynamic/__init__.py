"""torch_qplugin.nn.quantized.dynamic: float in, float out; qint8 weights; activations quantized
per call (qplugin::linear_dynamic)."""

from .modules import GRU, LSTM, GRUCell, Linear, LSTMCell, RNNCell

__all__ = ["Linear", "LSTM", "GRU", "LSTMCell", "GRUCell", "RNNCell"]

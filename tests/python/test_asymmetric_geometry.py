"""Every pool and convolution path with asymmetric stride and padding,
(1, 0) included, compiled for both targets and run on the C runtime: its bytes
must equal the int8 reference's (so a swapped h/w in the runtime's argument
decoding is caught), and the result must be close to PyTorch float."""
import pytest
import torch
import torch.nn as nn

from test_lowering_int8 import TARGETS, check

CASES = {
    "conv": lambda: nn.Conv2d(3, 8, (3, 2), stride=(2, 1), padding=(1, 0)),
    "conv_1x1_strided": lambda: nn.Conv2d(3, 8, 1, stride=(1, 2)),
    "depthwise": lambda: nn.Conv2d(3, 3, 3, stride=(1, 2), padding=(1, 0), groups=3),
    "depthwise_multiplier": lambda: nn.Conv2d(3, 6, (2, 3), stride=(2, 1), padding=(0, 1),
                                              groups=3),
    "max_pool": lambda: nn.MaxPool2d((3, 2), stride=(1, 2), padding=(1, 0)),
    "max_pool_w": lambda: nn.MaxPool2d((2, 3), stride=(2, 1), padding=(0, 1)),
    "avg_pool_excluding_pad": lambda: nn.AvgPool2d((3, 2), stride=(2, 1), padding=(1, 0),
                                                   count_include_pad=False),
    "avg_pool_including_pad": lambda: nn.AvgPool2d((2, 3), stride=(1, 2), padding=(0, 1)),
    "transpose_conv": lambda: nn.ConvTranspose2d(3, 4, (3, 2), stride=(2, 1), padding=(1, 0)),
}

EXPECT = {"conv": "cortex_m::quantized_conv2d.out",
          "conv_1x1_strided": "cortex_m::quantized_conv2d.out",
          "depthwise": "cortex_m::quantized_depthwise_conv2d.out",
          "depthwise_multiplier": "cortex_m::quantized_depthwise_conv2d.out",
          "max_pool": "cortex_m::quantized_max_pool2d.out",
          "max_pool_w": "cortex_m::quantized_max_pool2d.out",
          "avg_pool_excluding_pad": "cortex_m::quantized_avg_pool2d.out",
          "avg_pool_including_pad": "cortex_m::quantized_avg_pool2d.out",
          "transpose_conv": "cortex_m::quantized_transpose_conv2d.out"}


class Wrapped(nn.Module):
    """The layer inside a model (a bare layer as the root is not captured as one op)."""
    def __init__(self, layer):
        super().__init__()
        self.layer = layer

    def forward(self, x):
        return self.layer(x)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", list(CASES))
def test_asymmetric_stride_and_padding(case, target):
    torch.manual_seed(0)
    check(Wrapped(CASES[case]()), [(1, 3, 9, 7)], [EXPECT[case]], target, n_test=2)

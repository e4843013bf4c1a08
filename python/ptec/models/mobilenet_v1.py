"""MobileNetV1 with width multiplier 0.25 for Visual Wake Words (MLPerf Tiny
VWW shape): input 1x3x96x96, 2 classes."""
import torch.nn as nn

from .common import conv_bn_relu

# (output channels at width 1.0, stride) of the 13 depthwise-separable blocks
_BLOCKS = [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), (512, 1), (512, 1),
           (512, 1), (512, 1), (512, 1), (1024, 2), (1024, 1)]


class MobileNetV1(nn.Module):
    def __init__(self, width: float = 0.25, classes: int = 2):
        super().__init__()
        c = int(32 * width)
        layers = [conv_bn_relu(3, c, 3, stride=2)]
        for out, stride in _BLOCKS:
            o = int(out * width)
            layers.append(conv_bn_relu(c, c, 3, stride=stride, groups=c))
            layers.append(conv_bn_relu(c, o, 1))
            c = o
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.flatten = nn.Flatten()
        self.fc = nn.Linear(c, classes)

    def forward(self, x):
        return self.fc(self.flatten(self.pool(self.features(x))))

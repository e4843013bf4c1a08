"""MobileNetV2 with width multiplier 0.35 (written for ptec; no torchvision):
inverted residual blocks with ReLU6 and linear bottlenecks. Input 1x3x96x96,
2 classes by default (a Visual-Wake-Words-sized head)."""
import torch.nn as nn

from .common import conv_bn_relu, make_divisible

# expansion t, output channels c, repeats n, first stride s
_SETTINGS = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
             (6, 160, 3, 2), (6, 320, 1, 1)]


class InvertedResidual(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int, expand: int):
        super().__init__()
        hidden = cin * expand
        layers = []
        if expand != 1:
            layers.append(conv_bn_relu(cin, hidden, 1, relu6=True))
        layers.append(conv_bn_relu(hidden, hidden, 3, stride=stride, groups=hidden, relu6=True))
        layers += [nn.Conv2d(hidden, cout, 1, bias=False), nn.BatchNorm2d(cout)]
        self.conv = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        return x + self.conv(x) if self.residual else self.conv(x)


class MobileNetV2(nn.Module):
    def __init__(self, width: float = 0.35, classes: int = 2, last_channel: int = 1280):
        super().__init__()
        c = make_divisible(32 * width)
        layers = [conv_bn_relu(3, c, 3, stride=2, relu6=True)]
        for t, ch, n, s in _SETTINGS:
            o = make_divisible(ch * width)
            for i in range(n):
                layers.append(InvertedResidual(c, o, s if i == 0 else 1, t))
                c = o
        last = make_divisible(last_channel * max(1.0, width))
        layers.append(conv_bn_relu(c, last, 1, relu6=True))
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.flatten = nn.Flatten()
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(last, classes))

    def forward(self, x):
        return self.classifier(self.flatten(self.pool(self.features(x))))

"""DS-CNN keyword spotter (MLPerf Tiny KWS shape): input 1x1x49x10 MFCC
frames, 12 classes."""
import torch.nn as nn

from .common import conv_bn_relu


class DSCNN(nn.Module):
    def __init__(self, channels: int = 64, blocks: int = 4, classes: int = 12):
        super().__init__()
        layers = [conv_bn_relu(1, channels, (10, 4), stride=2, padding=(5, 1))]
        for _ in range(blocks):
            layers.append(conv_bn_relu(channels, channels, 3, groups=channels))
            layers.append(conv_bn_relu(channels, channels, 1))
        self.features = nn.Sequential(*layers)
        self.dropout = nn.Dropout(0.4)
        self.pool = nn.AvgPool2d((25, 5))
        self.flatten = nn.Flatten()
        self.fc = nn.Linear(channels, classes)

    def forward(self, x):
        x = self.dropout(self.features(x))
        return self.fc(self.flatten(self.pool(x)))

"""ResNet-8 for CIFAR-10 (MLPerf Tiny image classification shape): input
1x3x32x32, three residual stacks of 16/32/64 filters, 10 classes."""
import torch.nn as nn


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1)
        self.bn1 = nn.BatchNorm2d(cout)
        self.relu1 = nn.ReLU()
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = nn.Conv2d(cin, cout, 1, stride) if (stride != 1 or cin != cout) else None
        self.relu2 = nn.ReLU()

    def forward(self, x):
        y = self.bn2(self.conv2(self.relu1(self.bn1(self.conv1(x)))))
        s = x if self.shortcut is None else self.shortcut(x)
        return self.relu2(y + s)


class ResNet8(nn.Module):
    def __init__(self, classes: int = 10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 1, 1), nn.BatchNorm2d(16), nn.ReLU())
        self.stack1 = BasicBlock(16, 16, 1)
        self.stack2 = BasicBlock(16, 32, 2)
        self.stack3 = BasicBlock(32, 64, 2)
        self.pool = nn.AvgPool2d(8)
        self.flatten = nn.Flatten()
        self.fc = nn.Linear(64, classes)

    def forward(self, x):
        x = self.stack3(self.stack2(self.stack1(self.stem(x))))
        return self.fc(self.flatten(self.pool(x)))

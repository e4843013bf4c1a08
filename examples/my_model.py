"""Bring your own model: the file `tools/ptec compile` reads, walked through
in the README ("Your own model").

    tools/ptec compile examples/my_model.py:make_model --calib 32 -o model.pte

`make_model` returns the nn.Module. ptec reads three more things from it:
  * `input_shape` (or `example_inputs`): the shape it is traced and run with;
  * `calibration_data(n, seed)`: n samples, each a tuple with one tensor per
    input, like the data the model will see. int8 ranges come from them, so
    random noise gives poor accuracy on real inputs; without this method
    ptec falls back to noise and says so in its summary.
  * the module path of every layer (`features.0`, ...), which errors and
    reports use to name what ptec cannot run.
Here: a small classifier of 1x16x16 "spectrograms" (a tone at one of four
heights, plus noise), the shape of a keyword-spotting front end."""
import math

import torch
import torch.nn as nn


class ToneClassifier(nn.Module):
    input_shape = (1, 1, 16, 16)

    def __init__(self, classes: int = 4):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1))
        self.classifier = nn.Linear(16, classes)

    def forward(self, x):
        return self.classifier(torch.flatten(self.features(x), 1))

    @staticmethod
    def calibration_data(n: int, seed: int = 0):
        """n inputs like the real ones: a tone (a bright row band) at one of
        four heights, fading in over time, on low noise."""
        g = torch.Generator().manual_seed(seed)
        samples = []
        for i in range(n):
            row = 2 + 4 * (i % 4)
            x = 0.1 * torch.randn(1, 1, 16, 16, generator=g)
            for t in range(16):
                x[0, 0, row, t] += math.sin(math.pi * (t + 1) / 17)
            samples.append((x,))
        return samples


def make_model():
    torch.manual_seed(0)        # the same weights every run (a trained model would load them)
    return ToneClassifier().eval()

"""The models the nms tests compile (test_nms_kernel, test_torchvision_nms,
test_batched_nms_large, test_review20_fixes, test_nms_threshold,
test_review21_fixes): torchvision's nms and batched_nms at a fixed
threshold and at one an int8 layer computes; with model_checks.run_feed,
which those tests import from here. torchvision is imported when a model
runs, so a test file decides itself whether it may skip without it."""
import torch
import torch.nn as nn

from model_checks import run_feed

__all__ = ["run_feed", "Nms", "BatchedNms", "ComputedThreshold"]


class Nms(nn.Module):
    def __init__(self, t):
        super().__init__()
        self.t = t

    def forward(self, boxes, scores):
        import torchvision.ops as tv
        return tv.nms(boxes, scores, self.t)


class BatchedNms(nn.Module):
    def __init__(self, t):
        super().__init__()
        self.t = t

    def forward(self, boxes, scores, idxs):
        import torchvision.ops as tv
        return tv.batched_nms(boxes, scores, idxs, self.t)


class ComputedThreshold(nn.Module):
    """nms at a threshold computed by an int8 layer (a linear, a sigmoid, a mean) from a feature input."""
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc = nn.Linear(8, 4)

    def forward(self, boxes, scores, feat):
        import torchvision.ops as tv
        t = torch.sigmoid(self.fc(feat)).mean()
        return tv.nms(boxes, scores, t), t

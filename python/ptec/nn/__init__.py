"""PyTorch layers that ptec compiles to one kernel each (ptec.nn.SVDF)."""
from .svdf import SVDF

__all__ = ["SVDF"]

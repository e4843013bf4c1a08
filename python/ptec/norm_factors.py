"""The functions of a p-norm capture_norms computes as LUTs, entries of
ir.ELEMENTWISE: |x|^p (one LUT rather than abs then pow), and the factors
F.normalize and torch.renorm multiply by, each a function of s, the sum of
|x|^p (or the maximum of |x| for p = inf, attrs p = 1), so the root, the
clamp and the quotient are one table."""
from __future__ import annotations

import torch


def _norm(s, a):
    return torch.pow(torch.clamp(s, min=0.0), 1.0 / a["p"])


FUNCTIONS = {
    "abs_pow": lambda x, a: torch.pow(torch.abs(x), a["p"]),
    # F.normalize: 1 / max(||x||_p, eps)
    "lp_inverse_norm": lambda s, a: 1.0 / torch.clamp(_norm(s, a), min=a["eps"]),
    # torch.renorm: maxnorm / (||x||_p + 1e-7) where the norm exceeds maxnorm, else 1 (torch's own formula)
    "renorm_factor": lambda s, a: torch.where(_norm(s, a) > a["maxnorm"], a["maxnorm"] / (_norm(s, a) + 1e-7),
                                              torch.ones_like(s)),
}

"""A model the torch.istft tests share (test_istft_forms,
test_torchvision_ops): a spectrum made by a layer (a mask or a vocoder
head: a Linear of 6 features into `rows` complex rows, its weights fixed by
`seed`), view_as_complex, then torch.istft with a constant hann window."""
import torch
import torch.nn as nn


class SpectrumOfLayer(nn.Module):
    def __init__(self, rows, n_fft, hop, length, seed=0):
        super().__init__()
        torch.manual_seed(seed)
        self.l = nn.Linear(6, rows * 2)
        self.rows, self.n_fft, self.hop, self.length = rows, n_fft, hop, length

    def forward(self, z):
        r = self.l(z).view(1, -1, self.rows, 2).transpose(1, 2).contiguous()
        return torch.istft(torch.view_as_complex(r), self.n_fft, self.hop, window=torch.hann_window(self.n_fft),
                           length=self.length)

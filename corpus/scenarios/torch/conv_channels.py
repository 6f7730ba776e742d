"""An RGBA image goes into a convolution built for RGB input."""
import torch

torch.manual_seed(0)
conv = torch.nn.Conv2d(3, 16, kernel_size=3, padding=1)
img = torch.randn(1, 4, 64, 64)
out = conv(img)

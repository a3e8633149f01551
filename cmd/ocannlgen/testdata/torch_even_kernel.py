# Writes torch_even_kernel.json, the PyTorch twin of
# TestEvenKernelPaddingPyTorchTwin (docs/language.md, "Even kernels"):
#   /usr/bin/python3 torch_even_kernel.py > torch_even_kernel.json
# x is a 5x6 image, w a 2x4 kernel (both window extents even). "same" is
# PyTorch's padding='same'; "left" pads the input explicitly as ocannlgen's
# padded convolution does (seed 002: a window of k cells reads k/2 cells
# before the output position and k/2-1 after), then convolves with
# padding=0. "w_odd" is w grown to an odd 3x5 kernel by a leading row and
# column of zeros: its padding='same' output ("same_odd") is w's, and so
# is ocannlgen's padded convolution with it.
import json

import torch
import torch.nn.functional as F

x = torch.arange(30, dtype=torch.float64).reshape(1, 1, 5, 6)
w = torch.tensor([[1, -2, 3, 5], [7, 11, -13, 17]], dtype=torch.float64).reshape(1, 1, 2, 4)
same = F.conv2d(x, w, padding="same")
# F.pad's order: (left, right) of the last axis, then (top, bottom).
left = F.conv2d(F.pad(x, (2, 1, 1, 0)), w)
w_odd = F.pad(w, (1, 0, 1, 0))
same_odd = F.conv2d(x, w_odd, padding="same")
print(json.dumps({
    "torch": torch.__version__,
    "x": x.flatten().tolist(),
    "w": w.flatten().tolist(),
    "same": same.flatten().tolist(),
    "left": left.flatten().tolist(),
    "w_odd": w_odd.flatten().tolist(),
    "same_odd": same_odd.flatten().tolist(),
}))

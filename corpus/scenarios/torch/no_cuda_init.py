"""Training script that moves its model to the GPU: this torch is the CPU build."""
import torch

print("torch", torch.__version__, "cuda available:", torch.cuda.is_available())
model = torch.nn.Linear(16, 16)
model = model.to("cuda")

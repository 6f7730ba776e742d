"""Token ids computed in float are used as an index."""
import torch

table = torch.randn(100, 16)
ids = torch.tensor([1.0, 5.0, 7.0])
rows = torch.index_select(table, 0, ids)

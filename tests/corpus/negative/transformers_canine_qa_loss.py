# Mirrors: huggingface/transformers, CanineForQuestionAnswering (the installed package's
#   modeling_canine.py: the head clamps start_positions/end_positions in place before its
#   cross-entropy) trained as its documentation shows: one model, one forward per batch of
#   labels, then backward.
# Safe in-place ops: the labels are clamped before the loss saves them, and nothing writes
#   into them again before backward; the in-place writes inside the installed model's
#   forward (`embeddings += position_embeddings`) go into tensors no saver kept.
import torch
from transformers import CanineConfig, CanineForQuestionAnswering

torch.manual_seed(0)
config = CanineConfig(hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                      intermediate_size=32, downsampling_rate=2, num_hash_buckets=64,
                      num_hash_functions=2, local_transformer_stride=4)
model = CanineForQuestionAnswering(config)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

for step in range(2):
    input_ids = torch.randint(0, 200, (2, 8))
    outputs = model(input_ids=input_ids, start_positions=torch.tensor([3, 99]),
                    end_positions=torch.tensor([5, 99]))
    optimizer.zero_grad()
    outputs.loss.backward()
    optimizer.step()
print("loss", outputs.loss.item())
